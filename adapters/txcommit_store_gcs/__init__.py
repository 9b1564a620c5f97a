"""The ``gcs`` store: Google's Cloud Storage connector (shaded, the same jar for every Spark
line) and the txcommit-gcs adapter jar."""

from __future__ import annotations

from importlib.resources import files
from typing import TYPE_CHECKING

from txcommit.stores import Artifact, Level2, StoreDescriptor

if TYPE_CHECKING:
    from txcommit.adapters.base import Store

#: Google's Cloud Storage connector, shaded (its Google libraries relocated, so they cannot clash
#: with Spark's guava or jackson): one 40 MB jar for every line. 4.0.4 is the newest whose shaded
#: jar Maven Central serves; Hadoop 3.5's own hadoop-gcp cannot be pointed at an emulator.
CONNECTOR = Artifact("com.google.cloud.bigdataoss", "gcs-connector", "4.0.4", "shaded")
#: The connector serves gs:// for the gcs adapter.
GCS_CONNECTOR_CONFS = {
    "spark.hadoop.fs.gs.impl": "com.google.cloud.hadoop.fs.gcs.GoogleHadoopFileSystem",
    "spark.hadoop.fs.AbstractFileSystem.gs.impl": "com.google.cloud.hadoop.fs.gcs.GoogleHadoopFS",
    # Hadoop 3.5's core-default.xml says 64m (for its own GCS module); the connector reads the
    # key as a plain number and fails to start on "64m" (reported upstream as
    # GoogleCloudDataproc/hadoop-connectors#1730).
    "spark.hadoop.fs.gs.block.size": "67108864",
}


def gcs_emulator_confs(endpoint: str) -> dict[str, str]:
    """The connector's confs for a GCS JSON API emulator at ``endpoint`` (no credentials)."""
    return {
        "spark.hadoop.fs.gs.storage.root.url": endpoint.rstrip("/") + "/",
        "spark.hadoop.fs.gs.auth.type": "UNAUTHENTICATED",
        "spark.hadoop.fs.gs.project.id": "txcommit-local",
    }


def level2_target(store: Store, endpoint: str | None, region: str | None) -> Level2:
    """An emulator (the store's endpoint or STORAGE_EMULATOR_HOST) without credentials;
    Google Cloud itself through the cluster's own fs.gs.* settings."""
    endpoint = endpoint or getattr(store, "endpoint", None)
    return store.root_url, gcs_emulator_confs(endpoint) if endpoint else {}


GCS = StoreDescriptor(
    name="gcs",
    summary="adds Google's Cloud Storage connector; with --local, a fake-gcs-server with bucket "
    "'txcommit'",
    declaration=files(__name__) / "gcs.json",
    python_store="txcommit_store_gcs.store:GcsStore",
    adapter_jar="txcommit-gcs.jar",
    connectors=lambda line: (CONNECTOR,),
    connectors_follow_hadoop=False,
    server_confs=GCS_CONNECTOR_CONFS,
    emulator="txcommit_store_gcs.devkit.emulator:LOCAL",
    testkit="txcommit_store_gcs.devkit.testkit:KIT",
    options={"endpoint": ("gs",)},
    level2_target=level2_target,
)

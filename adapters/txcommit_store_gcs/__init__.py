"""The ``gcs`` store: Google's Cloud Storage connector (shaded, the same jar for every Spark
line) and the txcommit-gcs adapter jar; a fake-gcs-server runs for ``txcommit server --store
gcs`` unless ``--no-local-gcs``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from txcommit._maven import GCS_ARTIFACTS, Artifact
from txcommit.adapters.plugin import Level2, LocalEmulator, StorePlugin

if TYPE_CHECKING:
    from txcommit.adapters.base import Store
    from txcommit_store_gcs.emulator import FakeGcs

#: Google's Cloud Storage connector (gcs-connector, shaded) serves gs:// for the gcs adapter.
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


def start_local_gcs(bucket: str) -> tuple[FakeGcs, dict[str, str]]:
    """Start fake-gcs-server on loopback with ``bucket``; return it and the connector's confs."""
    from txcommit_store_gcs.emulator import FakeGcs

    gcs = FakeGcs(bucket).start()
    return gcs, gcs_emulator_confs(gcs.endpoint)


def _standalone(bucket: str, port: int | None) -> FakeGcs:
    from txcommit_store_gcs.emulator import FakeGcs

    return FakeGcs(bucket, port)


def _banner(gcs: Any, config: Any) -> str:
    return (
        f"local GCS (fake-gcs-server) at {gcs.endpoint}, bucket gs://{config.local_gcs_bucket}/ "
        "(no credentials)"
    )


def _connectors(line: str) -> tuple[Artifact, ...]:
    return GCS_ARTIFACTS


def level2_target(store: Store, endpoint: str | None, region: str | None) -> Level2:
    """An emulator (the store's endpoint or STORAGE_EMULATOR_HOST) without credentials;
    Google Cloud itself through the cluster's own fs.gs.* settings."""
    endpoint = endpoint or getattr(store, "endpoint", None)
    return store.root_url, gcs_emulator_confs(endpoint) if endpoint else {}


GCS = StorePlugin(
    name="gcs",
    summary="adds Google's Cloud Storage connector and, unless --no-local-gcs, a local "
    "fake-gcs-server with bucket 'txcommit'",
    python_store="txcommit_store_gcs.store:GcsStore",
    adapter_jar="txcommit-gcs.jar",
    connectors=_connectors,
    connectors_follow_hadoop=False,
    server_confs=GCS_CONNECTOR_CONFS,
    emulator=LocalEmulator(
        option="local_gcs",
        help="with --store gcs: reach Google Cloud Storage with your fs.gs.* confs instead",
        start=lambda config: start_local_gcs(config.local_gcs_bucket),
        banner=_banner,
        standalone=_standalone,
    ),
    options={"endpoint": ("gs",)},
    level2_target=level2_target,
)

#: The entry points of the txcommit.adapters group (store name -> descriptor above), read
#: without importing this module by the build (setup.py) and by a checkout (builtin_stores).
ENTRY_POINTS = {"gcs": "GCS"}

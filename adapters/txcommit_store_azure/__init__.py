"""The ``azure`` store: Hadoop's ABFS connector (hadoop-azure of the Spark line's Hadoop) and
the txcommit-azure adapter jar."""

from __future__ import annotations

from importlib.resources import files
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from txcommit._maven import HADOOP_BY_LINE
from txcommit.stores import Artifact, Level2, StoreDescriptor

if TYPE_CHECKING:
    from txcommit.adapters.base import Store

#: Spark's default redaction pattern plus ABFS's account keys (fs.azure.account.key.<host>),
#: which Spark's default would show in its UI and logs.
AZURE_REDACTION_REGEX = "(?i)secret|password|token|access[.]?key|account[.]key"
#: Azurite's well-known development account (public, documented by Microsoft; not a secret),
#: which the Python store uses for an emulator endpoint.
EMULATOR_ACCOUNT = "devstoreaccount1"
EMULATOR_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)


def connectors(line: str) -> tuple[Artifact, ...]:
    """Hadoop's ABFS connector of the line's Hadoop; HdrHistogram is the one dependency of
    hadoop-azure that pyspark's jars lack."""
    return (
        Artifact("org.apache.hadoop", "hadoop-azure", HADOOP_BY_LINE[line]),
        Artifact("org.hdrhistogram", "HdrHistogram", "2.1.12"),
    )


def abfs_confs(host_port: str, *, prefix: str = "spark.hadoop.") -> dict[str, str]:
    """Hadoop ABFS settings that reach Azurite at ``host_port`` (Azurite's Blob endpoint over
    plain HTTP, its well-known development account and key): the settings docs/adapters.md
    lists as checked with hadoop-azure 3.5.0."""
    confs = {
        "fs.azure.abfs.endpoint": host_port,
        "fs.azure.always.use.https": "false",
        # ABFS's default HTTP client fails on plain http.
        "fs.azure.networking.library": "JDK_HTTP_URL_CONNECTION",
        "fs.azure.account.auth.type": "SharedKey",
        f"fs.azure.account.key.{EMULATOR_ACCOUNT}.dfs.core.windows.net": EMULATOR_KEY,
        "fs.azure.account.hns.enabled": "false",
        # ABFS 3.5 sends client metrics to the account at JVM exit and retries for minutes
        # when the emulator is already gone.
        "fs.azure.metrics.collection.enabled": "false",
    }
    return {prefix + k: v for k, v in confs.items()}


def level2_target(store: Store, endpoint: str | None, region: str | None) -> Level2:
    """Where Spark reaches an Azure store through ABFS, and the ABFS settings for it: the
    store's endpoint and its shared key (ABFS reads the key from a conf only, so the server's
    command line carries it; its log shows the command redacted)."""
    from txcommit_store_azure.store import AzureBlobStore

    assert isinstance(store, AzureBlobStore)
    confs: dict[str, str] = {}
    scheme = "abfss"
    if store.endpoint:
        parts = urlsplit(store.endpoint)
        confs.update(abfs_confs(parts.netloc))
        if parts.scheme == "http":
            scheme = "abfs"
        else:
            confs["spark.hadoop.fs.azure.always.use.https"] = "true"
    host = f"{store.account}.dfs.core.windows.net"
    key = store.account_key()
    if key is not None:
        confs[f"spark.hadoop.fs.azure.account.key.{host}"] = key
        confs["spark.hadoop.fs.azure.account.auth.type"] = "SharedKey"
    root = f"{scheme}://{store.container}@{host}" + (f"/{store.prefix}" if store.prefix else "")
    return root, confs


AZURE = StoreDescriptor(
    name="azure",
    summary="adds Hadoop's ABFS connector; with --local, an Azurite (Azure Blob emulator) with "
    "container 'txcommit'",
    declaration=files(__name__) / "azure.json",
    python_store="txcommit_store_azure.store:AzureBlobStore",
    adapter_jar="txcommit-azure.jar",
    connectors=connectors,
    server_confs={"spark.redaction.regex": AZURE_REDACTION_REGEX},
    emulator="txcommit_store_azure.devkit.emulator:LOCAL",
    testkit="txcommit_store_azure.devkit.testkit:KIT",
    options={"endpoint": ("az", "abfs", "abfss")},
    level2_target=level2_target,
)

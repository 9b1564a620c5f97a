"""The ``azure`` store: Hadoop's ABFS connector (hadoop-azure of the Spark line's Hadoop) and
the txcommit-azure adapter jar; an Azurite runs for ``txcommit server --store azure`` unless
``--no-local-azure``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from txcommit._maven import azure_artifacts
from txcommit.adapters.plugin import Emulator, Level2, LocalEmulator, StorePlugin

if TYPE_CHECKING:
    from txcommit.adapters.base import Store

#: Spark's default redaction pattern plus ABFS's account keys (fs.azure.account.key.<host>),
#: which Spark's default would show in its UI and logs.
AZURE_REDACTION_REGEX = "(?i)secret|password|token|access[.]?key|account[.]key"


def start_local_azure(config: Any) -> tuple[Emulator, dict[str, str]]:
    """Start an Azurite with the config's container; return it and the ABFS confs."""
    from txcommit_store_azure.emulator import Azurite

    azurite = Azurite(config.local_azure_container).start()
    return azurite, azurite.abfs_confs()


def _standalone(container: str, port: int | None) -> Emulator:
    from txcommit_store_azure.emulator import Azurite

    return Azurite(container, port)


def _banner(azurite: Any, config: Any) -> str:
    return (
        f"local Azure Blob (Azurite) at {azurite.endpoint}, container {azurite.abfs_url} "
        "(Azurite's public development key)"
    )


def level2_target(store: Store, endpoint: str | None, region: str | None) -> Level2:
    """Where Spark reaches an Azure store through ABFS, and the ABFS settings for it: the
    store's endpoint (an emulator's ``http://host:port/<account>``) and its shared key.
    ABFS reads the key from a conf only, so the server's command line carries it (its log
    shows the command redacted)."""
    from txcommit_store_azure.store import AzureBlobStore

    assert isinstance(store, AzureBlobStore)
    confs: dict[str, str] = {}
    scheme = "abfss"
    if store.endpoint:
        from txcommit_store_azure.emulator import abfs_confs

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


AZURE = StorePlugin(
    name="azure",
    summary="adds Hadoop's ABFS connector and, unless --no-local-azure, an Azurite (Azure "
    "Blob emulator) with container 'txcommit'",
    python_store="txcommit_store_azure.store:AzureBlobStore",
    adapter_jar="txcommit-azure.jar",
    connectors=azure_artifacts,
    server_confs={"spark.redaction.regex": AZURE_REDACTION_REGEX},
    emulator=LocalEmulator(
        option="local_azure",
        help="with --store azure: reach a real storage account with your fs.azure.* confs",
        start=start_local_azure,
        banner=_banner,
        standalone=_standalone,
    ),
    options={"endpoint": ("az", "abfs", "abfss")},
    level2_target=level2_target,
)

#: The entry points of the txcommit.adapters group (store name -> descriptor above), read
#: without importing this module by the build (setup.py) and by a checkout (builtin_stores).
ENTRY_POINTS = {"azure": "AZURE"}

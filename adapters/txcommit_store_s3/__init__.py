"""The ``s3`` and ``s3-multipart`` stores: Hadoop's S3A connector of the Spark line's Hadoop
(with its AWS SDK) on the server's classpath, the txcommit-s3 adapter jar (both adapters), the
adapter made the default for s3a:// and s3://; a moto S3 endpoint runs for ``txcommit server
--store s3*`` unless ``--no-local-s3``."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from txcommit._maven import s3_artifacts
from txcommit._names import adapter_conf
from txcommit.adapters.plugin import Level2, LocalEmulator, StorePlugin
from txcommit.errors import ServerStartError

if TYPE_CHECKING:
    from txcommit.adapters.base import Store
    from txcommit.testing.local_s3 import LocalS3

ADAPTER_JAR = "txcommit-s3.jar"


def start_local_s3(bucket: str) -> tuple[LocalS3, dict[str, str]]:
    """Start a moto S3 endpoint on loopback with ``bucket``; return it and the S3A confs."""
    try:
        from txcommit.testing.local_s3 import LocalS3, s3a_confs
    except ImportError as e:  # pragma: no cover - depends on the install
        raise ServerStartError(
            "a local S3 endpoint needs moto: pip install 'txcommit[server,s3-local]'"
        ) from e
    s3 = LocalS3().start()
    s3.create_bucket(bucket)
    return s3, s3a_confs(s3.endpoint)


def _banner(s3: Any, config: Any) -> str:
    return (
        f"local S3 (moto) at {s3.endpoint}, bucket s3a://{config.local_s3_bucket}/ "
        "(any credentials)"
    )


def level2_target(store: Store, endpoint: str | None, region: str | None) -> Level2:
    """S3A on the store's own endpoint and region (from its arguments or AWS_ENDPOINT_URL and
    AWS_REGION); s3:// roots as S3A names them."""
    from txcommit.testing.local_s3 import DEFAULT_REGION, s3a_confs

    endpoint = endpoint or getattr(store, "endpoint", None)
    region = region or getattr(store, "region", None) or os.environ.get("AWS_REGION")
    root = store.root_url
    if root.startswith("s3://"):
        root = "s3a://" + root[len("s3://") :]
    return root, s3a_confs(endpoint, region or DEFAULT_REGION, local=False)


def _s3(name: str, python_store: str, primitive: str) -> StorePlugin:
    return StorePlugin(
        name=name,
        summary=f"{primitive}; adds Hadoop's S3A connector (fetched once into "
        "~/.cache/txcommit/jars) and, unless --no-local-s3, a local S3 endpoint (moto) with "
        "bucket 'txcommit'",
        python_store=python_store,
        adapter_jar=ADAPTER_JAR,
        connectors=s3_artifacts,
        server_confs={
            "spark.hadoop.fs.s3.impl": "org.apache.hadoop.fs.s3a.S3AFileSystem",
            "spark.hadoop.fs.s3a.committer.magic.enabled": "true",
            adapter_conf("s3a"): name,
            adapter_conf("s3"): name,
        },
        emulator=LocalEmulator(
            option="local_s3",
            help="with --store s3*: reach a real bucket with your fs.s3a.* confs instead",
            start=lambda config: start_local_s3(config.local_s3_bucket),
            banner=_banner,
        ),
        options={"endpoint": ("s3", "s3a"), "region": ("s3", "s3a")},
        level2_target=level2_target,
    )


S3 = _s3("s3", "txcommit_store_s3.store:S3Store", "conditional put")
S3_MULTIPART = _s3("s3-multipart", "txcommit_store_s3.store:S3MultipartStore", "multipart complete")

#: The entry points of the txcommit.adapters group (store name -> descriptor above), read
#: without importing this module by the build (setup.py) and by a checkout (builtin_stores).
ENTRY_POINTS = {"s3": "S3", "s3-multipart": "S3_MULTIPART"}

"""The ``s3`` and ``s3-multipart`` stores: Hadoop's S3A connector of the Spark line's Hadoop
(with its AWS SDK) on the server's classpath and the txcommit-s3 adapter jar (both adapters),
the adapter made the default for s3a:// and s3://."""

from __future__ import annotations

import os
from importlib.resources import files
from typing import TYPE_CHECKING

from txcommit._maven import HADOOP_BY_LINE
from txcommit._names import adapter_conf
from txcommit.stores import Artifact, Level2, StoreDescriptor

if TYPE_CHECKING:
    from txcommit.adapters.base import Store

ADAPTER_JAR = "txcommit-s3.jar"
DEFAULT_REGION = "us-east-1"
#: Credentials the local emulator (moto) accepts; they open nothing outside its process.
DUMMY_KEY = "txcommit-local"
DUMMY_SECRET = "txcommit-local-secret"
#: The AWS SDK bundle (and, from 3.4.2, Amazon's analytics accelerator, a compile dependency of
#: hadoop-aws) that each Hadoop release's hadoop-project POM pins: S3A breaks in ways hard to
#: diagnose with another SDK.
AWS_SDK_BY_HADOOP = {
    "3.4.1": ("2.24.6", ""),
    "3.4.2": ("2.29.52", "1.2.1"),
    "3.5.0": ("2.35.4", "1.3.1"),
}


def connectors(line: str) -> tuple[Artifact, ...]:
    """Hadoop's S3A connector of the line's Hadoop and the AWS SDK it was built with."""
    hadoop = HADOOP_BY_LINE[line]
    sdk, accelerator = AWS_SDK_BY_HADOOP[hadoop]
    found = [
        Artifact("org.apache.hadoop", "hadoop-aws", hadoop),
        Artifact("software.amazon.awssdk", "bundle", sdk),
    ]
    if accelerator:
        found.append(
            Artifact(
                "software.amazon.s3.analyticsaccelerator", "analyticsaccelerator-s3", accelerator
            )
        )
    return tuple(found)


def s3a_confs(
    endpoint: str | None, region: str = DEFAULT_REGION, *, local: bool = True
) -> dict[str, str]:
    """Spark confs for Hadoop S3A on an S3-compatible ``endpoint`` (None: AWS itself, by
    ``region``): path-style, plain HTTP unless the endpoint is https.

    ``local`` (a LocalS3 endpoint): its dummy keys too, and s3:// served by S3A as well, as
    EMR-style paths are common in user code. Otherwise no credentials are passed as confs (they
    would show on the command line): S3A's default chain reads the AWS_* environment variables
    the server inherits.
    """
    confs = {"fs.s3a.endpoint.region": region}
    if endpoint:
        confs.update(
            {
                "fs.s3a.endpoint": endpoint,
                "fs.s3a.path.style.access": "true",
                "fs.s3a.connection.ssl.enabled": str(endpoint.startswith("https:")).lower(),
            }
        )
    if local:
        confs.update(
            {
                "fs.s3a.access.key": DUMMY_KEY,
                "fs.s3a.secret.key": DUMMY_SECRET,
                "fs.s3a.aws.credentials.provider": (
                    "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"
                ),
                "fs.s3.impl": "org.apache.hadoop.fs.s3a.S3AFileSystem",
            }
        )
    return {f"spark.hadoop.{k}": v for k, v in confs.items()}


def level2_target(store: Store, endpoint: str | None, region: str | None) -> Level2:
    """S3A on the store's own endpoint and region (from its arguments or AWS_ENDPOINT_URL and
    AWS_REGION); s3:// roots as S3A names them."""
    endpoint = endpoint or getattr(store, "endpoint", None)
    region = region or getattr(store, "region", None) or os.environ.get("AWS_REGION")
    root = store.root_url
    if root.startswith("s3://"):
        root = "s3a://" + root[len("s3://") :]
    return root, s3a_confs(endpoint, region or DEFAULT_REGION, local=False)


def _s3(name: str, python_store: str, primitive: str) -> StoreDescriptor:
    return StoreDescriptor(
        name=name,
        summary=f"{primitive}; adds Hadoop's S3A connector (fetched once into "
        "~/.cache/txcommit/jars); with --local, an S3 endpoint (moto) with bucket 'txcommit'",
        declaration=files(__name__) / f"{name}.json",
        python_store=python_store,
        adapter_jar=ADAPTER_JAR,
        connectors=connectors,
        server_confs={
            "spark.hadoop.fs.s3.impl": "org.apache.hadoop.fs.s3a.S3AFileSystem",
            "spark.hadoop.fs.s3a.committer.magic.enabled": "true",
            adapter_conf("s3a"): name,
            adapter_conf("s3"): name,
        },
        emulator="txcommit_store_s3.devkit.emulator:LOCAL",
        testkit=f"txcommit_store_s3.devkit.testkit:{name.upper().replace('-', '_')}",
        options={"endpoint": ("s3", "s3a"), "region": ("s3", "s3a")},
        level2_target=level2_target,
    )


S3 = _s3("s3", "txcommit_store_s3.store:S3Store", "conditional put")
S3_MULTIPART = _s3("s3-multipart", "txcommit_store_s3.store:S3MultipartStore", "multipart complete")

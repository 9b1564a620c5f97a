"""The commit protocols the benchmark compares, as per-session confs and write options.

Each measured write runs in a fresh Spark Connect session of one server, so a protocol is
exactly the confs a user would set from a JVM-less client (plus Hadoop options on the write).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from txcommit._names import (
    COMMIT_PROTOCOL_CONF,
    FLOOR_CLASS,
    PARQUET_COMMITTER_CONF,
    PROTOCOL_CLASS,
    READ_FILTER_CONF,
    SPARK_DEFAULT_PROTOCOL_CLASS,
    adapter_conf,
)
from txcommit.bench.jvm import BINDING_PARQUET_COMMITTER, PATH_OUTPUT_PROTOCOL

ALGORITHM_VERSION = "mapreduce.fileoutputcommitter.algorithm.version"
PARQUET_COMMITTER = PARQUET_COMMITTER_CONF
STORES = ("local", "s3")
#: Spark's and S3A's defaults of the keys the protocols below change.
SESSION_DEFAULTS = {
    PARQUET_COMMITTER: "org.apache.parquet.hadoop.ParquetOutputCommitter",
    READ_FILTER_CONF: "false",
    adapter_conf("s3a"): "s3",
}
OPTION_DEFAULTS = {"fs.s3a.committer.name": "file", ALGORITHM_VERSION: "1"}


@dataclass(frozen=True)
class Protocol:
    """One way to commit a Spark file write."""

    key: str
    label: str
    stores: tuple[str, ...]
    confs: dict[str, str] = field(default_factory=dict)
    options: dict[str, str] = field(default_factory=dict)
    #: txcommit: its adapter on S3 (None for the others); local tables use the rename adapter.
    adapter: str | None = None

    @property
    def is_txcommit(self) -> bool:
        return self.confs.get(COMMIT_PROTOCOL_CONF) == PROTOCOL_CLASS

    def session_confs(self, store: str) -> dict[str, str]:
        """Every conf any protocol sets, with this protocol's values and Spark's defaults for
        the rest: written out in full because a value set in one Connect session was seen
        to reach later sessions of the same server (the magic committer's Parquet committer
        class made a later v1 write use the magic committer)."""
        confs = {**SESSION_DEFAULTS, **self.confs}
        if self.is_txcommit and store == "s3" and self.adapter:
            confs[adapter_conf("s3a")] = self.adapter
        return confs

    def write_options(self) -> dict[str, str]:
        return {**OPTION_DEFAULTS, **self.options}


PROTOCOLS: tuple[Protocol, ...] = (
    Protocol("floor", "no protocol (floor)", STORES, {COMMIT_PROTOCOL_CONF: FLOOR_CLASS}),
    Protocol(
        "v1",
        "Hadoop FileOutputCommitter v1",
        STORES,
        {COMMIT_PROTOCOL_CONF: SPARK_DEFAULT_PROTOCOL_CLASS},
        {ALGORITHM_VERSION: "1"},
    ),
    Protocol(
        "v2",
        "Hadoop FileOutputCommitter v2",
        STORES,
        {COMMIT_PROTOCOL_CONF: SPARK_DEFAULT_PROTOCOL_CLASS},
        {ALGORITHM_VERSION: "2"},
    ),
    Protocol(
        "magic",
        "S3A magic committer",
        ("s3",),
        {
            COMMIT_PROTOCOL_CONF: PATH_OUTPUT_PROTOCOL,
            PARQUET_COMMITTER: BINDING_PARQUET_COMMITTER,
        },
        {
            "fs.s3a.committer.name": "magic",
            "fs.s3a.committer.magic.enabled": "true",
            "mapreduce.outputcommitter.factory.scheme.s3a": (
                "org.apache.hadoop.fs.s3a.commit.S3ACommitterFactory"
            ),
        },
    ),
    Protocol(
        "txcommit",
        "txcommit conditional-put",
        STORES,
        {COMMIT_PROTOCOL_CONF: PROTOCOL_CLASS, READ_FILTER_CONF: "true"},
        adapter="s3",
    ),
    Protocol(
        "txcommit-mp",
        "txcommit multipart-complete",
        ("s3",),
        {COMMIT_PROTOCOL_CONF: PROTOCOL_CLASS, READ_FILTER_CONF: "true"},
        adapter="s3-multipart",
    ),
)
BY_KEY = {p.key: p for p in PROTOCOLS}


def label(key: str, store: str) -> str:
    """The label of a protocol on a store (txcommit on local files uses the rename adapter)."""
    if key == "txcommit" and store == "local":
        return "txcommit (local: rename adapter)"
    return BY_KEY[key].label


def parse(csv: str) -> list[Protocol]:
    """Protocols named in a comma-separated list, with a clear error for an unknown one."""
    keys = [k.strip() for k in csv.split(",") if k.strip()]
    unknown = [k for k in keys if k not in BY_KEY]
    if unknown or not keys:
        raise SystemExit(
            f"txcommit bench: --protocols {csv!r}: unknown {', '.join(unknown) or '(empty)'}; "
            f"choose from {', '.join(BY_KEY)}"
        )
    return [BY_KEY[k] for k in keys]

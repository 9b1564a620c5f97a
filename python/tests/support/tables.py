"""A table under test on any store, seen the way a user's own tools see it.

Local tables are read with the file system, S3 tables with boto3 straight from the endpoint
(a raw listing, as any tool would do), HDFS tables through the NameNode's WebHDFS API, GCS
tables with gcsfs on the emulator's JSON API:
independent of the plugin's and the Python store's code, so the tests check the store's real
contents.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import functions as F

import txcommit
from txcommit.cli.log import main as log_main
from txcommit.cli.ls import main as ls_main
from txcommit.devkit.testkit import store_test_kits
from txcommit_store_s3 import DUMMY_KEY, DUMMY_SECRET
from txcommit_store_s3.devkit.emulator import LocalS3

from support.scale import SOAK
from support.stores import session_confs

TXN_FILE = re.compile(r".*-tid-([0-9a-z]{16})-([0-9]+)(?:[-.].*)?$")
STORES = ("local", "s3", "s3-multipart")
#: Every store the end-to-end tests reach: those of the shared server, and those whose tables
#: need a server of their own.
EVERY_STORE = (*STORES, "hdfs", "gcs", "azure")
#: Where a feature test runs in CI when what it checks does not depend on the store's commit
#: primitive (replace semantics, write ids, nested tables, history): the local file system and
#: S3 through the conditional-put adapter. The soak (`.ci/soak`) adds the multipart-complete
#: adapter, which every attack on the protocol and the store certification cover in CI.
FEATURE_STORES = STORES if SOAK else ("local", "s3")
#: The write option naming a write id (docs/user-guide.md).
WRITE_ID = "txcommit.writeId"


def txn_of(rel: str) -> str | None:
    m = TXN_FILE.match(rel.rsplit("/", 1)[-1])
    return m.group(1) if m else None


def is_data(rel: str) -> bool:
    """Spark's rule: a path with a part starting with `_` or `.` is not data."""
    return not any(part.startswith(("_", ".")) for part in rel.split("/"))


@dataclass
class TableRef:
    store: str
    url: str
    local: Path | None = None
    s3: Any = None  # a boto3 S3 client
    bucket: str = ""
    prefix: str = ""  # key prefix (S3) or path without the leading slash (HDFS) of the table
    hdfs: Any = None  # an fsspec file system: WebHDFS, or gcsfs for GCS tables
    fs_root: str = ""  # the table's path on `hdfs` when not "/<prefix>" (GCS: "<bucket>/<prefix>")
    #: Azure: Hadoop ABFS writes an empty blob per directory (a marker), not a file of the table.
    folder_markers: bool = False

    @property
    def root(self) -> str:
        """The table's path on the fsspec file system."""
        return self.fs_root or "/" + self.prefix

    # ------------------------------------------------------------------ raw contents
    def objects(self) -> list[str]:
        """Every object or file under the table, relative to it."""
        if self.local is not None:
            if not self.local.exists():
                return []
            return sorted(
                str(p.relative_to(self.local)) for p in self.local.rglob("*") if p.is_file()
            )
        if self.hdfs is not None:
            if not self.hdfs.exists(self.root):
                return []
            found = sorted(p[len(self.root) + 1 :] for p in self.hdfs.find(self.root))
            if self.folder_markers:
                found = [k for k in found if not any(o.startswith(k + "/") for o in found)]
            return found
        out: list[str] = []
        for page in self.s3.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=self.prefix + "/"
        ):
            out += [o["Key"][len(self.prefix) + 1 :] for o in page.get("Contents", [])]
        return sorted(out)

    def log_records(self, areas: tuple[str, ...] = ("commits", "replace")) -> list[str]:
        """The names in the log's ``areas`` (`commits/` and `replace/` unless named) right now,
        relative to the table, listed straight from the store at the cost of one listing each
        (one on S3): cheap enough to poll while a race runs."""
        areas = tuple(f"_txcommit/{area}" for area in areas)
        if self.local is not None:
            found = []
            for area in areas:
                with suppress(FileNotFoundError):
                    found += [f"{area}/{n}" for n in os.listdir(self.local / area)]
            return found
        if self.hdfs is not None:
            found = []
            for area in areas:
                path = f"{self.root}/{area}"
                self.hdfs.invalidate_cache(path)
                try:
                    names = self.hdfs.ls(path, detail=False)
                except FileNotFoundError:
                    continue
                found += [f"{area}/{str(p).rstrip('/').rsplit('/', 1)[-1]}" for p in names]
            return found
        found = []
        for page in self.s3.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=f"{self.prefix}/_txcommit/"
        ):
            found += [o["Key"][len(self.prefix) + 1 :] for o in page.get("Contents", [])]
        return [k for k in found if k.startswith(areas)]

    def read(self, rel: str) -> bytes | None:
        if self.local is not None:
            p = self.local / rel
            return p.read_bytes() if p.exists() else None
        if self.hdfs is not None:
            try:
                data: bytes = self.hdfs.cat_file(f"{self.root}/{rel}")
            except FileNotFoundError:
                return None
            return data
        try:
            obj = self.s3.get_object(Bucket=self.bucket, Key=f"{self.prefix}/{rel}")
        except self.s3.exceptions.NoSuchKey:
            return None
        body: bytes = obj["Body"].read()
        return body

    def write(self, rel: str, data: bytes) -> None:
        if self.local is not None:
            (self.local / rel).parent.mkdir(parents=True, exist_ok=True)
            (self.local / rel).write_bytes(data)
        elif self.hdfs is not None:
            self.hdfs.pipe_file(f"{self.root}/{rel}", data)
        else:
            self.s3.put_object(Bucket=self.bucket, Key=f"{self.prefix}/{rel}", Body=data)

    def delete(self, rel: str) -> None:
        if self.local is not None:
            (self.local / rel).unlink()
        elif self.hdfs is not None:
            self.hdfs.rm_file(f"{self.root}/{rel}")
        else:
            self.s3.delete_object(Bucket=self.bucket, Key=f"{self.prefix}/{rel}")

    def open_uploads(self) -> list[str]:
        """Keys of multipart uploads under the table that are neither completed nor aborted."""
        if self.s3 is None:
            return []
        resp = self.s3.list_multipart_uploads(Bucket=self.bucket, Prefix=self.prefix + "/")
        return [u["Key"] for u in resp.get("Uploads", [])]

    # ------------------------------------------------------------------ the log, read raw
    def data_files(self) -> list[str]:
        return [k for k in self.objects() if is_data(k)]

    def committed(self) -> dict[str, dict[str, Any]]:
        """txn -> commit record, read straight from _txcommit/commits/."""
        out = {}
        for k in self.objects():
            if k.startswith("_txcommit/commits/") and k.endswith(".json"):
                data = self.read(k)
                assert data is not None
                out[k.rsplit("/", 1)[-1][: -len(".json")]] = json.loads(data)
        return out

    def row_counts(self, txns: set[str], timeout_s: float = 60) -> dict[str, int]:
        """txn -> rows of ``_txcommit/rows/<txn>.json`` for each of ``txns``, waiting for them:
        the driver records a count just after the commit, once Spark has counted the rows."""
        deadline = time.monotonic() + timeout_s
        while True:
            found = {t: self.read(f"_txcommit/rows/{t}.json") for t in txns}
            if all(found.values()) or time.monotonic() > deadline:
                return {t: json.loads(d)["rows"] for t, d in found.items() if d is not None}
            time.sleep(0.2)

    def committed_paths(self) -> set[str]:
        return {f["path"] for rec in self.committed().values() for f in rec["added"]}

    def aborted(self) -> set[str]:
        return {
            k.rsplit("/", 1)[-1][: -len(".json")]
            for k in self.objects()
            if k.startswith("_txcommit/aborted/")
        }

    def success(self) -> dict[str, Any]:
        data = self.read("_SUCCESS")
        assert data is not None, f"{self.url}/_SUCCESS is missing"
        result: dict[str, Any] = json.loads(data)
        return result

    def plant_uncommitted_copy(self) -> str:
        """Copies a committed data file under a new, never-committed transaction id."""
        src = next(k for k in self.data_files() if txn_of(k))
        txn = txn_of(src)
        assert txn is not None
        dst = src.replace(txn, "zzzzzzzzzzzzzzzz")
        data = self.read(src)
        assert data is not None
        self.write(dst, data)
        return dst

    # ------------------------------------------------------------------ sessions
    def prepare(self, spark) -> None:
        """Switch txcommit on for this table's store in `spark`."""
        txcommit.enable(spark)
        for key, value in session_confs(self.store).items():
            spark.conf.set(key, value)

    def child(self, name: str) -> TableRef:
        if self.local is not None:
            return TableRef(self.store, f"{self.url}/{name}", local=self.local / name)
        return TableRef(
            self.store,
            f"{self.url}/{name}",
            s3=self.s3,
            bucket=self.bucket,
            prefix=f"{self.prefix}/{name}",
            hdfs=self.hdfs,
            fs_root=f"{self.fs_root}/{name}" if self.fs_root else "",
            folder_markers=self.folder_markers,
        )


# ---------------------------------------------------------------------- readers outside Spark
def parquet_bytes(ids: list[int]) -> bytes:
    """A Parquet file of column `id`, as a writer without txcommit (pyarrow) makes it."""
    sink = pa.BufferOutputStream()
    pq.write_table(pa.table({"id": pa.array(ids, pa.int64())}), sink)
    return bytes(sink.getvalue().to_pybytes())


def spark_files(df, table: TableRef) -> set[str]:
    """The data files Spark (with the txcommit read filter) reads for ``df``, relative to the
    table."""
    return {
        unquote(r[0]).split(f"{table.prefix or str(table.local)}/", 1)[1]
        for r in df.select(F.input_file_name()).distinct().collect()
    }


def reader_target(table: TableRef, s3: LocalS3 | None) -> tuple[str, dict[str, Any]]:
    """The table's location and storage options for the readers outside Spark."""
    if table.local is not None:
        return str(table.local), {}
    assert s3 is not None
    options = {
        "endpoint": s3.endpoint,
        "region": "us-east-1",
        "access_key_id": DUMMY_KEY,
        "secret_access_key": DUMMY_SECRET,
    }
    return f"s3://{table.bucket}/{table.prefix}", options


def check_readers_see(
    table: TableRef,
    url: str,
    options: dict[str, Any],
    rows: list[tuple[Any, Any]],
    files: set[str],
) -> None:
    """``txcommit.dataset`` (pyarrow), DuckDB and polars read exactly ``rows`` (``(id, k)``,
    sorted) and the ``txcommit+`` fsspec file system finds exactly ``files``."""
    arrow = txcommit.dataset(url, storage_options=options).to_table()
    assert sorted(zip(arrow["id"].to_pylist(), arrow["k"].to_pylist(), strict=True)) == rows
    rel = txcommit.duckdb_relation(url, storage_options=options)
    assert sorted(rel.project("id, k").fetchall()) == rows
    frame = txcommit.polars_frame(url, storage_options=options).select("id", "k").collect()
    assert sorted(frame.iter_rows()) == rows
    if table.local is None:
        fs, root = fsspec.filesystem("txcommit+s3", **options), f"{table.bucket}/{table.prefix}"
    else:
        fs, root = fsspec.filesystem("txcommit+file"), str(Path(url).resolve())
    assert {p[len(root) + 1 :] for p in fs.find(root)} == files


def check_cli_against_dataset(
    url: str,
    options: dict[str, Any],
    table_prefix: str,
    capsys,
    monkeypatch,
) -> dict[str, int]:
    """``txcommit ls`` lists exactly the files ``txcommit.dataset`` reads (paths relative to
    the table, whose key prefix is ``table_prefix``); returns how many transactions
    ``txcommit log`` shows in each state."""
    mark = table_prefix.strip("/") + "/"
    dataset = txcommit.dataset(url, storage_options=options)
    files = {f[f.index(mark) + len(mark) :] for f in dataset.files}
    history = cli_history(url, {"endpoint": options["endpoint"]}, files, capsys, monkeypatch)
    return dict(Counter(r["state"] for r in history))


def cli_history(
    url: str,
    options: dict[str, Any],
    files: set[str],
    capsys,
    monkeypatch,
) -> list[dict[str, Any]]:
    """``txcommit ls --json`` lists exactly ``files``; the history ``txcommit log --json``
    prints. The CLI takes S3 credentials from the environment only."""
    cli = ["--endpoint", options["endpoint"]] if options else []
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", DUMMY_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", DUMMY_SECRET)
    capsys.readouterr()
    assert ls_main([url, "--json", *cli]) == 0
    assert {f["path"] for f in json.loads(capsys.readouterr().out)} == files
    assert log_main([url, "--json", *cli]) == 0
    return list(json.loads(capsys.readouterr().out))


@contextmanager
def dynamic_overwrite(spark) -> Iterator[None]:
    """Within the block, an overwrite of a partitioned table replaces only the partitions it
    writes (Spark's dynamic partition overwrite mode)."""
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    try:
        yield
    finally:
        spark.conf.unset("spark.sql.sources.partitionOverwriteMode")


_names = itertools.count()


def next_table_name() -> str:
    """``t0``, ``t1``, ...: a name no other table of this test session has."""
    return f"t{next(_names)}"


def make_table(store: str, workdir: Path, on: Any = None) -> TableRef:
    """A fresh table on ``store``, laid out by its test kit on what its emulator fixture gives
    (``on``): a directory below ``workdir`` (local), a prefix of a bucket or container, a
    directory on a MiniHdfs."""
    kit = store_test_kits()[store]
    return TableRef(store, **kit.table(store, next_table_name(), workdir, on))


def make_table_of(store: str, workdir: Path, request: Any) -> TableRef:
    """A fresh table on ``store``, on the emulator its kit's fixture (asked of pytest's
    ``request``) gives."""
    fixture = store_test_kits()[store].fixture
    return make_table(store, workdir, request.getfixturevalue(fixture) if fixture else None)


def replace_records(table: TableRef) -> list[dict[str, Any]]:
    """The replacement log, read raw from `_txcommit/replace/`, in sequence order."""
    out = []
    for k in table.objects():
        if k.startswith("_txcommit/replace/") and k.endswith(".json"):
            data = table.read(k)
            assert data is not None
            out.append(json.loads(data))
    return out

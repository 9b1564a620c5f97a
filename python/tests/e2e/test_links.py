"""Links on a table's path (docs/protocol.md, I18 and I14), through a real Connect server from
the JVM-less client. Nothing is written or deleted through a path whose resolved location lies
in another table; VACUUM never deletes a file outside the table's own resolved tree; a read
that reaches inside a table through a link is refused by Spark and the Python readers alike,
and one through a link to a table's own directory reads the table; a refused write leaves
nothing behind. On the local file system and on HDFS (a real MiniDFS cluster)."""

from __future__ import annotations

import getpass
import json
import shutil
import urllib.parse
import urllib.request
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F

import txcommit
from txcommit.errors import (
    MaintenanceError,
    StoreError,
    UnsupportedReadError,
    UnsupportedWriteError,
)
from txcommit.maintenance import vacuum
from txcommit.table.names import data_file_name, generate_txn
from txcommit.table.records import AddedFile, CommitRecord, encode_record
from txcommit_store_hdfs.devkit.emulator import MiniHdfs

from support.tables import next_table_name


def ids(spark, url: str) -> list[int]:
    return sorted(r.id for r in spark.read.parquet(url).select("id").collect())


def partitioned(spark, url: str, ids_from: int = 0) -> None:
    """Ten rows, ``k`` = id % 2: the odd ids in ``k=1``."""
    df = spark.range(ids_from, ids_from + 10).withColumn("k", (F.col("id") % 2).cast("int"))
    df.write.partitionBy("k").parquet(url)


def fresh(workdir: Path) -> Path:
    d = workdir / "links" / next_table_name()
    d.mkdir(parents=True)
    return d


def nested_log(directory: Path) -> None:
    """A log in ``directory``, with a commit of a copy of one of its files, as a version without
    the link check created through a link (its append was accepted)."""
    sample = next(directory.glob("part-*.parquet"))
    txn = generate_txn()
    name = data_file_name("", 0, txn, 1, "-c000.snappy.parquet")
    shutil.copy(sample, directory / name)
    record = CommitRecord(
        txn=txn,
        token="t",
        job_id="j",
        started_at=1,
        committed_at=2,
        added=(AddedFile(name, sample.stat().st_size),),
        app_id=None,
        writer="older-version",
    )
    (directory / "_txcommit" / "commits").mkdir(parents=True)
    (directory / "_txcommit" / "commits" / f"{txn}.json").write_bytes(encode_record(record))


def linked_partition(spark, workdir: Path) -> tuple[Path, Path]:
    """A table ``t`` (by ``partitioned``) and a link ``l`` beside it to its ``k=1``."""
    base = fresh(workdir)
    t, link = base / "t", base / "l"
    txcommit.enable(spark)
    partitioned(spark, str(t))
    link.symlink_to(t / "k=1")
    return t, link


def test_an_append_through_a_link_into_a_partition_is_refused_and_the_table_keeps_its_rows(
    spark, workdir: Path
) -> None:
    t, link = linked_partition(spark, workdir)
    with pytest.raises(UnsupportedWriteError) as refused, txcommit.transactional(spark):
        spark.range(100, 102).write.mode("append").parquet(str(link))
    message = str(refused.value)
    assert f"{link} is a link to file:{t}/k=1" in message
    assert f"inside the txcommit table file:{t}," in message
    assert 'partitionBy("k")' in message, "the error says how to write the partition"
    assert not (t / "k=1" / "_txcommit").exists(), "no second log inside the table"
    # The write the error proposes, then VACUUM of the table: every committed row stays.
    spark.range(100, 102).withColumn("k", F.lit(1)).write.mode("append").partitionBy("k").parquet(
        str(t)
    )
    vacuum(spark, str(t), retain_hours=0, force=True).collect()
    assert ids(spark, str(t)) == [*range(10), 100, 101]


def test_vacuum_through_a_link_into_a_partition_deletes_nothing(spark, workdir: Path) -> None:
    """A log an older version created through the link: VACUUM of the link cannot tell the
    table's files there from never committed ones, so it refuses and deletes nothing. (Without
    FORCE the same holds once the files pass the horizon: TableLinksContract runs VACUUM hours
    later; here every transaction is seconds old, too young for a VACUUM without FORCE.)"""
    t, link = linked_partition(spark, workdir)
    nested_log(link)
    with pytest.raises(MaintenanceError) as refused, txcommit.transactional(spark):
        vacuum(spark, str(link), retain_hours=0, force=True).collect()
    assert f"{link} is a link to file:{t}/k=1" in str(refused.value)
    assert "nothing was deleted" in str(refused.value)
    assert sorted({i for i in ids(spark, str(t)) if i < 10}) == list(range(10))


def test_vacuum_of_a_table_holding_a_link_into_another_table_keeps_that_tables_rows(
    spark, workdir: Path
) -> None:
    base = fresh(workdir)
    t, u = base / "t", base / "u"
    txcommit.enable(spark)
    partitioned(spark, str(t))
    partitioned(spark, str(u), ids_from=20)
    (t / "u").symlink_to(u / "k=1")
    (t / "k=0" / "linked.parquet").symlink_to(next((u / "k=0").glob("part-*.parquet")))
    deleted = vacuum(spark, str(t), retain_hours=0, force=True).collect()
    assert not [r.path for r in deleted if r.path.startswith("u/") or "linked" in r.path]
    assert ids(spark, str(u)) == list(range(20, 30)), "the other table lost no committed row"
    assert (t / "u").is_symlink() and (t / "k=0" / "linked.parquet").is_symlink()


def test_a_write_to_a_path_with_a_log_directory_is_refused_and_leaves_nothing(
    spark, workdir: Path
) -> None:
    d = fresh(workdir)
    txcommit.enable(spark)
    with pytest.raises(UnsupportedWriteError) as refused, txcommit.transactional(spark):
        spark.range(5).write.parquet(f"{d}/_txcommit")
    assert "'_txcommit' directory on its path" in str(refused.value)
    assert "inside the txcommit table" not in str(refused.value), "D is no table"
    assert list(d.iterdir()) == [], "the refused write left nothing"
    # Tables under D are written and vacuumed as before.
    spark.range(5).write.parquet(f"{d}/events")
    spark.range(5, 7).write.mode("append").parquet(f"{d}/events")
    vacuum(spark, f"{d}/events", retain_hours=0, force=True).collect()
    assert ids(spark, f"{d}/events") == list(range(7))


def test_reads_through_links_are_the_same_in_spark_and_the_python_readers(
    spark, workdir: Path
) -> None:
    base = fresh(workdir)
    t = base / "t"
    txcommit.enable(spark)
    partitioned(spark, str(t))
    # A file of a transaction that never committed, in k=1: no reader may show it.
    sample = next((t / "k=1").glob("part-*.parquet"))
    shutil.copy(sample, t / "k=1" / data_file_name("", 0, generate_txn(), 1, ".parquet"))

    # A link into a partition directory: the table's log is not on the path as written.
    (base / "partition").symlink_to(t / "k=1")
    with pytest.raises(UnsupportedReadError) as spark_refused, txcommit.transactional(spark):
        spark.read.parquet(str(base / "partition")).count()
    with pytest.raises(UnsupportedReadError) as python_refused:
        txcommit.dataset(str(base / "partition"))
    assert f"{base}/partition is a link to file:{t}/k=1" in str(spark_refused.value)
    assert f"{base}/partition is a link to {t}/k=1" in str(python_refused.value)
    for refused in (spark_refused, python_refused):
        assert "inside the txcommit table" in str(refused.value)

    # A link to the table's own directory is the table, in both.
    (base / "alias").symlink_to(t)
    assert ids(spark, str(base / "alias")) == list(range(10))
    python = txcommit.dataset(str(base / "alias")).to_table()
    assert sorted(python.column("id").to_pylist()) == list(range(10))

    # A link inside the table to a directory of plain files. The table is log-only (txcommit
    # created it): neither reader lists below its root, so the plain files stay out of both.
    plain = base / "plain" / "k=7"
    plain.mkdir(parents=True)
    pq.write_table(pa.table({"id": pa.array([70, 71], pa.int64())}), plain / "data.parquet")
    (t / "k=7").symlink_to(plain)
    assert ids(spark, str(t)) == list(range(10))
    python = txcommit.dataset(str(t)).to_table()
    assert sorted(python.column("id").to_pylist()) == list(range(10))
    # Read by listing (an adopted table, I32), both list through the link, as Spark does.
    spark.sql(f"TXCOMMIT ALTER '{t}' SET ('reads' = 'listing')").collect()
    assert ids(spark, str(t)) == [*range(10), 70, 71]
    python = txcommit.dataset(str(t)).to_table()
    assert sorted(python.column("id").to_pylist()) == [*range(10), 70, 71]


# -- HDFS ----------------------------------------------------------------------------------


def create_symlink(hdfs: MiniHdfs, link: str, target: str) -> None:
    """WebHDFS's CREATESYMLINK, straight to the NameNode."""
    query = urllib.parse.urlencode(
        {
            "op": "CREATESYMLINK",
            "destination": target,
            "createParent": "true",
            "user.name": getpass.getuser(),
        }
    )
    request = urllib.request.Request(f"{hdfs.webhdfs}{link}?{query}", method="PUT")
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            assert answer.status == 200
    except urllib.error.HTTPError as e:
        answer = e.read()[:500]
        raise AssertionError(f"CREATESYMLINK {link} -> {target}: {e.code} {answer!r}") from e


def hdfs_entry(hdfs: MiniHdfs, path: str) -> dict[str, object] | None:
    """The entry at ``path`` as its directory's listing shows it (a link's own status, which
    WebHDFS's GETFILESTATUS, following it, does not give); None when absent."""
    parent, name = path.rsplit("/", 1)
    query = urllib.parse.urlencode({"op": "LISTSTATUS", "user.name": getpass.getuser()})
    try:
        with urllib.request.urlopen(f"{hdfs.webhdfs}{parent}?{query}", timeout=30) as answer:
            entries = json.loads(answer.read())["FileStatuses"]["FileStatus"]
    except urllib.error.HTTPError as e:
        if e.code == 404:
            return None
        raise
    return next((dict(e) for e in entries if e["pathSuffix"] == name), None)


def test_links_on_hdfs(spark, mini_hdfs: MiniHdfs) -> None:
    """A NameNode makes links only where its JVM switched them on (MiniDFSCluster does, for
    Hadoop's own tests; a production NameNode answers "Symlinks not supported"), and a Hadoop
    client follows them only where its JVM did (the Connect server's does not: Hadoop's
    default). The rule holds on such a cluster."""
    base = f"/links/{next_table_name()}"
    t, u = f"{base}/t", f"{base}/u"
    url = lambda p: f"{mini_hdfs.endpoint}{p}"  # noqa: E731
    txcommit.enable(spark)
    partitioned(spark, url(t))
    partitioned(spark, url(u), ids_from=20)
    create_symlink(mini_hdfs, f"{base}/l", f"{t}/k=1")
    assert hdfs_entry(mini_hdfs, f"{base}/l")["type"] == "SYMLINK"  # type: ignore[index]

    # An append through the link is refused before anything is written.
    with pytest.raises(UnsupportedWriteError) as refused, txcommit.transactional(spark):
        spark.range(100, 102).write.mode("append").parquet(url(f"{base}/l"))
    assert f"{url(base)}/l is a link to {url(t)}/k=1" in str(refused.value)
    assert hdfs_entry(mini_hdfs, f"{t}/k=1/_txcommit") is None, "no second log inside the table"

    # A read through the link: this client does not follow links, nor does WebHDFS.
    with pytest.raises(UnsupportedReadError) as spark_read, txcommit.transactional(spark):
        spark.read.parquet(url(f"{base}/l")).count()
    assert f"{url(base)}/l is a link to {url(t)}/k=1" in str(spark_read.value)
    assert "does not follow links" in str(spark_read.value)
    with pytest.raises(StoreError, match="leads through an HDFS link"):
        txcommit.dataset(url(f"{base}/l"), storage_options={"endpoint": mini_hdfs.webhdfs})

    # VACUUM of a table holding a link into another table deletes nothing there.
    create_symlink(mini_hdfs, f"{t}/u", f"{u}/k=1")
    deleted = vacuum(spark, url(t), retain_hours=0, force=True).collect()
    assert not [r.path for r in deleted if r.path.startswith("u/")]
    assert ids(spark, url(u)) == list(range(20, 30))
    assert ids(spark, url(t)) == list(range(10))
    python = txcommit.dataset(url(t), storage_options={"endpoint": mini_hdfs.webhdfs}).to_table()
    assert sorted(python.column("id").to_pylist()) == list(range(10))

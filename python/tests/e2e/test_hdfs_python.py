"""The Python HDFS store (WebHDFS, no JVM in the reader) on a real NameNode and DataNode: the
shared store contract (the conformance kit's Level 1 checks), and what only HDFS can do wrong:
a rename onto a directory, a rename whose answer was lost; and the Python readers on a table
Spark wrote."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
import requests
from pyspark.sql import functions as F

import txcommit
from txcommit.adapters import open_store
from txcommit.cli.log import main as log_main
from txcommit.cli.ls import main as ls_main
from txcommit.devkit.testkit import behind_lossy_proxy
from txcommit.errors import AlreadyExistsError, StoreError, UnsupportedStoreError
from txcommit.table.view import open_table
from txcommit.testing.store_contract import LossyStore, StoreContract
from txcommit.testing.vectors import load
from txcommit_store_hdfs.devkit.emulator import MiniHdfs
from txcommit_store_hdfs.store import HdfsStore

from support.servers import ServerProcess, new_session
from support.vectors import table_reads, write_table


def fresh(hdfs: MiniHdfs, **options: Any) -> HdfsStore:
    options.setdefault("endpoint", hdfs.webhdfs)
    store = open_store(f"{hdfs.endpoint}/contract-{uuid.uuid4().hex[:12]}", **options)
    assert isinstance(store, HdfsStore)
    return store


class TestHdfsStoreContract(StoreContract):
    adapter = "hdfs"

    @pytest.fixture
    def store(self, mini_hdfs: MiniHdfs) -> HdfsStore:
        return fresh(mini_hdfs)

    @pytest.fixture
    def lossy_store(self, mini_hdfs: MiniHdfs) -> Iterator[LossyStore]:
        # WebHDFS through the proxy; a create's publish is its rename, the target in the query.
        def renames(names: str) -> bytes:
            target = names.replace("/", "%2F").encode()
            return rb"PUT /webhdfs/v1/[^ ]*[?&]op=RENAME[^ ]*[?&]destination=[^ &]*" + target

        with behind_lossy_proxy(
            mini_hdfs.http_port, renames, lambda front: fresh(mini_hdfs, endpoint=f"http://{front}")
        ) as found:
            yield found


def test_a_directory_of_the_records_name_is_a_conflict_and_nothing_moves_into_it(
    mini_hdfs: MiniHdfs,
) -> None:
    store = fresh(mini_hdfs)
    store.create_exclusive("_txcommit/commits/t1.json/inner", b"x")  # makes t1.json a directory
    with pytest.raises(AlreadyExistsError, match="a directory of that name exists"):
        store.create_exclusive("_txcommit/commits/t1.json", b"record")
    # The plain rename would have moved the temp file INTO the directory.
    assert [f.key for f in store.walk()] == ["_txcommit/commits/t1.json/inner"]


def test_a_conflict_leaves_no_temporary_file(mini_hdfs: MiniHdfs) -> None:
    store = fresh(mini_hdfs)
    store.create_exclusive("_txcommit/commits/t1.json", b"first")
    with pytest.raises(AlreadyExistsError, match="the NameNode refused the rename"):
        store.create_exclusive("_txcommit/commits/t1.json", b"second")
    assert store.read("_txcommit/commits/t1.json") == b"first"
    assert [f.name for f in store.list("_txcommit/commits")] == ["t1.json"]


class LosingRenameAnswers(requests.Session):
    """A session whose first ``rename_losses`` renames reach the NameNode but whose answers
    are lost, as a dropped connection loses them."""

    def __init__(self, rename_losses: int) -> None:
        super().__init__()
        self.rename_losses = rename_losses

    def request(self, method: str, url: str | bytes, *args: Any, **kwargs: Any) -> Any:
        response = super().request(method, url, *args, **kwargs)
        params = kwargs.get("params") or {}
        if params.get("op") == "RENAME" and self.rename_losses > 0:
            self.rename_losses -= 1
            raise requests.ConnectionError("the answer was lost")
        return response


def test_a_publish_whose_rename_answer_was_lost_succeeds_once(mini_hdfs: MiniHdfs) -> None:
    """The resend finds the target taken by the first attempt: the bytes read back are the
    writer's own, so the publish succeeded (I17); another writer's bytes stay a conflict."""
    store = fresh(mini_hdfs, session=LosingRenameAnswers(1))
    store.create_exclusive("_txcommit/commits/t1.json", b"mine")
    assert store.read("_txcommit/commits/t1.json") == b"mine"
    assert store.requests.snapshot()["RENAME"] == 2
    assert [f.name for f in store.list("_txcommit/commits")] == ["t1.json"]
    other = HdfsStore(store.root_url, endpoint=mini_hdfs.webhdfs, session=LosingRenameAnswers(1))
    with pytest.raises(AlreadyExistsError):
        other.create_exclusive("_txcommit/commits/t1.json", b"theirs")
    assert store.read("_txcommit/commits/t1.json") == b"mine"


def test_errors_name_the_path_and_what_to_do(mini_hdfs: MiniHdfs) -> None:
    wrong = HdfsStore(f"{mini_hdfs.endpoint}/t", endpoint="http://127.0.0.1:9/")
    with pytest.MonkeyPatch.context() as m:
        m.setattr("txcommit_store_hdfs.store.RETRIES", 0)
        with pytest.raises(StoreError) as caught:
            wrong.read("_txcommit/commits/t1.json")
    message = str(caught.value)
    assert f"{mini_hdfs.endpoint}/t/_txcommit/commits/t1.json" in message
    assert "http://127.0.0.1:9/webhdfs/v1" in message and "TXCOMMIT_WEBHDFS_ENDPOINT" in message
    # The cluster's root belongs to the user who started it and is not writable by others.
    with pytest.raises(StoreError, match="HDFS denied user 'nobody-else'"):
        HdfsStore(
            f"{mini_hdfs.endpoint}/", endpoint=mini_hdfs.webhdfs, user="nobody-else"
        ).create_exclusive("denied/t1.json", b"1")
    with pytest.raises(UnsupportedStoreError, match="viewfs"):
        open_store("viewfs://cluster/t")


@pytest.mark.parametrize("name", ["directory-of-tables", "nested-logs-with-replacements"])
def test_every_root_shows_what_spark_reads_there(mini_hdfs: MiniHdfs, name: str) -> None:
    """The trees of tables.json read at each root (a partition directory finds its table above
    it on HDFS too), as on the other stores (unit/test_view_roots.py)."""
    case = next(c for c in load("tables.json")["cases"] if c["name"] == name)
    store = fresh(mini_hdfs)
    write_table(store, case)
    for root, visible in table_reads(case):
        url = f"{store.root_url}/{root}".rstrip("/")
        view = open_table(url, {"endpoint": mini_hdfs.webhdfs}, with_markers=True)
        assert sorted(f.path for f in view.visible_files()) == visible, f"read at {url}"
        assert view.is_table == (name != "directory-of-tables" or root.startswith("date=")), url


def test_python_readers_show_exactly_what_spark_wrote_on_hdfs(
    workdir: Path, mini_hdfs: MiniHdfs, capsys: pytest.CaptureFixture[str]
) -> None:
    """A `--store hdfs` server writes two appends, a job that fails half way and an overwrite;
    after each step `txcommit.dataset`, `txcommit ls` and `txcommit log` (over WebHDFS, no JVM)
    show exactly Spark's rows, files and transactions."""
    proc = ServerProcess(workdir / "hdfs-readers", extra_args=["--store", "hdfs"])
    proc.start()
    url = f"{mini_hdfs.endpoint}/readers/{uuid.uuid4().hex[:8]}"
    cli = ["--endpoint", mini_hdfs.webhdfs]
    try:
        spark = new_session(proc.url)
        txcommit.enable(spark)

        def python_sees_what_spark_sees() -> tuple[list[dict[str, Any]], set[str]]:
            df = spark.read.parquet(url)
            rows = sorted(r.id for r in df.collect())
            files = {
                unquote(r[0]).split(f"{url}/", 1)[1]
                for r in df.select(F.input_file_name()).distinct().collect()
            }
            table = txcommit.dataset(url, storage_options={"endpoint": mini_hdfs.webhdfs})
            assert sorted(table.to_table().column("id").to_pylist()) == rows
            capsys.readouterr()
            assert ls_main([url, "--json", *cli]) == 0
            assert {f["path"] for f in json.loads(capsys.readouterr().out)} == files
            # Row counts are derived work the driver records just after the commit point, once
            # Spark has counted them (docs/protocol.md "History"): wait for them.
            deadline = time.monotonic() + 60
            while True:
                assert log_main([url, "--json", *cli]) == 0
                history = list(json.loads(capsys.readouterr().out))
                counted = all(h["rows"] is not None for h in history if h["state"] == "committed")
                if counted or time.monotonic() > deadline:
                    return history, files
                time.sleep(0.2)

        spark.range(0, 1000, 1, 4).write.parquet(url)
        spark.range(1000, 1005).write.mode("append").parquet(url)
        history, _ = python_sees_what_spark_sees()
        assert [h["state"] for h in history] == ["committed", "committed"]
        assert sorted(h["rows"] for h in history) == [5, 1000]

        # Three of four tasks write their files, the last one fails every attempt: its files
        # stay on the NameNode (a dead job's), and no reader shows them.
        failing = spark.range(0, 4000, 1, 4).selectExpr(
            "if(id = 3999, raise_error('txcommit test: task fails'), id) AS id"
        )
        with pytest.raises(Exception, match="txcommit test: task fails"):
            failing.write.mode("append").parquet(url)
        history, before = python_sees_what_spark_sees()
        assert [h["state"] for h in history].count("aborted") == 1, history
        assert spark.read.parquet(url).count() == 1005

        spark.range(7).write.mode("overwrite").parquet(url)
        history, _ = python_sees_what_spark_sees()
        assert history[0]["state"] == "committed" and history[0]["operation"] == "overwrite"
        assert history[0]["removedFiles"] == len(before) and history[0]["rows"] == 7
        assert sorted(r.id for r in spark.read.parquet(url).collect()) == list(range(7))
        spark.stop()
    finally:
        proc.stop()

"""What the readers show at each kind of root, on every store with a Python adapter here, and
in what order they list: the logs before the data they judge.

The trees are the ``directory-of-tables`` and ``nested-logs-with-replacements`` cases of
``conformance/vectors/tables.json`` (which the JVM's TablesSuite holds Spark's read filter to),
written through each store's adapter: a directory holding tables, each table, a partition
directory of one (found through the table above it, whatever the store), a table inside a table.
The search for a table above the path stops at a directory the credentials may not list.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from txcommit import paths
from txcommit.adapters import LocalStore, StoreFile, open_store
from txcommit.table import view as view_module
from txcommit.table.records import AddedFile, CommitRecord, encode_record
from txcommit.table.view import open_table
from txcommit.testing.vectors import load
from txcommit_store_azure.devkit.emulator import Azurite
from txcommit_store_gcs.devkit.emulator import FakeGcs
from txcommit_store_s3.devkit.emulator import LocalS3

from support.s3 import fresh_s3_url, s3_options
from support.vectors import table_reads, write_table

CASES = {c["name"]: c for c in load("tables.json")["cases"]}
TREES = ("directory-of-tables", "nested-logs-with-replacements")


@pytest.fixture(params=["local", "s3", "gcs", "azure"])
def tree_at(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, dict[str, Any]]:
    """An empty directory on one store: (its URL, the store options)."""
    kind = request.param
    if kind == "local":
        return str(tmp_path / "events"), {}
    if kind == "s3":
        s3: LocalS3 = request.getfixturevalue("local_s3")
        return fresh_s3_url(), s3_options(s3)
    if kind == "gcs":
        gcs: FakeGcs = request.getfixturevalue("fake_gcs")
        return f"gs://conformance/roots/{uuid.uuid4().hex}/events", {"endpoint": gcs.endpoint}
    azurite: Azurite = request.getfixturevalue("azurite")
    url = f"az://conformance/roots/{uuid.uuid4().hex}/events"
    return url, {"endpoint": azurite.endpoint, "emulator": True}


@pytest.mark.parametrize("name", TREES)
def test_every_root_shows_what_spark_reads_there(
    tree_at: tuple[str, dict[str, Any]], name: str
) -> None:
    url, options = tree_at
    case = CASES[name]
    write_table(open_store(url, **options), case)
    for root, visible in table_reads(case):
        at = f"{url}/{root}" if root else url
        view = open_table(at, options)
        assert sorted(f.path for f in view.visible_files()) == visible, f"read at {at}"


def test_a_partition_directory_reads_its_tables_history(
    tree_at: tuple[str, dict[str, Any]],
) -> None:
    """The table above a partition directory is found on every store, not on S3 alone."""
    url, options = tree_at
    write_table(open_store(url, **options), CASES["directory-of-tables"])
    view = open_table(f"{url}/date=2/k=2", options, with_markers=True)
    assert view.is_table and view.table_url == open_store(f"{url}/date=2", **options).root_url
    assert [r.txn for r in view.history()] == ["loyw4a00dirs0003"]


# --- the order of listings ------------------------------------------------------------------

TXN = "loyw4a00late0009"
LATE_A = f"k=1/part-00000-tid-{TXN}-1-c000.parquet"
LATE_B = f"k=2/part-00001-tid-{TXN}-2-c000.parquet"


def _store_meeting_a_commit(
    calls: list[str], commit: Callable[[], None], seen: list[str]
) -> type[LocalStore]:
    """A local store whose first listing of its whole root meets ``commit`` in progress: the
    listing passed one directory before the commit wrote its file there, and reached the keys
    ``seen`` (relative to the root) after the commit wrote them, as a walk or a flat listing
    may. Every listing's prefix is appended to ``calls``."""

    class MeetingACommit(LocalStore):
        def walk(self, prefix: str = "", progress: Any = None) -> list[StoreFile]:
            found = super().walk(prefix, progress)
            calls.append(prefix)
            if prefix == "" and calls.count("") == 1:
                commit()
                found = sorted(found + [StoreFile(k, 3) for k in seen], key=lambda f: f.key)
            return found

    return MeetingACommit


def _commit(table: LocalStore, below: str) -> None:
    """Commits TXN to ``table``: LATE_A and LATE_B under ``below``, then the record."""
    added = tuple(AddedFile(f"{below}{f}", 3) for f in (LATE_A, LATE_B))
    for f in added:
        table.write_replacing(f.path, b"abc")
    record = CommitRecord(TXN, "tok", "job", 1, 2, added, None, "test")
    table.write_replacing(f"{paths.LOG_DIR_NAME}/commits/{TXN}.json", encode_record(record))


def test_a_commit_to_a_table_in_the_root_during_the_listing_shows_whole_or_not_at_all(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A directory holding tables: each table's log is listed before the data it judges."""
    write_table(LocalStore(tmp_path), CASES["directory-of-tables"])
    calls: list[str] = []
    seen = [f"date=2/{LATE_A}", f"date=2/{paths.LOG_DIR_NAME}/commits/{TXN}.json"]
    store = _store_meeting_a_commit(
        calls, lambda: _commit(LocalStore(tmp_path / "date=2"), ""), seen
    )
    monkeypatch.setattr(view_module, "open_store", lambda url, **_: store(url))
    shown = {f.path for f in open_table(tmp_path).visible_files() if TXN in f.path}
    assert shown in (set(), {f"date=2/{LATE_A}", f"date=2/{LATE_B}"}), f"half a txn: {shown}"
    log_listed = f"date=2/{paths.LOG_DIR_NAME}"
    assert log_listed in calls and calls.index(log_listed) < calls.index("date=2"), calls


def test_a_commit_to_the_table_above_a_partition_during_the_listing_is_not_shown(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A partition directory: the log of the table above it is listed before the directory."""
    table = LocalStore(tmp_path / "t")
    table.write_replacing(f"{paths.LOG_DIR_NAME}/pending/{TXN}.json", b"{}")
    calls: list[str] = []
    store = _store_meeting_a_commit(calls, lambda: _commit(table, "p=1/"), [LATE_A])
    monkeypatch.setattr(view_module, "open_store", lambda url, **_: store(url))
    shown = {f.path for f in open_table(tmp_path / "t" / "p=1").visible_files()}
    assert shown == set(), f"a commit made during the listing shown in part: {shown}"


def test_a_directory_the_credentials_may_not_list_ends_the_search_above_the_root(
    monkeypatch: pytest.MonkeyPatch, local_s3: LocalS3
) -> None:
    """Credentials scoped to a prefix: the directory above the table refuses the listing, so
    the readers look no higher and read the table, as the JVM's filter does."""
    from txcommit_store_s3.store import S3Store

    url, options = fresh_s3_url(), s3_options(local_s3)
    case = CASES["directory-of-tables"]
    write_table(open_store(url, **options), case)
    table = f"{url}/date=1"
    asked: list[str] = []

    class Scoped(S3Store):
        def walk(self, prefix: str = "", progress: Any = None) -> list[StoreFile]:
            if not self.root_url.startswith(table):
                asked.append(self.root_url)
                raise self.failure("list", prefix, "403 Forbidden", "no access", denied=True)
            return super().walk(prefix, progress)

    monkeypatch.setattr(view_module, "open_store", lambda u, **o: Scoped(u, **o))
    view = open_table(table, options)
    assert sorted(f.path for f in view.visible_files()) == case["reads"][0]["visible"]
    assert asked == [url], "the search went on above a directory it may not list"


@pytest.mark.parametrize(
    ("url", "options", "cause"),
    [
        ("s3://b/t", {"endpoint": "http://127.0.0.1:1", "region": "us-east-1"}, "AccessDenied"),
        ("gs://b/t", {"endpoint": "http://127.0.0.1:1"}, "403 Forbidden"),
        ("az://c/t", {"endpoint": "http://127.0.0.1:1", "emulator": True}, "AuthorizationFailure"),
        ("hdfs://nn:8020/t", {}, "403 AccessControlException: Permission denied"),
    ],
)
def test_each_store_says_when_access_was_denied(
    url: str, options: dict[str, Any], cause: str
) -> None:
    from txcommit.errors import AccessDeniedError

    store: Any = open_store(url, **options)
    why: Any = cause if url.startswith(("gs:", "hdfs:")) else RuntimeError(cause)
    assert isinstance(store._failure("list", "_txcommit", why), AccessDeniedError)
    other: Any = "500 boom" if url.startswith(("gs:", "hdfs:")) else RuntimeError("boom")
    assert not isinstance(store._failure("list", "_txcommit", other), AccessDeniedError)

"""The store contract as ONE shared test suite (``txcommit.adapters.base.Store``'s docstring).

Every adapter's Python mirror binds to it in a few lines, on the real store:

    class TestMyStore(StoreContract):
        @pytest.fixture
        def store(self, tmp_path: Path) -> Store:
            return MyStore(...)            # a fresh, empty root for every test

``MultipartStoreContract`` adds the tests of ``multipart-complete`` stores. The classes are not
collected themselves (their names do not start with ``Test``); the bindings are.
"""

from __future__ import annotations

import os
import threading
import traceback
import uuid

import pytest

from txcommit.adapters.base import MultipartStore, Store
from txcommit.errors import AlreadyExistsError, StoreError

MIB = 1024 * 1024


def _big(size: int) -> bytes:
    """Random bytes: any mix-up of parts or a lost part changes them."""
    return os.urandom(size)


class StoreContract:
    """Tests every store must pass. Bindings set ``adapter`` (the adapter's name) and provide
    a ``store`` fixture: a store on a fresh, empty root."""

    adapter: str = ""

    @pytest.fixture
    def store(self) -> Store:
        raise NotImplementedError("bind the contract: override the 'store' fixture")

    # -- 1. exclusive create -------------------------------------------------------------

    def test_exclusive_create_refuses_an_existing_key_and_keeps_its_content(
        self, store: Store
    ) -> None:
        key = "_txcommit/commits/x.json"
        store.create_exclusive(key, b"first")
        with pytest.raises(AlreadyExistsError) as caught:
            store.create_exclusive(key, b"second")
        assert store.url_for(key) in str(caught.value)
        assert caught.value.url == store.url_for(key)
        assert store.read(key) == b"first"

    def test_of_8_racing_exclusive_creates_exactly_one_wins(self, store: Store) -> None:
        key = "_txcommit/commits/race.json"
        start = threading.Barrier(8)
        outcomes: dict[int, BaseException | None] = {}

        def create(i: int) -> None:
            start.wait()
            try:
                store.create_exclusive(key, f"writer-{i}".encode())
                outcomes[i] = None
            except BaseException as e:  # noqa: BLE001 - every outcome is asserted below
                outcomes[i] = e

        threads = [threading.Thread(target=create, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert len(outcomes) == 8
        winners = [i for i, e in outcomes.items() if e is None]
        assert len(winners) == 1, outcomes
        losers = [e for e in outcomes.values() if e is not None]
        assert all(isinstance(e, AlreadyExistsError) for e in losers), losers
        assert store.read(key) == f"writer-{winners[0]}".encode()
        # no temporary file is left behind by the winner or the losers
        assert [f.name for f in store.list("_txcommit/commits")] == ["race.json"]

    # -- 2. replacing writes -------------------------------------------------------------

    def test_write_replacing_creates_then_replaces(self, store: Store) -> None:
        store.write_replacing("_SUCCESS", b"one")
        assert store.read("_SUCCESS") == b"one"
        store.write_replacing("_SUCCESS", b"second version")
        assert store.read("_SUCCESS") == b"second version"
        assert [(f.key, f.size) for f in store.list("")] == [("_SUCCESS", 14)]

    # -- 3. read, list, exists, delete ---------------------------------------------------

    def test_read_of_a_missing_key_is_none(self, store: Store) -> None:
        assert store.read("_txcommit/commits/missing.json") is None
        assert not store.exists("_txcommit/commits/missing.json")
        assert store.list("_txcommit/commits") == []

    def test_list_shows_every_completed_write_and_no_completed_delete(self, store: Store) -> None:
        store.write_replacing("d/a", b"one")
        store.create_exclusive("d/b", b"bb")
        store.create_exclusive("d/sub/c", b"ccc")  # below d/sub: not directly under d
        assert [(f.key, f.size) for f in store.list("d")] == [("d/a", 3), ("d/b", 2)]
        assert [f.key for f in store.list("d/")] == ["d/a", "d/b"]
        assert [f.key for f in store.list("d/sub")] == ["d/sub/c"]
        assert store.exists("d/a") and store.exists("d/sub/c")
        assert store.delete("d/a") is True
        assert not store.exists("d/a") and store.read("d/a") is None
        assert [f.key for f in store.list("d")] == ["d/b"]

    def test_delete_of_a_missing_key_is_no_error(self, store: Store) -> None:
        assert store.delete(f"missing-{uuid.uuid4().hex}") is False
        assert store.delete("no/such/dir/file") is False

    def test_an_object_larger_than_one_upload_part_roundtrips_whole(self, store: Store) -> None:
        big = _big(6 * MIB + 17)  # crosses the 5 MiB part size of S3 multipart uploads
        store.create_exclusive("_txcommit/commits/big.json", big)
        assert store.read("_txcommit/commits/big.json") == big
        bigger = _big(11 * MIB + 5)
        store.write_replacing("data/big.bin", bigger)
        assert store.read("data/big.bin") == bigger
        assert [(f.key, f.size) for f in store.list("data")] == [("data/big.bin", 11 * MIB + 5)]

    # -- keys, errors, requests, readers -------------------------------------------------

    @pytest.mark.parametrize("bad", ["../x", "/etc/passwd", "a//b", "./a", "a/../../b", ""])
    def test_a_key_outside_the_root_is_refused_naming_it(self, store: Store, bad: str) -> None:
        with pytest.raises(StoreError) as caught:
            store.create_exclusive(bad, b"x")
        assert repr(bad) in str(caught.value) and store.root_url in str(caught.value)
        with pytest.raises(StoreError):
            store.read(bad)

    def test_every_request_is_counted(self, store: Store) -> None:
        before = store.requests.total
        store.create_exclusive("c.json", b"c")
        store.list("")
        store.read("c.json")
        assert store.requests.total >= before + 3
        assert {"LIST", "GET"} <= set(store.requests.snapshot())

    def test_errors_carry_no_traceback_of_hidden_causes_and_name_the_key(
        self, store: Store
    ) -> None:
        store.create_exclusive("k.json", b"1")
        with pytest.raises(AlreadyExistsError) as caught:
            store.create_exclusive("k.json", b"2")
        text = "".join(traceback.format_exception(caught.value))
        assert "k.json" in str(caught.value) and "not overwritten" in str(caught.value)
        assert "During handling" not in text and "direct cause" not in text

    def test_an_fsspec_reader_sees_what_the_store_wrote(self, store: Store) -> None:
        store.write_replacing("k=1/part-00000.csv", b"a,b\n1,2\n")
        fs, root = store.fsspec()
        with fs.open(f"{root}/k=1/part-00000.csv", "rb") as f:
            assert f.read() == b"a,b\n1,2\n"

    def test_the_store_carries_its_adapters_declaration(self, store: Store) -> None:
        assert store.declaration.name == self.adapter
        assert store.declaration.exclusive_create
        assert store.primitive == store.declaration.primitive
        assert isinstance(store, MultipartStore) == (store.primitive == "multipart-complete")


class MultipartStoreContract(StoreContract):
    """Tests of ``multipart-complete`` stores, on top of :class:`StoreContract`."""

    def test_an_uncompleted_upload_is_invisible_and_gone_after_abort(
        self, store: MultipartStore
    ) -> None:
        key = "k=1/part-00000-tid-mwrb6d3zh3ckkd3q-1.c000.parquet"
        upload = store.start_multipart(key)
        store.upload_part(upload, 1, b"in flight")
        assert store.read(key) is None and not store.exists(key)
        assert store.list("k=1") == []
        assert store.list_multipart_uploads("k=1") == [upload]
        assert store.list_multipart_uploads("") == [upload]
        assert store.list_multipart_uploads("k=2") == []
        store.abort_multipart(upload)
        assert store.list_multipart_uploads("") == []
        assert store.read(key) is None and store.list("k=1") == []
        store.abort_multipart(upload)  # aborting twice is no error

    def test_a_completed_upload_becomes_visible_whole(self, store: MultipartStore) -> None:
        key = "k=2/part-00001-tid-mwrb6d3zh3ckkd3q-2.c000.parquet"
        first, second = _big(5 * MIB), b"the tail"
        upload = store.start_multipart(key)
        parts = [store.upload_part(upload, 2, second), store.upload_part(upload, 1, first)]
        assert store.list("k=2") == []
        store.complete_multipart(upload, parts)
        assert store.read(key) == first + second
        assert [(f.key, f.size) for f in store.list("k=2")] == [(key, len(first) + len(second))]
        assert store.list_multipart_uploads("") == []

    def test_completing_an_aborted_upload_fails_naming_the_key(self, store: MultipartStore) -> None:
        key = "k=3/f.parquet"
        upload = store.start_multipart(key)
        part = store.upload_part(upload, 1, b"x")
        store.abort_multipart(upload)
        with pytest.raises(StoreError) as caught:
            store.complete_multipart(upload, [part])
        assert store.url_for(key) in str(caught.value)
        assert store.read(key) is None

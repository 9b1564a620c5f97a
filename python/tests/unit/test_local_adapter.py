"""The local adapter's Python store beyond the store contract."""

from __future__ import annotations

from pathlib import Path

import pytest

from txcommit.adapters import (
    LocalStore,
)
from txcommit.errors import (
    StoreError,
)


def test_local_store_on_a_missing_root_reads_as_empty_and_writes_create_it(
    tmp_path: Path,
) -> None:
    root = tmp_path / "not" / "yet"
    store = LocalStore(root)
    assert store.read("a") is None and store.list("") == [] and not store.exists("a")
    assert store.delete("a") is False
    assert not root.exists()
    store.create_exclusive("_txcommit/commits/a.json", b"1")
    assert (root / "_txcommit" / "commits" / "a.json").read_bytes() == b"1"


def test_local_store_failures_name_the_file_and_say_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "t").write_bytes(b"a file where a directory should be")
    store = LocalStore(tmp_path)
    with pytest.raises(StoreError) as caught:
        store.create_exclusive("t/x.json", b"1")
    assert f"file://{tmp_path}/t/x.json" in str(caught.value)
    assert "Check that the directory exists" in str(caught.value)

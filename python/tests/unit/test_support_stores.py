"""The end-to-end tests pick a store through its descriptor and declaration
(support/stores.py): the same server arguments and session confs the tests named by hand."""

from __future__ import annotations

import pytest

from support.stores import server_args, session_confs


@pytest.mark.parametrize(
    ("store", "args"),
    [
        ("local", ["--store", "local"]),
        ("s3", ["--store", "s3"]),
        ("s3-multipart", ["--store", "s3-multipart"]),
        ("gcs", ["--store", "gcs"]),
        ("azure", ["--store", "azure"]),
    ],
)
def test_a_server_of_a_store_starts_no_emulator_of_its_own(store: str, args: list[str]) -> None:
    assert server_args(store) == args


@pytest.mark.parametrize("store", ["s3", "s3-multipart"])
def test_a_store_sharing_its_scheme_is_named_for_it(store: str) -> None:
    """s3a:// is served by two adapters: a session names the one under test."""
    assert session_confs(store) == {"spark.txcommit.adapter.s3a": store}


@pytest.mark.parametrize("store", ["local", "hdfs", "gcs", "azure"])
def test_a_store_alone_on_its_scheme_needs_no_conf(store: str) -> None:
    assert session_confs(store) == {}

"""The S3 stores' Python code beyond the store contract: conditional PUTs as the endpoint
sees them, the If-None-Match probe, request counts and credentials."""

from __future__ import annotations

import os
import re
import traceback
import uuid
from collections import Counter

import pytest

from txcommit.adapters import (
    open_store,
)
from txcommit.errors import (
    AlreadyExistsError,
    StoreError,
    UnsupportedStoreError,
)
from txcommit_store_s3 import DUMMY_KEY
from txcommit_store_s3.devkit.emulator import LocalS3, fault_state, fetch_requests, lose_responses
from txcommit_store_s3.store import S3MultipartStore, S3Store

from support.s3 import LYING_BUCKET, fresh_s3_url, s3_options

SECRET = "do-not-show-me-" + uuid.uuid4().hex


def test_s3_create_is_a_conditional_put_refused_with_412(local_s3: LocalS3) -> None:
    store = S3Store(fresh_s3_url(), **s3_options(local_s3))
    since = fetch_requests(local_s3.endpoint)["next"]
    store.create_exclusive("_txcommit/commits/a.json", b"1")
    with pytest.raises(AlreadyExistsError):
        store.create_exclusive("_txcommit/commits/a.json", b"2")
    puts = [r for r in fetch_requests(local_s3.endpoint, since)["requests"] if r["op"] == "PUT"]
    assert [r["status"] for r in puts] == [200, 412]
    store.check_ready()  # an honest endpoint passes the probe, which cleans up after itself
    assert store.list("_txcommit/probe") == []


def test_a_lost_create_that_cannot_be_read_back_is_unknown_not_a_conflict(
    local_s3: LocalS3,
) -> None:
    """The create's answer is lost, its resend refused, and reading the object back fails:
    whether it is this create's own is unknown, which the error says (not a conflict)."""
    store = S3Store(fresh_s3_url(), **s3_options(local_s3))
    key = "_txcommit/commits/unknown.json"
    lose_responses(local_s3.endpoint, f"^PUT .*/{re.escape(key)}$", fail_read_back=True)
    try:
        with pytest.raises(StoreError, match="may have landed") as caught:
            store.create_exclusive(key, b"mine")
        state = fault_state(local_s3.endpoint)
    finally:
        lose_responses(local_s3.endpoint, "", count=0)
    assert not isinstance(caught.value, AlreadyExistsError)
    assert len(state["lost"]) == 1 and state["refused"], "the answer and the read-back failed"
    assert store.read(key) == b"mine", "the first attempt had landed"


def test_an_endpoint_ignoring_if_none_match_overwrites_and_check_ready_catches_it(
    lying_s3: LocalS3,
) -> None:
    store = S3Store(fresh_s3_url(bucket=LYING_BUCKET), **s3_options(lying_s3))
    store.create_exclusive("_txcommit/commits/a.json", b"first")
    store.create_exclusive("_txcommit/commits/a.json", b"second")  # the liar accepts it
    assert store.read("_txcommit/commits/a.json") == b"second"
    with pytest.raises(UnsupportedStoreError) as caught:
        store.check_ready()
    message = str(caught.value)
    assert "ignored If-None-Match: *" in message and lying_s3.endpoint in message
    assert store.list("_txcommit/probe") == []


def test_s3_request_counts_match_what_the_endpoint_served(local_s3: LocalS3) -> None:
    store = S3MultipartStore(fresh_s3_url(), **s3_options(local_s3))
    since = fetch_requests(local_s3.endpoint)["next"]
    store.create_exclusive("c.json", b"c")
    store.write_replacing("_SUCCESS", b"s")
    store.write_replacing("big", os.urandom(11 * 1024 * 1024))
    store.read("c.json")
    store.read("missing")
    store.list("")
    store.exists("c.json")
    store.delete("c.json")
    store.delete("missing")
    upload = store.start_multipart("d/f")
    part = store.upload_part(upload, 1, b"x")
    store.complete_multipart(upload, [part])
    store.abort_multipart(store.start_multipart("d/g"))
    store.list_multipart_uploads("d")
    served = Counter(r["op"] for r in fetch_requests(local_s3.endpoint, since)["requests"])
    assert store.requests.snapshot() == dict(served)
    assert served["MULTIPART_PART"] == 3 + 1  # 11 MiB in 5 MiB parts, and one explicit part


def test_s3_credentials_never_show_in_reprs_or_errors(local_s3: LocalS3) -> None:
    store = S3MultipartStore(
        f"s3://no-such-bucket-{uuid.uuid4().hex[:8]}/t",
        **s3_options(local_s3, secret_access_key=SECRET, session_token=SECRET + "-token"),
    )
    assert SECRET not in repr(store) and SECRET not in str(vars(store))
    failures: list[BaseException] = []
    for attempt in (
        lambda: store.read("k"),
        lambda: store.list(""),
        lambda: store.create_exclusive("k", b"1"),
        lambda: store.start_multipart("k"),
    ):
        with pytest.raises(StoreError) as caught:
            attempt()
        failures.append(caught.value)
    for e in failures:
        text = "".join(traceback.format_exception(e)) + repr(e)
        assert SECRET not in text
        assert store.root_url in str(e)
    assert "does not exist" in str(failures[0]) and "create it" in str(failures[0])


def test_s3_credentials_from_the_environment_work_and_stay_hidden(
    local_s3: LocalS3, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", DUMMY_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", local_s3.endpoint)
    store = open_store(fresh_s3_url("s3a"))
    assert isinstance(store, S3Store) and store.endpoint == local_s3.endpoint
    assert store.path_style and store.allow_http
    store.create_exclusive("x.json", b"via env")
    assert store.read("x.json") == b"via env"
    assert SECRET not in repr(store)


def test_credentials_in_an_s3_url_are_refused_without_showing_them() -> None:
    with pytest.raises(StoreError) as caught:
        S3Store(f"s3://AKIDEXAMPLE:{SECRET}@bucket/t")
    assert SECRET not in str(caught.value) and "s3://bucket/t" in str(caught.value)
    with pytest.raises(StoreError, match="only one of"):
        S3Store("s3://bucket/t", endpoint="http://127.0.0.1:1", access_key_id="k")

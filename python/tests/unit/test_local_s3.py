"""The local S3 endpoint (moto behind :class:`~txcommit_store_s3.devkit.emulator.S3Front`) serves an
object as S3 does while it is replaced: the old object or the new one, whole, never an error or
a mix. The read attacks run readers beside writers on it; a fault of the endpoint would fail
them for the wrong reason."""

from __future__ import annotations

import threading
import time
import uuid

import pytest

from txcommit_store_s3.devkit.emulator import LocalS3

from support.s3 import TEST_BUCKET

SIZE = 6 << 20  # large enough that moto is still reading an object when the next PUT lands
SECONDS = 8


def test_a_read_while_the_object_is_replaced_gets_one_version_whole(s3_client) -> None:
    key = f"replaced-while-read/{uuid.uuid4().hex}"
    versions = (b"a" * SIZE, b"b" * SIZE)
    s3_client.put_object(Bucket=TEST_BUCKET, Key=key, Body=versions[0])
    stop = time.monotonic() + SECONDS
    puts, reads, wrong = [0], [0], []

    def writer() -> None:
        while time.monotonic() < stop:
            s3_client.put_object(Bucket=TEST_BUCKET, Key=key, Body=versions[puts[0] % 2])
            puts[0] += 1

    def reader() -> None:
        while time.monotonic() < stop:
            try:
                got = s3_client.get_object(Bucket=TEST_BUCKET, Key=key)["Body"].read()
            except Exception as e:
                wrong.append(repr(e)[:200])
                continue
            reads[0] += 1
            if got not in versions:
                wrong.append(f"{len(got)} bytes of neither version")

    threads = [
        threading.Thread(target=writer),
        *(threading.Thread(target=reader) for _ in range(2)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert puts[0] > 10 and reads[0] > 10, f"reads and writes must overlap: {puts[0]}, {reads[0]}"
    assert not wrong, f"{len(wrong)} of {reads[0] + len(wrong)} reads went wrong: {wrong[:3]}"


def test_a_lost_answer_with_a_failing_read_back_leaves_the_writer_unable_to_tell(
    s3_client, local_s3: LocalS3
) -> None:
    """`--fail-read-back`: the write lands, its answer is lost (the client's resend is
    answered), and every read of that key fails until the fault is armed again; other keys
    read as usual."""
    from botocore.exceptions import ClientError

    key = f"read-back/{uuid.uuid4().hex}"
    assert local_s3.front is not None
    local_s3.front.lose.arm(f"PUT {TEST_BUCKET}/{key}$", 1, fail_read_back=True)
    s3_client.put_object(Bucket=TEST_BUCKET, Key=key, Body=b"landed")  # resent, then answered
    s3_client.put_object(Bucket=TEST_BUCKET, Key=key + "-other", Body=b"x")
    for read in (
        lambda: s3_client.get_object(Bucket=TEST_BUCKET, Key=key),
        lambda: s3_client.head_object(Bucket=TEST_BUCKET, Key=key),
    ):
        with pytest.raises(ClientError) as failed:
            read()
        assert failed.value.response["ResponseMetadata"]["HTTPStatusCode"] == 500
    assert s3_client.get_object(Bucket=TEST_BUCKET, Key=key + "-other")["Body"].read() == b"x"
    state = local_s3.front.lose.state()
    assert state["lost"] == [f"PUT {TEST_BUCKET}/{key}"]
    assert f"GET {TEST_BUCKET}/{key}" in state["refused"]
    local_s3.front.lose.arm("", 0)  # disarmed: the write had landed
    assert s3_client.get_object(Bucket=TEST_BUCKET, Key=key)["Body"].read() == b"landed"

"""`txcommit bench-streaming`'s bookkeeping (the measurement itself needs a server and runs
by hand: `txcommit bench-streaming`; its output is in docs/streaming.md)."""

from __future__ import annotations

from collections import Counter

from txcommit.bench.streaming import Result, _checkpoint_key, format_table, main
from txcommit.cli import PASSTHROUGH


def test_requests_are_attributed_to_checkpoint_areas_and_nothing_else():
    p = "bench/x-1/"
    assert _checkpoint_key(p + "ckpt/offsets/3", p) == "offsets"
    assert _checkpoint_key(p + "ckpt/state/0/1/2.delta", p) == "state"
    assert _checkpoint_key(p + "ckpt", p) == "ckpt"
    assert _checkpoint_key(p + "out/_spark_metadata/0", p) == "_spark_metadata"
    assert _checkpoint_key(p + "out/part-00000-abc.parquet", p) is None, "sink data is not counted"
    assert _checkpoint_key("bench/other-2/ckpt/offsets/3", p) is None, "another run's keys"


def test_table_shows_requests_per_batch_with_multipart_and_deletes_folded():
    counts = Counter(
        {
            "PUT": 10,
            "HEAD": 5,
            "MULTIPART_INITIATE": 2,
            "MULTIPART_COMPLETE": 2,
            "DELETE": 1,
            "DELETE_BULK": 1,
        }
    )
    table = format_table([Result("m", 5, counts)])
    assert table.splitlines()[2] == "| m | 2.0 | 0.0 | 1.0 | 0.0 | 0.0 | 0.4 | 0.8 | 4.2 |"


def test_unknown_manager_is_refused_with_the_known_ones(capsys):
    assert main(["--managers", "nope"]) == 2
    err = capsys.readouterr().err
    assert "nope" in err and "txcommit-s3" in err and "spark-filecontext" in err


def test_the_command_is_registered():
    assert PASSTHROUGH["bench-streaming"][0] == "txcommit.bench.streaming"

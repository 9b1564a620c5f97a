"""The view's record cache and its use of every record, as the JVM's read filter does."""

from __future__ import annotations

import os
from pathlib import Path

from txcommit.table import format as log
from txcommit.table.view import open_table


def write(table: Path, rel: str, data: bytes = b"abc") -> None:
    f = table / rel
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_bytes(data)


def record(txn: str, added: list[str], **v2: object) -> log.CommitRecord:
    return log.CommitRecord(
        txn=txn,
        token="token",
        job_id="job",
        started_at=1,
        committed_at=2,
        added=tuple(log.AddedFile(p, 3) for p in added),
        writer="test",
        **v2,  # type: ignore[arg-type]
    )


def visible(table: Path) -> set[str]:
    return {f.path for f in open_table(table).visible_files()}


def test_a_table_created_anew_does_not_reuse_its_predecessors_cached_record(
    tmp_path: Path,
) -> None:
    txn = log.generate_txn()
    a, b = (log.data_file_name(p, 0, txn, 1, ".parquet") for p in ("a/", "b/"))
    write(tmp_path, a)
    write(tmp_path, b)
    key = f"_txcommit/commits/{txn}.json"
    write(tmp_path, key, log.encode_record(record(txn, [a])))
    assert visible(tmp_path) == {a}
    # The table is deleted and written again: a record of the same key and size, later.
    first = (tmp_path / key).stat()
    write(tmp_path, key, log.encode_record(record(txn, [b])))
    assert (tmp_path / key).stat().st_size == first.st_size
    os.utime(tmp_path / key, ns=(first.st_atime_ns, first.st_mtime_ns + 2_000_000_000))
    assert visible(tmp_path) == {b}

"""Reading a table directory as the tests see it on disk (independent of the plugin's code)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from txcommit.table.records import AddedFile, CommitRecord

TXN_FILE = re.compile(r".*-tid-([0-9a-z]{16})-([0-9]+)(?:[-.].*)?$")


def data_files(table: Path) -> list[Path]:
    """Every data file on disk (hidden and underscore files excluded, as Spark does)."""
    out = []
    for p in table.rglob("*"):
        rel = p.relative_to(table)
        if p.is_file() and not any(part.startswith(("_", ".")) for part in rel.parts):
            out.append(p)
    return sorted(out)


def txn_of(path: Path) -> str | None:
    m = TXN_FILE.match(path.name)
    return m.group(1) if m else None


def committed(table: Path) -> dict[str, dict]:
    """txn -> commit record, read straight from _txcommit/commits/."""
    commits = table / "_txcommit" / "commits"
    if not commits.exists():
        return {}
    return {p.stem: json.loads(p.read_text()) for p in commits.glob("*.json")}


def committed_paths(table: Path) -> set[str]:
    return {f["path"] for rec in committed(table).values() for f in rec["added"]}


def plant_uncommitted_copy(table: Path) -> Path:
    """Copies a committed data file under a new, never-committed transaction id.

    The copy holds real rows, so a reader that failed to hide it would count them twice.
    """
    src = next(p for p in data_files(table) if txn_of(p))
    txn = txn_of(src)
    assert txn is not None
    dst = src.with_name(src.name.replace(txn, "zzzzzzzzzzzzzzzz"))
    shutil.copyfile(src, dst)
    return dst


def write(table: Path, rel: str, data: bytes = b"abc") -> None:
    """Writes ``data`` at ``rel`` below ``table``, creating directories (hand-built tables)."""
    f = table / rel
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_bytes(data)


def record(txn: str, added: list[str], **v2: Any) -> CommitRecord:
    """A commit record of ``txn`` adding ``added`` (3 bytes each); ``v2``: format 2 fields."""
    return CommitRecord(
        txn=txn,
        token="token",
        job_id="job",
        started_at=1,
        committed_at=2,
        added=tuple(AddedFile(p, 3) for p in added),
        writer="test",
        **v2,
    )

"""The golden vectors' logical records and checkpoints as the Python model (the JVM's twin:
Vectors.record)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from txcommit.adapters import Store
from txcommit.table.checkpoints import Checkpoint, SchemaMark
from txcommit.table.records import AddedFile, CommitRecord, RemovedFile, encode_record


def logical(n: dict[str, Any]) -> CommitRecord:
    """A logical record of ``records.json`` or ``tables.json`` as a ``CommitRecord``."""
    return CommitRecord(
        txn=n["txn"],
        token=n["token"],
        job_id=n["jobId"],
        started_at=n["startedAt"],
        committed_at=n["committedAt"],
        added=tuple(AddedFile(f["path"], f["size"]) for f in n["added"]),
        app_id=n["appId"],
        writer=n["writer"],
        operation=n["operation"],
        write_id=n["writeId"],
        sequence=n["sequence"],
        scope=tuple(n["scope"]),
        removed=tuple(removed_file(f) for f in n["removed"]),
        schema=n.get("schema"),
        restored=tuple(removed_file(f) for f in n.get("restored", [])),
    )


def logical_checkpoint(n: dict[str, Any]) -> Checkpoint:
    """A logical checkpoint of ``checkpoints.json`` or ``tables.json`` as a ``Checkpoint``."""
    return Checkpoint(
        number=n["checkpoint"],
        created_at=n["createdAt"],
        app_id=n["appId"],
        writer=n["writer"],
        through=n["through"],
        committed={
            c["txn"]: tuple(AddedFile(f["path"], f["size"]) for f in c["files"])
            for c in n["committed"]
        },
        removed=tuple(removed_file(f) for f in n["removed"]),
        # absent: a checkpoint from before it carried the schema; null: no record carries one
        schema=None
        if n.get("schema") is None
        else SchemaMark(n["schema"]["txn"], n["schema"]["committedAt"], n["schema"]["ddl"]),
        schema_known="schema" in n,
        reads=n.get("reads"),
    )


def removed_file(n: dict[str, Any]) -> RemovedFile:
    """A ``removed`` or ``restored`` entry: ``path``, ``size`` and, for a file without a txn id,
    ``modifiedAt``."""
    return RemovedFile(n["path"], n["size"], n.get("modifiedAt"))


def write_table(store: Store, case: dict[str, Any]) -> None:
    """A case of ``tables.json`` without ``stat``, written through ``store``: its files (3 bytes
    each) and its records."""
    for rel in case["files"]:
        store.write_replacing(rel, b"abc")
    for r in case["records"]:
        store.write_replacing(r["file"], encode_record(logical(r["record"])))


def place_files(root: Path, case: dict[str, Any]) -> None:
    """A case's ``files`` under ``root``: 3 bytes each, or, for a file its optional ``stat``
    names, that ``size`` in bytes and the modification time ``modifiedAt`` (epoch ms)."""
    for rel in case["files"]:
        f = root / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        stat = case.get("stat", {}).get(rel)
        f.write_bytes(b"a" * stat["size"] if stat else b"abc")
        if stat:
            ns = stat["modifiedAt"] * 1_000_000
            os.utime(f, ns=(ns, ns))


def table_reads(case: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """A case's reads: (root, visible) at the listing's own directory, then at its other roots."""
    return [("", case["visible"])] + [(r["root"], r["visible"]) for r in case.get("reads", [])]

"""The local file system's test kit: tables in a directory; the store contract on the Python
store, with txcommit's durable create and with obstore's own ``put(mode="create")``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from txcommit.adapters import LocalStore
from txcommit.devkit.testkit import StoreTestKit


def _table(store: str, name: str, workdir: Path, _: None) -> dict[str, Any]:
    path = workdir / "tables" / name
    return {"url": str(path), "local": path}


KIT = StoreTestKit(
    fixture=None,
    table=_table,
    contract={
        "": lambda store, _, tmp: LocalStore(tmp / "table"),
        # link(2) without fsync keeps the contract too.
        "WithObstoreCreate": lambda store, _, tmp: LocalStore(f"file://{tmp}/table", durable=False),
    },
    kill_points=("task.beforeCommit", "job.beforeRecord", "job.afterRecord"),
)

"""Multi-table transactions as the tests see them in the stores (docs/protocol.md, I33-I37):
the fault points a transaction passes, its decisions and its prepared records, read raw."""

from __future__ import annotations

import json
from typing import Any

from support.tables import TableRef

#: Every fault point a multi-table transaction passes, in order: each write's job setup, task
#: and job commit up to its prepared record, the decision, then each table's derived work
#: (`job.duringCleanup` only where a write made two directories or more).
TRANSACTION_POINTS = (
    "job.afterNestingCheck",
    "task.beforeCommit",
    "job.duringPublishData",
    "job.beforeRecord",
    "job.afterRecord",
    "transaction.beforeDecision",
    "transaction.afterDecision",
    "job.beforeSuccess",
    "job.duringCleanup",
)
#: Those after the decision's create: a transaction killed there committed, in every table.
DECIDED_POINTS = ("transaction.afterDecision", "job.beforeSuccess", "job.duringCleanup")


def decisions(table: TableRef) -> list[dict[str, Any]]:
    """The decisions ``table``'s log keeps (of the transactions that wrote it first)."""
    return [
        json.loads(table.read(k) or b"{}")
        for k in table.objects()
        if k.startswith("_txcommit/groups/") and k.count("/") == 2
    ]


def prepared_groups(*tables: TableRef, areas: tuple[str, ...] = ("commits", "replace")) -> set[str]:
    """The transactions of the prepared records in the ``areas`` of ``tables``' logs."""
    out = set()
    for t in tables:
        for k in t.objects():
            if k.startswith(tuple(f"_txcommit/{x}/" for x in areas)) and k.endswith(".json"):
                group = json.loads(t.read(k) or b"{}").get("group")
                if group:
                    out.add(group["id"])
    return out

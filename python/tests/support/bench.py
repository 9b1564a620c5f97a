"""The ``meta`` of a results.json that ``txcommit bench``'s report renders (a section's rows
are tested with it)."""

from __future__ import annotations

from typing import Any


def report_meta(**changes: Any) -> dict[str, Any]:
    """A one-run ``meta`` of a small run, with ``changes``."""
    meta: dict[str, Any] = {
        "date": "d",
        "elapsed_s": 60,
        "machine": "m",
        "master": "local[4]",
        "hadoop_cloud": "h.jar",
        "sizes": {
            "partitions": 10,
            "overwrite_files": [],
            "rows_per_file": 10,
            "seed_rows": 0,
            "seed_partitions": 1,
        },
    }
    meta.update(changes)
    return meta

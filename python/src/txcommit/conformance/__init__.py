"""The adapter conformance kit: does a store keep the promise its adapter declares?

Level 2 (the protocol) runs the fault scenarios of :mod:`txcommit.conformance.protocol` through
a Spark Connect server it starts on the store (adapters with a JVM implementation only).
Level 1 (the primitive) runs the checks of :mod:`txcommit.testing.checks` against a live
store and certifies only what the adapter's declaration (``<name>.json`` in its store's folder)
promises. From a shell::

    txcommit conformance --store s3://bucket/prefix [--adapter s3] [--endpoint URL] \\
        [--report out.json]

From a store's own test suite: ``run_level1(store)`` returns a :class:`Report`
(``report.certified``, ``report.table()``, ``report.to_json()``). See docs/conformance.md.
"""

from __future__ import annotations

from txcommit.conformance.cli import main
from txcommit.conformance.protocol import (
    VISIBLE_AFTER_HALT,
    ProtocolTarget,
    run_level2,
    target_for,
)
from txcommit.conformance.runner import (
    EXIT_CERTIFIED,
    EXIT_FAILED,
    EXIT_USAGE,
    FAIL,
    NOT_AVAILABLE,
    NOT_DECLARED,
    PASS,
    Report,
    Row,
    run_level1,
    write_report,
)
from txcommit.testing.checks import CHECKS, Check, CheckContext, CheckFailed

__all__ = [
    "CHECKS",
    "EXIT_CERTIFIED",
    "EXIT_FAILED",
    "EXIT_USAGE",
    "FAIL",
    "NOT_AVAILABLE",
    "NOT_DECLARED",
    "PASS",
    "Check",
    "CheckContext",
    "CheckFailed",
    "Report",
    "Row",
    "VISIBLE_AFTER_HALT",
    "ProtocolTarget",
    "main",
    "run_level1",
    "run_level2",
    "target_for",
    "write_report",
]

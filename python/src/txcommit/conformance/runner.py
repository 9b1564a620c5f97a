"""Runs the Level 1 checks on one store, times them, and builds the report: a table for the
terminal, a JSON document for machines, and an exit code for CI.

From a store's own test suite::

    from txcommit.conformance import run_level1

    def test_my_store_is_certified(tmp_path):
        report = run_level1(open_store(str(tmp_path)))
        assert report.certified, report.table()
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from txcommit._console import text
from txcommit.adapters.base import MultipartStore, Store, mask
from txcommit.adapters.declarations import AdapterDeclaration
from txcommit.adapters.local import LocalStore
from txcommit.errors import TxCommitError
from txcommit.testing.checks import CHECKS, MIB, Check, CheckContext, CheckFailed

PASS = "pass"
FAIL = "fail"
NOT_DECLARED = "not declared"
#: A Level 2 scenario that cannot run here (the adapter has no JVM implementation): not a pass.
NOT_AVAILABLE = "not available"

EXIT_CERTIFIED = 0
EXIT_FAILED = 1
EXIT_USAGE = 2

#: Environment variables whose values never appear in a report, a table or an error.
SECRET_ENV = ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AZURE_STORAGE_ACCOUNT_KEY")


@dataclass(frozen=True)
class Row:
    """One check's outcome."""

    name: str
    capability: str
    result: str  # pass | fail | not declared
    seconds: float
    explanation: str
    #: 1: the primitive (Level 1); 2: the protocol through Spark (Level 2).
    level: int = 1

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "level": self.level,
            "capability": self.capability,
            "result": self.result,
            "seconds": self.seconds,
            "explanation": self.explanation,
        }


@dataclass
class Report:
    """The outcome of a Level 1 run on one store."""

    adapter: str
    declaration: AdapterDeclaration
    store: str
    endpoint: str | None
    rows: list[Row]
    cleanup: dict[str, Any] = field(default_factory=dict)
    #: The levels that ran: (1,), (2,) or (1, 2).
    levels: tuple[int, ...] = (1,)

    @property
    def failed(self) -> list[Row]:
        return [r for r in self.rows if r.result == FAIL]

    @property
    def unavailable(self) -> list[Row]:
        return [r for r in self.rows if r.result == NOT_AVAILABLE]

    @property
    def certified(self) -> bool:
        """Every declared check of every level asked for ran and passed (and at least one
        was declared); a level that is not available is not certified."""
        return not self.failed and not self.unavailable and any(r.result == PASS for r in self.rows)

    def level_verdicts(self) -> dict[str, str]:
        """``{"1": "certified" | "failed" | "not available", ...}`` for the levels that ran."""
        out = {}
        for level in self.levels:
            rows = [r for r in self.rows if r.level == level]
            if any(r.result == FAIL for r in rows):
                out[str(level)] = "failed"
            elif any(r.result == NOT_AVAILABLE for r in rows) or not rows:
                out[str(level)] = "not available"
            else:
                out[str(level)] = "certified"
        return out

    @property
    def exit_code(self) -> int:
        return EXIT_CERTIFIED if self.certified else EXIT_FAILED

    def row(self, name: str) -> Row:
        return next(r for r in self.rows if r.name == name)

    def summary(self) -> str:
        d = self.declaration
        where = f" at {self.endpoint}" if self.endpoint else ""
        levels = "" if self.levels == (1,) else f" at level {' and '.join(map(str, self.levels))}"
        if self.certified:
            return f"certified{levels}: {d.name} ({d.primitive}) on {self.store}/{where}"
        why = []
        if self.failed:
            names = ", ".join(r.name for r in self.failed)
            n = len(self.failed)
            kind = "declared check" if self.levels == (1,) else "check"
            why.append(f"{n} {kind}{'s' if n != 1 else ''} failed ({names})")
        if self.unavailable:
            why.append(f"level 2 {self.unavailable[0].explanation}")
        what = f"{d.name} ({d.primitive}) on {self.store}/{where}"
        return f"NOT certified{levels}: {'; '.join(why)}; {what}"

    def table(self) -> str:
        """The rows as an aligned text table, the explanations of failures, and the summary."""
        header = ("check", "capability", "result", "time")
        cells = [header] + [
            (
                r.name,
                r.capability,
                r.result.upper() if r.result == FAIL else r.result,
                f"{r.seconds:.2f}s" if r.result not in (NOT_DECLARED, NOT_AVAILABLE) else "-",
            )
            for r in self.rows
        ]
        out = [text(cells[0], cells[1:], sep=" | ", rule=True)]
        for r in self.failed:
            out.append(f"FAIL {r.name}: {r.explanation}")
        if self.cleanup.get("left"):
            out.append(
                f"cleanup: could not delete {len(self.cleanup['left'])} object(s) under "
                f"{self.store}/: {self.cleanup.get('error', '')}"
            )
        out.append(self.summary())
        return "\n".join(out)

    def to_json(self) -> dict[str, Any]:
        from txcommit import __version__

        d = self.declaration
        return {
            "adapter": self.adapter,
            "declaration": {
                "name": d.name,
                "title": d.title,
                "primitive": d.primitive,
                "exclusiveCreate": d.exclusive_create,
                "listing": d.listing,
                "schemes": list(d.schemes),
                "defaultFor": list(d.default_for),
            },
            "store": self.store,
            "endpoint": self.endpoint,
            "level": self.levels[0] if len(self.levels) == 1 else "all",
            "levels": self.level_verdicts(),
            "checks": [r.to_json() for r in self.rows],
            "certified": self.certified,
            "cleanup": self.cleanup,
            "txcommitVersion": __version__,
        }


def scrub(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every credential from the environment (and ``secrets``) masked."""
    return mask(text, [*(os.environ.get(name, "") for name in SECRET_ENV), *secrets])


def _run_one(check: Check, ctx: CheckContext) -> Row:
    d = ctx.declaration
    capability = check.capability(d)
    if not check.applies(d):
        return Row(
            check.name,
            capability,
            NOT_DECLARED,
            0.0,
            f"adapter '{d.name}' ({d.primitive}, listing {d.listing}) does not declare "
            f"{capability}; not tested, not certified",
        )
    start = time.monotonic()
    try:
        check.run(ctx)
    except CheckFailed as e:
        result, why = FAIL, str(e)
    except TxCommitError as e:
        result, why = FAIL, f"the store failed during the check: {e}"
    except Exception as e:
        result, why = FAIL, f"the check crashed: {type(e).__name__}: {e}"
    else:
        result, why = PASS, check.proves
    seconds = round(time.monotonic() - start, 3)
    return Row(check.name, capability, result, seconds, scrub(why))


def _cleanup(ctx: CheckContext) -> dict[str, Any]:
    """Deletes what the checks wrote and aborts their uploads (best effort)."""
    store = ctx.store
    left: list[str] = []
    error = ""
    deleted = 0
    if isinstance(store, MultipartStore):
        for upload in ctx.uploads:
            try:
                store.abort_multipart(upload)
            except TxCommitError as e:
                error = error or str(e)
    for key in sorted(ctx.written):
        try:
            if store.delete(key):
                deleted += 1
        except TxCommitError as e:
            left.append(key)
            error = error or str(e)
    if isinstance(store, LocalStore):
        for check in CHECKS:  # the check directories and those below, if empty (never the root)
            top = store.root / check.name
            for d in sorted((p for p in top.glob("**/*") if p.is_dir()), reverse=True):
                with contextlib.suppress(OSError):
                    d.rmdir()
            with contextlib.suppress(OSError):
                top.rmdir()
    result: dict[str, Any] = {"deleted": deleted, "left": left}
    if error:
        result["error"] = scrub(error.splitlines()[0])
    return result


def run_level1(
    store: Store,
    *,
    writers: int = 16,
    large_mib: int = 12,
    checks: Sequence[Check] = CHECKS,
    cleanup: bool = True,
) -> Report:
    """Runs the Level 1 checks on ``store`` (an open :class:`Store`; give it a scratch root:
    every key is written below ``<root>/<check name>/`` and deleted afterwards) and returns
    the :class:`Report`. ``report.certified`` is True when every check the adapter's
    declaration promises passed; ``report.table()`` explains any failure in plain words."""
    if writers < 2:
        raise ValueError("writers must be at least 2 (a race needs two writers)")
    if large_mib < 1:
        raise ValueError("large_mib must be at least 1")
    ctx = CheckContext(store, writers=writers, large_bytes=large_mib * MIB)
    rows = [_run_one(check, ctx) for check in checks]
    done = _cleanup(ctx) if cleanup else {"deleted": 0, "left": sorted(ctx.written)}
    return Report(
        adapter=store.declaration.name,
        declaration=store.declaration,
        store=scrub(store.root_url),
        endpoint=getattr(store, "endpoint", None),
        rows=rows,
        cleanup=done,
    )


def write_report(report: Report, path: str) -> None:
    """Writes the JSON report to ``path`` (credentials scrubbed)."""
    text = scrub(json.dumps(report.to_json(), indent=2)) + "\n"
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


__all__ = [
    "EXIT_CERTIFIED",
    "EXIT_FAILED",
    "EXIT_USAGE",
    "FAIL",
    "NOT_AVAILABLE",
    "NOT_DECLARED",
    "PASS",
    "Report",
    "Row",
    "run_level1",
    "scrub",
    "write_report",
]

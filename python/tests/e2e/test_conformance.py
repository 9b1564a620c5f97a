"""The adapter conformance kit, Level 2 (``txcommit conformance --level 2``): the protocol
through a real Spark Connect server with the plugin, on the local file system."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from txcommit.conformance import FAIL, PASS
from txcommit.conformance.protocol import VISIBLE_AFTER_HALT

from support.servers import server_python


def results(report: dict[str, Any]) -> dict[str, str]:
    return {c["name"]: c["result"] for c in report["checks"]}


def run_kit(argv: list[str], tmp_path: Path) -> tuple[int, dict[str, Any], str]:
    """The kit as a user runs it for Level 2: in the server-side venv (it starts a server)."""
    out = tmp_path / "report.json"
    done = subprocess.run(
        [server_python(), "-m", "txcommit.conformance", *argv, "--report", str(out)],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=tmp_path,
    )
    printed = done.stdout + done.stderr
    return done.returncode, json.loads(out.read_text()) if out.exists() else {}, printed


def test_level_2_certifies_the_local_file_system(tmp_path: Path) -> None:
    # One point, where the crashed job must roll forward: conformance/certify runs both sides
    # of the commit point on every store (each costs a server restart), test_faults.py more.
    points = ["job.afterRecord"]
    argv = ["--store", str(tmp_path / "store"), "--level", "2", "--halt-points", ",".join(points)]
    code, report, printed = run_kit(argv, tmp_path)
    assert code == 0, printed
    assert report["levels"] == {"2": "certified"} and report["certified"] is True
    got = results(report)
    expected = ["task-retry", "duplicate-attempts", "persistent-task-failure"]
    expected += [f"driver-killed:{p}" for p in points] + ["reader-check"]
    assert set(points) < set(VISIBLE_AFTER_HALT)
    assert list(got) == expected and set(got.values()) == {PASS}, printed
    reader = next(c for c in report["checks"] if c["name"] == "reader-check")
    hidden = int(reader["explanation"].split("(")[1].split(" ")[0])
    assert hidden > 0, "the raw listing held uncommitted files the reader had to hide"
    assert list((tmp_path / "store").iterdir()) == []  # cleaned up


def test_a_level_2_failure_is_reported_as_a_failure(tmp_path: Path) -> None:
    """Sessions with the read filter switched off see what the protocol leaves uncommitted:
    the kit must say so, not certify."""
    argv = ["--store", str(tmp_path / "store"), "--level", "2", "--halt-points", "none"]
    argv += ["--session-conf", "spark.txcommit.read.filter=false"]
    code, report, printed = run_kit(argv, tmp_path)
    assert code == 1, printed
    assert report["certified"] is False and report["levels"] == {"2": "failed"}
    got = {c["name"]: c for c in report["checks"]}
    assert got["duplicate-attempts"]["result"] == FAIL
    assert "must be visible" in got["duplicate-attempts"]["explanation"]
    assert got["reader-check"]["result"] == FAIL
    assert "uncommitted data is visible" in got["reader-check"]["explanation"]
    assert "NOT certified at level 2" in printed

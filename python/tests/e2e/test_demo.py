"""`txcommit demo`: the DBIO paper's table replayed live, small and on the local file system
(every failure real: a retried task, a failing job, a server halted while the job commits)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from support.servers import server_python


def test_the_demo_replays_the_papers_table_and_txcommit_is_correct_after_every_failure(
    tmp_path: Path,
) -> None:
    out = subprocess.run(
        [
            server_python(),
            "-m",
            "txcommit.cli",
            "demo",
            "--store",
            "local",
            "--rows",
            "2000",
            "--fail-delay",
            "1",
            "--workdir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=900,
        env=os.environ.copy(),
    )
    assert out.returncode == 0, out.stdout + out.stderr[-4000:]
    lines = out.stdout.splitlines()

    def cells(failure: str) -> list[str]:
        line = next(x for x in lines if x.strip().startswith(failure))
        return [c.strip() for c in line.split("|")]

    # Columns: the failure, v1, v2, txcommit, the paper's answers for v1 / v2 / DBIO.
    task, job, driver = cells("task failure"), cells("job failure"), cells("driver failure")
    assert [c.split(" (")[0] for c in task[1:4]] == ["all", "all", "all"], task
    assert job[1].startswith("none (correct") and job[3].startswith("none (correct"), job
    assert job[2].startswith("part:") and "WRONG" in job[2], "v2 shows the committed tasks' rows"
    assert driver[3] in ("none (correct)", "all (correct)"), driver
    assert (task[4], job[4], driver[4]) == ("Yes / Yes / Yes", "Yes / No / Yes", "No / No / Yes")
    assert "txcommit: correct output after every failure" in out.stdout

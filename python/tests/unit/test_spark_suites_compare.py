"""The judge of Spark's own SQL write suites (.ci/spark-suites/compare.py): a run passes only
when every failure is listed for its line and mode, every listed test still fails, every suite
ran, and txcommit committed something."""

from __future__ import annotations

import pathlib
import subprocess
import sys

COMPARE = pathlib.Path(__file__).resolve().parents[3] / ".ci" / "spark-suites" / "compare.py"

EXCEPTIONS = """\
# a comment
InsertSuite :: lays out files
  Counts files under the table.

[4.1] InsertSuite :: only on one line
  A reason.

[off] ReaderSuite :: fails from the jar
  Needs the source tree.

[may-pass] ReaderSuite :: depends on timing
  Lists a directory in the order the file system gives.
"""


def junit(directory: pathlib.Path, suite: str, cases: dict[str, str | None]) -> None:
    """One suite's report: test name -> failure message (None: passed)."""
    body = "".join(
        f'<testcase name="{name}" classname="org.x.{suite}">'
        + (f'<failure message="{msg}"/>' if msg is not None else "")
        + "</testcase>"
        for name, msg in cases.items()
    )
    (directory / f"TEST-org.x.{suite}.xml").write_text(
        f'<testsuite name="org.x.{suite}">{body}</testsuite>'
    )


def judge(
    tmp_path: pathlib.Path,
    reports: dict[str, dict[str, str | None]],
    *,
    line: str = "4.2",
    txcommit: str = "on",
    log: str = "txcommit: txn x: COMMITTED 1 file(s)\n",
) -> tuple[int, str]:
    reports_dir = tmp_path / "junit"
    reports_dir.mkdir()
    for suite, cases in reports.items():
        # The may-pass entry's test, passing, unless a test says otherwise.
        extra: dict[str, str | None] = {"depends on timing": None} if suite == "ReaderSuite" else {}
        junit(reports_dir, suite, {**extra, **cases})
    (tmp_path / "exceptions.txt").write_text(EXCEPTIONS)
    (tmp_path / "run.log").write_text(log)
    done = subprocess.run(
        [
            sys.executable,
            str(COMPARE),
            "--junit",
            str(reports_dir),
            "--exceptions",
            str(tmp_path / "exceptions.txt"),
            "--log",
            str(tmp_path / "run.log"),
            "--txcommit",
            txcommit,
            "--line",
            line,
            "org.x.InsertSuite",
            "org.x.ReaderSuite",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.returncode, done.stdout + done.stderr


def test_a_run_passes_when_only_listed_tests_fail(tmp_path: pathlib.Path) -> None:
    rc, out = judge(
        tmp_path,
        {
            "InsertSuite": {"lays out files": "6 did not equal 2", "writes": None},
            "ReaderSuite": {"fails from the jar": "URISyntaxException", "reads": None},
        },
    )
    assert rc == 0, out
    assert out.rstrip().splitlines()[-1] == "3 passed, 0 failed, 0 skipped"


def test_an_unlisted_failure_fails_the_run_naming_it(tmp_path: pathlib.Path) -> None:
    rc, out = judge(
        tmp_path,
        {
            "InsertSuite": {"lays out files": "x", "writes": "0 did not equal 200"},
            "ReaderSuite": {"fails from the jar": "x"},
        },
    )
    assert rc == 1
    assert "FAILED InsertSuite :: writes" in out and "0 did not equal 200" in out


def test_a_listed_test_that_passes_fails_the_run(tmp_path: pathlib.Path) -> None:
    rc, out = judge(
        tmp_path,
        {
            "InsertSuite": {"lays out files": None},
            "ReaderSuite": {"fails from the jar": "x"},
        },
    )
    assert rc == 1
    assert "but passes: InsertSuite :: lays out files" in out


def test_a_may_pass_entry_may_pass_or_fail(tmp_path: pathlib.Path) -> None:
    for outcome in (None, "opened a record"):
        (tmp_path / str(outcome)).mkdir()
        rc, out = judge(
            tmp_path / str(outcome),
            {
                "InsertSuite": {"lays out files": "x"},
                "ReaderSuite": {"fails from the jar": "x", "depends on timing": outcome},
            },
        )
        assert rc == 0, out


def test_an_entry_of_another_line_excuses_nothing(tmp_path: pathlib.Path) -> None:
    failing: dict[str, dict[str, str | None]] = {
        "InsertSuite": {"lays out files": "x", "only on one line": "x"},
        "ReaderSuite": {"fails from the jar": "x"},
    }
    (tmp_path / "a").mkdir()
    assert judge(tmp_path / "a", failing, line="4.1")[0] == 0
    (tmp_path / "b").mkdir()
    rc, out = judge(tmp_path / "b", failing, line="4.2")
    assert rc == 1 and "FAILED InsertSuite :: only on one line" in out


def test_without_txcommit_only_entries_tagged_off_apply(tmp_path: pathlib.Path) -> None:
    (tmp_path / "a").mkdir()
    rc, out = judge(
        tmp_path / "a",
        {
            "InsertSuite": {"lays out files": None},
            "ReaderSuite": {"fails from the jar": "x"},
        },
        txcommit="off",
        log="",
    )
    assert rc == 0, out
    (tmp_path / "b").mkdir()
    rc, out = judge(
        tmp_path / "b",
        {
            "InsertSuite": {"lays out files": "x"},
            "ReaderSuite": {"fails from the jar": "x"},
        },
        txcommit="off",
        log="",
    )
    assert rc == 1 and "FAILED InsertSuite :: lays out files" in out


def test_a_suite_that_ran_nothing_or_a_run_without_commits_fails(tmp_path: pathlib.Path) -> None:
    (tmp_path / "a").mkdir()
    rc, out = judge(tmp_path / "a", {"InsertSuite": {"lays out files": "x"}})
    assert rc == 1 and "ReaderSuite: ran no test" in out
    (tmp_path / "b").mkdir()
    rc, out = judge(
        tmp_path / "b",
        {
            "InsertSuite": {"lays out files": "x"},
            "ReaderSuite": {"fails from the jar": "x"},
        },
        log="no commit here\n",
    )
    assert rc == 1 and "the plugin was not in use" in out

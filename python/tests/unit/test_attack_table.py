"""The attack × store table of docs/protocol.md ("What is not (yet) covered") is made from the
end-to-end tests CI collects: a cell says "yes" only where the tests of its attack have an id on
that store, and every other cell carries a written reason. ``ATTACKS`` below is the one list of
which tests make which attack; ``python python/tests/unit/test_attack_table.py`` rewrites the
table in the doc from it and from pytest's collection."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
DOCS = ROOT / "docs/protocol.md"
BEGIN = "<!-- The attack × store table: made by python/tests/unit/test_attack_table.py. -->"
END = "<!-- End of the attack × store table. -->"
STORES = ("local", "s3", "s3-multipart", "hdfs", "gcs", "azure")
#: What a cell of a store that runs the attack says.
YES = "yes"


@dataclass(frozen=True)
class Attack:
    """A row: ``what`` the attack is; ``needs``: each entry a test (``file::name``, or several
    separated by ``|``, any of which will do) that must run on a store for its cell to say yes;
    ``gaps``: for each store where they do not, a short label and the reason."""

    what: str
    needs: tuple[str, ...]
    gaps: dict[str, tuple[str, str]] = field(default_factory=dict)


#: Reasons shared by several cells.
NO_NETWORK = "A lost answer on the local file system has no network to lose it in."
FEATURE = (
    "Feature tests run on the local file system and the `s3` adapter in CI, and on "
    "`s3-multipart` too in the soak (`bash .ci/soak`): what they check does not depend on the "
    "store's commit primitive."
)
FENCE = (
    "Not run through Spark there: the fence is one more exclusive create, certified on every "
    "store by StoreContractSuite and VacuumLivenessSuite."
)
NESTED = (
    "Not run through Spark there: the nesting checks are existence checks and listings, the "
    "same calls test_attacks' racing first writes make on every store."
)
CLUSTER = (
    "Executors are killed on the cluster for the local file system and both S3 adapters only, "
    "for time: on HDFS, GCS and Azure the same task commit is cut short by test_faults' task "
    "faults and server kills."
)
STREAM_S3_ONLY = (
    "The streaming query runs on the `s3` adapter, the soak's on `s3-multipart` too: a "
    "micro-batch's record is published the same way on both."
)
SOAK_MULTIPART = (
    "Run on `s3-multipart` in CI (data staged as pending uploads: the adapter with the most "
    "states) and on `s3` too in the soak."
)
SOAK_STREAM = "`s3-multipart` runs in the soak (TXCOMMIT_TEST_STREAMING_STORES)."
COMPLETION = "Only `s3-multipart` completes uploads at commit."
CLOCK_CUT = (
    "Run on S3 in CI for time, on the local file system and `s3-multipart` too in the soak: "
    "the cut is the reader's, the same code on every store; what a store adds is the time it "
    "dates a record by, which test_attacks' reader in another application takes on every store."
)
NO_CLUSTER_STORE = (
    "Not run there: the cluster's servers are `--store s3` servers; the cut by the store's time "
    "on these stores is test_attacks' reader in another application."
)
PAST = (
    "Not run through Spark there: a version is a commit point as the store dated it, and every "
    "adapter is held to dating its listings by StoreContractSuite; the races are the same reads "
    "and commits on any store."
)
SOAK_PAST = "`s3-multipart` in the soak, for time."
SOAK_RESTORE = "The local file system in CI, both S3 adapters too in the soak, for time."

ATTACKS = (
    Attack(
        "task retried, task failing for good, server killed at fault points",
        (
            "test_faults.py::test_task_retried_after_failure_leaves_each_row_once",
            "test_faults.py::test_persistently_failing_task_makes_no_row_visible",
            "test_faults.py::test_server_killed_during_commit_shows_all_or_nothing",
        ),
    ),
    Attack(
        "servers killed at random moments of a write loop",
        ("test_faults.py::test_random_kills_in_a_write_loop_never_show_part_of_a_job",),
        {"s3": ("soak", SOAK_MULTIPART)},
    ),
    Attack(
        "executors killed mid-write on a standalone cluster",
        ("test_cluster.py::test_executor_killed_mid_write_is_rerun_and_its_files_stay_hidden",),
        {s: ("no", CLUSTER) for s in ("hdfs", "gcs", "azure")},
    ),
    Attack(
        "readers in a loop while a writer overwrites, in its application and in another",
        (
            "test_attacks.py::"
            "test_readers_here_and_in_another_application_see_whole_generations_during_overwrites",
        ),
    ),
    Attack(
        "lost answers in a Spark job and a streaming query",
        (
            "test_lost_answers.py::test_an_append_whose_record_answer_was_lost_succeeds_and_commits_once"
            "|test_attacks.py::test_an_append_whose_record_answer_was_lost_succeeds_and_commits_once",
            "test_lost_answers.py::test_a_stream_whose_checkpoint_and_record_answers_were_lost_runs_on_exactly_once"
            "|test_attacks.py::test_a_stream_whose_checkpoint_and_record_answers_were_lost_runs_on_exactly_once",
        ),
        {"local": ("n/a", NO_NETWORK), "s3-multipart": ("job only", STREAM_S3_ONLY)},
    ),
    Attack(
        "VACUUM (its horizon, no FORCE) beside a running job",
        (
            "test_attacks.py::"
            "test_vacuum_with_a_real_horizon_beside_a_running_job_keeps_the_job_and_deletes_old_garbage",
        ),
    ),
    Attack(
        "VACUUM `RETAIN 0 HOURS FORCE` beside a running job (the fence)",
        (
            "test_vacuum.py::"
            "test_vacuum_beside_a_running_job_fences_it_and_no_reader_sees_part_of_it",
        ),
        {s: ("no", FENCE) for s in ("hdfs", "gcs", "azure")},
    ),
    Attack(
        "a stalled (zombie) streaming driver and its replacement",
        ("test_streaming.py::test_a_stalled_driver_and_its_replacement_commit_each_batch_once",),
    ),
    Attack(
        "a directory vanishing while an overwrite lists",
        (
            "test_attacks.py::test_overwrite_beside_a_vanishing_directory_removes_every_visible_file",
        ),
    ),
    Attack(
        "a writer clock an hour ahead of the reader's",
        ("test_attacks.py::test_a_replace_dated_an_hour_ahead_hides_no_later_overwrite",),
    ),
    Attack(
        "two first writes racing, one inside the other",
        ("test_attacks.py::test_a_first_write_and_one_inside_it_racing_leave_one_table",),
    ),
    Attack(
        "servers killed at random moments of a streaming query",
        ("test_streaming.py::test_stateful_queries_killed_at_random_are_exactly_once",),
        {"s3-multipart": ("soak", SOAK_STREAM)},
    ),
    Attack(
        "a lost answer to a `replace/` record (an overwrite's, a write id's)",
        (
            "test_lost_answers.py::test_a_write_id_run_whose_record_answer_was_lost_keeps_its_own_rows"
            "|test_attacks.py::test_an_overwrite_whose_replace_record_answer_was_lost_replaces_the_table_once",
        ),
        {"local": ("n/a", NO_NETWORK)},
    ),
    Attack(
        "a lost answer to the completion of a data file's upload",
        (
            "test_lost_answers.py::"
            "test_a_job_whose_upload_completion_answer_was_lost_succeeds_and_commits_once",
        ),
        {s: ("n/a", COMPLETION) for s in ("local", "s3", "hdfs", "gcs", "azure")},
    ),
    Attack(
        "clock-cut reads (a glob, `logFirst=false`, the streaming file source) of another "
        "application listing on a cluster's executors, while a writer overwrites",
        (
            "test_read_snapshots.py::"
            "test_clock_cut_reads_of_another_application_listing_on_executors_see_whole_generations",
        ),
        {
            "local": ("soak", CLOCK_CUT),
            "s3-multipart": ("soak", CLOCK_CUT),
            **{s: ("no", NO_CLUSTER_STORE) for s in ("hdfs", "gcs", "azure")},
        },
    ),
    Attack(
        "reads as of a version while overwrites, appends and VACUUM run",
        (
            "test_past_snapshot_races.py::"
            "test_reads_as_of_a_version_show_it_whole_or_fail_while_writes_and_vacuum_race",
        ),
        {
            "s3-multipart": ("soak", SOAK_PAST),
            **{s: ("no", PAST) for s in ("hdfs", "gcs", "azure")},
        },
    ),
    Attack(
        "restores while appends commit",
        (
            "test_past_snapshot_races.py::"
            "test_restores_racing_appends_keep_each_append_committed_after_them_whole",
        ),
        {
            "s3-multipart": ("soak", SOAK_PAST),
            **{s: ("no", PAST) for s in ("hdfs", "gcs", "azure")},
        },
    ),
    Attack(
        "a restore during a slow overwrite, and beside VACUUM (its horizon)",
        (
            "test_past_snapshot_races.py::"
            "test_a_restore_during_an_overwrite_wins_and_the_overwrite_fails_whole",
            "test_past_snapshot_races.py::"
            "test_restores_beside_vacuum_with_its_horizon_keep_every_restored_file",
        ),
        {
            "s3": ("soak", SOAK_RESTORE),
            "s3-multipart": ("soak", SOAK_RESTORE),
            **{s: ("no", PAST) for s in ("hdfs", "gcs", "azure")},
        },
    ),
    Attack(
        "nested tables (a table deleted and written again below; an older version's tree)",
        (
            "test_nested_tables.py::test_a_table_deleted_and_written_again_in_its_partition_is_checked_again",
            "test_nested_tables.py::test_a_tree_nested_by_an_older_version_loses_no_data_for_readers",
        ),
        {
            "s3-multipart": ("soak", FEATURE),
            **{s: ("no", NESTED) for s in ("hdfs", "gcs", "azure")},
        },
    ),
)


def store_of(param: str) -> set[str]:
    """The stores a test id's parameters name: ``local``, ``s3-multipart-job.beforeRecord``,
    ``local+s3+hdfs`` (a server running one query per store)."""
    found = set()
    for token in param.split("+"):
        named = [s for s in STORES if token == s or token.startswith(s + "-")]
        if named:
            found.add(max(named, key=len))
    return found


@cache
def collected() -> dict[str, set[str]]:
    """``file::test`` -> the stores CI runs it on, from pytest's collection of the end-to-end
    tests with CI's settings (no soak)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TXCOMMIT_TEST_")}
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            "python/tests/e2e",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    tests: dict[str, set[str]] = {}
    for line in out.splitlines():
        m = re.fullmatch(r"python/tests/e2e/(test_\w+\.py::\w+)(?:\[(.*)\])?", line.strip())
        if m:
            tests.setdefault(m.group(1), set()).update(store_of(m.group(2) or ""))
    assert tests, f"pytest collected no end-to-end test:\n{out[-2000:]}"
    return tests


def stores_of(need: str) -> set[str]:
    return set().union(*(collected().get(test, set()) for test in need.split("|")))


def cells(attack: Attack) -> dict[str, str | None]:
    """Each store's cell: YES where every test the attack needs runs there, else None."""
    return {s: YES if all(s in stores_of(need) for need in attack.needs) else None for s in STORES}


def table() -> str:
    """The table (indented as the list item it is in) and its numbered reasons."""
    reasons: list[str] = []
    rows = []
    for attack in ATTACKS:
        row = []
        for store, cell in cells(attack).items():
            if cell is None:
                label, reason = attack.gaps[store]
                if reason not in reasons:
                    reasons.append(reason)
                cell = f"{label} ({reasons.index(reason) + 1})"
            row.append(cell)
        rows.append(f"  | {attack.what} | {' | '.join(row)} |")
    head = ["  | attack | " + " | ".join(STORES) + " |", "  " + "|---" * (len(STORES) + 1) + "|"]
    notes = [f"  - ({i}) {reason}" for i, reason in enumerate(reasons, 1)]
    return "\n".join([*head, *rows, "", *notes]) + "\n"


def docs_with(docs: str, text: str) -> str:
    if BEGIN not in docs or END not in docs:
        raise SystemExit(f"{DOCS} lacks the markers {BEGIN!r} and {END!r} around the table")
    head, rest = docs.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{text}  {END}{tail}"


def test_every_test_an_attack_names_is_collected() -> None:
    named = {t for attack in ATTACKS for need in attack.needs for t in need.split("|")}
    missing = sorted(named - collected().keys())
    assert not missing, f"attacks name tests pytest does not collect: {missing}"


def test_every_cell_without_a_test_gives_a_reason_and_no_reason_stands_beside_a_test() -> None:
    for attack in ATTACKS:
        for store, cell in cells(attack).items():
            if cell is None:
                assert store in attack.gaps, (
                    f"{attack.what!r} on {store}: no test runs it there and no reason is written"
                )
            else:
                assert store not in attack.gaps, (
                    f"{attack.what!r} on {store}: a test runs it there, yet a gap is written"
                )


def test_the_docs_show_the_table_the_tests_make() -> None:
    docs = DOCS.read_text()
    assert docs == docs_with(docs, table()), (
        f"the attack × store table in {DOCS.name} differs from what the tests make: run "
        f"`python {Path(__file__).relative_to(ROOT)}` to write it\n" + table()
    )


if __name__ == "__main__":
    DOCS.write_text(docs_with(DOCS.read_text(), table()))
    sys.exit(0)

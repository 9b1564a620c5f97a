"""Judges a run of Spark's SQL write suites (.ci/spark-suites/run) against exceptions.txt.

Reads the JUnit XML ScalaTest's Runner wrote per suite and the Runner's output. The run passes
when every requested suite ran, txcommit committed writes (with it on), and the only failures
are tests that exceptions.txt lists for this line (with txcommit off, only those tagged `off`:
tests that fail when run from Spark's published jars at all). A listed test that passes or no
longer exists fails the run too, so the list stays exactly the tests it excuses. Prints each
suite's time, the listed failures, every problem, and a closing line `N passed, N failed,
N skipped`, where the listed failures count as neither passed nor failed.
"""

from __future__ import annotations

import argparse
import pathlib
import re
import sys
import xml.etree.ElementTree as ET

SUITE_ABORTED = re.compile(r"\*\*\* ABORTED \*\*\*|SuiteAborted|RUN ABORTED")


def exceptions(
    path: pathlib.Path, line: str, txcommit: str
) -> tuple[dict[tuple[str, str], str], set[tuple[str, str]]]:
    """(suite's simple name, test name) -> reason, for a run of `line` with txcommit `txcommit`.
    An entry is a line `Suite :: test name`, optionally with tags before it,
    `[4.0 4.1 off] Suite :: test name`: the lines it applies to (all when none is named), and
    `off` when it fails without txcommit too (else it applies to runs with txcommit on only);
    `may-pass` when whether it fails depends on timing; then its reason on the indented lines
    below it. Returns the entries that apply, and those of them that may pass."""
    out: dict[tuple[str, str], str] = {}
    key: tuple[str, str] | None = None
    seen_entry = False
    may_pass: set[tuple[str, str]] = set()
    for number, text in enumerate(path.read_text().splitlines(), 1):
        if not text.strip() or text.startswith("#"):
            continue
        if text[0].isspace():
            if key is not None:
                out[key] = (out[key] + " " + text.strip()).strip()
            elif not seen_entry:
                sys.exit(f"{path}:{number}: a reason before any entry")
            continue
        seen_entry = True
        tags: list[str] = []
        m = re.fullmatch(r"\[([0-9a-z. -]+)\]\s*(.*)", text)
        if m:
            tags, text = m.group(1).split(), m.group(2)
        flags = {"off", "may-pass"}
        unknown = [t for t in tags if t not in flags and not re.fullmatch(r"4\.[0-9]", t)]
        if unknown:
            sys.exit(f"{path}:{number}: unknown tags {unknown} (a line like 4.1, off, may-pass)")
        lines = [t for t in tags if t not in flags]
        applies = (not lines or line in lines) and (txcommit == "on" or "off" in tags)
        suite, sep, test = text.partition(" :: ")
        if not sep or not suite.strip() or not test.strip():
            sys.exit(f"{path}:{number}: expected `Suite :: test name`, got {text!r}")
        key = (suite.strip(), test.strip())
        if not applies:
            key = None
            continue
        if key in out:
            sys.exit(f"{path}:{number}: {suite} :: {test} is listed twice")
        out[key] = ""
        if "may-pass" in tags:
            may_pass.add(key)
    for k, reason in out.items():
        if not reason:
            sys.exit(f"{path}: {k[0]} :: {k[1]} has no reason")
    return out, may_pass


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--junit", type=pathlib.Path, required=True)
    parser.add_argument("--exceptions", type=pathlib.Path, required=True)
    parser.add_argument("--log", type=pathlib.Path, required=True)
    parser.add_argument("--txcommit", choices=("on", "off"), required=True)
    parser.add_argument("--line", required=True)
    parser.add_argument("suites", nargs="+")
    args = parser.parse_args()

    allowed, may_pass = exceptions(args.exceptions, args.line, args.txcommit)
    passed: list[tuple[str, str]] = []
    failed: dict[tuple[str, str], str] = {}
    skipped = 0
    ran_suites: set[str] = set()
    seconds: dict[str, float] = {}
    for report in sorted(args.junit.glob("*.xml")):
        root = ET.parse(report).getroot()
        for node in [root] if root.tag == "testsuite" else root.iter("testsuite"):
            name = node.get("name", "").rsplit(".", 1)[-1]
            seconds[name] = seconds.get(name, 0.0) + float(node.get("time") or 0)
            for case in node.iter("testcase"):
                ran_suites.add(name)
                key = (case.get("classname", name).rsplit(".", 1)[-1], case.get("name", ""))
                problem = case.find("failure")
                if problem is None:
                    problem = case.find("error")
                if problem is not None:
                    failed[key] = (problem.get("message") or problem.text or "").strip()
                elif case.find("skipped") is not None:
                    skipped += 1
                else:
                    passed.append(key)

    problems: list[str] = []
    for suite in args.suites:
        simple = suite.rsplit(".", 1)[-1]
        if simple not in ran_suites:
            problems.append(f"{simple}: ran no test (not in this line's tests jar, or aborted)")
    log = args.log.read_text(errors="replace") if args.log.exists() else ""
    for text in log.splitlines():
        if SUITE_ABORTED.search(text):
            problems.append(f"aborted: {text.strip()}")
    commits = sum(1 for text in log.splitlines() if "txcommit: " in text and ": COMMITTED " in text)
    if args.txcommit == "on" and commits == 0:
        problems.append("txcommit committed no write: the plugin was not in use")
    unexpected = {k: v for k, v in failed.items() if k not in allowed}
    for (suite, test), message in sorted(unexpected.items()):
        problems.append(f"FAILED {suite} :: {test}\n    {message[:600]}")
    for suite, test in sorted(k for k in allowed if k in set(passed) and k not in may_pass):
        problems.append(
            f"listed in {args.exceptions.name} but passes: {suite} :: {test} (remove it)"
        )
    seen = set(passed) | set(failed)
    ran = {s.rsplit(".", 1)[-1] for s in args.suites}
    for suite, test in sorted(k for k in allowed if k not in seen and k[0] in ran):
        problems.append(f"listed in {args.exceptions.name} but not run: {suite} :: {test}")

    excused = sorted(k for k in failed if k in allowed)
    print(
        f"Spark {args.line} suites, txcommit {args.txcommit}: {len(passed)} passed, "
        f"{len(failed)} failed ({len(excused)} of them listed in {args.exceptions.name}), "
        f"{skipped} skipped (ignored by Spark); {commits} txcommit commits in the log"
    )
    print(
        "  seconds per suite: "
        + ", ".join(f"{n} {t:.0f}" for n, t in sorted(seconds.items(), key=lambda x: -x[1]))
    )
    for suite, test in excused:
        print(f"  listed: {suite} :: {test}")
    for p in problems:
        print(p)
    print(f"{len(passed)} passed, {len(unexpected)} failed, {skipped} skipped")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

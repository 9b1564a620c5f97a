"""Prints one closing line for a CI run: the tests of every phase, added up from JUnit XML.

Usage: test_counts.py REPORT_DIR_OR_FILE...   ->   "N passed, N failed, N skipped"
The line stands alone and last, in the plain form CI systems read as a run's closing count.
A failed test is a failure or an error; a missing directory counts nothing (its phase did not
run, and the run's exit code already says so). The failed tests are named above the line, each
with the first line of its message, so a truncated CI log still says which ones failed.
"""

import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def reports(arg: str) -> list[Path]:
    p = Path(arg)
    return sorted(p.glob("*.xml")) if p.is_dir() else [p] if p.is_file() else []


def failures(suite: ET.Element) -> list[str]:
    """'class::name: first line of the message' of each failed or erroring test case."""
    out = []
    for case in suite.iter("testcase"):
        for bad in (case.find("failure"), case.find("error")):
            if bad is not None:
                message = (bad.get("message") or bad.text or "").strip().splitlines()
                first = message[0][:200] if message else ""
                out.append(f"{case.get('classname')}::{case.get('name')}: {first}")
    return out


def main() -> None:
    passed = failed = skipped = 0
    failed_names: list[str] = []
    for arg in sys.argv[1:]:
        for report in reports(arg):
            root = ET.parse(report).getroot()
            for suite in [root] if root.tag == "testsuite" else root.iter("testsuite"):
                tests = int(suite.get("tests", 0))
                bad = int(suite.get("failures", 0)) + int(suite.get("errors", 0))
                skip = int(suite.get("skipped", 0))
                passed += tests - bad - skip
                failed += bad
                skipped += skip
                failed_names += failures(suite)
    if failed_names:
        print("failed tests:")
        for name in failed_names:
            print(f"  FAILED {name}")
    print("every phase's tests added up (JUnit XML):")
    print(f"{passed} passed, {failed} failed, {skipped} skipped", flush=True)


if __name__ == "__main__":
    main()

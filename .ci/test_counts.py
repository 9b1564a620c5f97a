"""Prints one closing line for a CI run: the tests of every phase, added up from JUnit XML.

Usage: test_counts.py REPORT_DIR_OR_FILE...   ->   "N passed, N failed, N skipped"
The line stands alone and last, in the plain form CI systems read as a run's closing count.
A failed test is a failure or an error; a missing directory counts nothing (its phase did not
run, and the run's exit code already says so).
"""

import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def reports(arg: str) -> list[Path]:
    p = Path(arg)
    return sorted(p.glob("*.xml")) if p.is_dir() else [p] if p.is_file() else []


def main() -> None:
    passed = failed = skipped = 0
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
    print("every phase's tests added up (JUnit XML):")
    print(f"{passed} passed, {failed} failed, {skipped} skipped", flush=True)


if __name__ == "__main__":
    main()

"""``python -m txcommit.conformance`` = ``txcommit conformance``."""

from __future__ import annotations

import sys

from txcommit.conformance.cli import main

if __name__ == "__main__":
    sys.exit(main())

"""``python -m txcommit.conformance`` = ``txcommit conformance``."""

from __future__ import annotations

from txcommit._console import leave
from txcommit.conformance.cli import main

if __name__ == "__main__":
    leave(main())

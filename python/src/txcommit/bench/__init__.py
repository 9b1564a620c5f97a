"""``txcommit bench`` and ``txcommit bench-streaming``: see :mod:`txcommit.bench.main` and
:mod:`txcommit.bench.streaming`."""

from txcommit.bench.main import main

__all__ = ["main"]

"""``python -m txcommit.cli ...``: the same as the ``txcommit`` command."""

from txcommit.cli import console

console()

"""``python -m txcommit.cli ...``: the same as the ``txcommit`` command."""

import sys

from txcommit.cli import main

sys.exit(main())

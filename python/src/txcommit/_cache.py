"""Where txcommit keeps what it downloads: ``$TXCOMMIT_CACHE``, else ``~/.cache/txcommit``.

One place for every side: the S3A jars (``txcommit jars``), the benchmark's jars, the Azurite
install of ``.ci/setup`` (which sets the same variable for sbt and Maven), never a project tree.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    return Path(os.environ.get("TXCOMMIT_CACHE") or Path.home() / ".cache" / "txcommit")

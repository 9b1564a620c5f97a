"""Locate the installed pyspark and defuse pyspark-client's SPARK_HOME exit.

``pyspark-client`` 4.2 has no jars and no ``bin/spark-submit``, yet importing
``pyspark.sql.connect`` imports ``pyspark.testing.sqlutils``, which calls
``_find_spark_home()`` at import time; with SPARK_HOME unset that search fails and calls
``sys.exit(-1)``, killing a perfectly good JVM-less client before it connects. pyspark trusts
any SPARK_HOME it is given, and only test helpers ever read it, so pointing it at the pyspark
package directory is harmless. This module must not import pyspark itself.
"""

from __future__ import annotations

import os
from importlib.util import find_spec
from pathlib import Path


def pyspark_dir() -> Path | None:
    """The directory of the importable ``pyspark`` package, without importing it."""
    try:
        spec = find_spec("pyspark")
    except (ImportError, ValueError):  # ValueError: a broken entry in sys.modules
        return None
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).resolve().parent


def is_pure_client(pyspark_home: Path) -> bool:
    """True for ``pyspark-client`` (no bundled jars), False for the full ``pyspark``."""
    return not (pyspark_home / "jars").is_dir()


def ensure_spark_home() -> str | None:
    """Set SPARK_HOME for a pure-client pyspark when it is unset; return the value set.

    A SPARK_HOME set by the user is never touched, and the full pyspark needs no help (its
    own search finds the package directory because ``jars/`` is there).
    """
    if "SPARK_HOME" in os.environ:
        return None
    home = pyspark_dir()
    if home is None or not is_pure_client(home):
        return None
    os.environ["SPARK_HOME"] = str(home)
    return str(home)

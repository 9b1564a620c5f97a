"""The build's configuration of a checkout, as setuptools reads it: setup.py, then
pyproject.toml (without building anything)."""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any


def setuptools_dist(project: Path) -> Any:
    """The distribution as the build configures it: setup.py, then pyproject.toml."""
    from distutils.core import run_setup  # setuptools' own (its distutils-precedence.pth)

    cwd = os.getcwd()
    os.chdir(project)  # setuptools resolves package-dir against the working directory
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return run_setup("setup.py", stop_after="config")
    finally:
        os.chdir(cwd)

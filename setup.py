"""The one part of the build pyproject.toml cannot say: txcommit's in-tree stores, by folder.

Each store keeps its Python in its folder, ``adapters/<name>/python/txcommit_store_<name>/``,
a top-level package of its own shipped in this distribution, and names its descriptors in its
``plugin.py`` (``ENTRY_POINTS``). pyproject.toml takes no globs, so this file (setuptools reads
it only here, beside pyproject.toml) lists, maps and registers whatever folders hold one: a new
store needs no edit to the build. setuptools takes a key from one of the two files only, so the
package list and directories and every entry point (the command's and fsspec's too) are here;
everything else is in pyproject.toml. txcommit.adapters.plugin.builtin_stores reads
``ENTRY_POINTS`` the same way, without importing the module.
"""

from __future__ import annotations

import ast
from pathlib import Path

from setuptools import find_packages, setup

ROOT = Path(__file__).resolve().parent

#: txcommit's own packages. The package data maps directories into txcommit._adapters and
#: txcommit._vectors, so the packages are listed, not found (python/tests/unit/
#: test_packaging.py fails when a subpackage of python/src/txcommit is missing).
TXCOMMIT = ["txcommit", "txcommit.adapters", "txcommit.bench", "txcommit.cli",
            "txcommit.conformance", "txcommit.readers", "txcommit.server", "txcommit.table",
            "txcommit.testing", "txcommit._adapters", "txcommit._vectors"]  # fmt: skip
#: The adapter declarations ship as txcommit/_adapters/<name>/adapter.json and the golden
#: vectors as txcommit/_vectors, mapped from their directories, never copied.
PACKAGE_DIR = {
    "": "python/src",
    "txcommit._adapters": "adapters",
    "txcommit._vectors": "conformance/vectors",
}


def entry_points(plugin: Path) -> dict[str, str]:
    """The ``ENTRY_POINTS`` literal of a store's plugin.py: store name -> attribute."""
    for node in ast.parse(plugin.read_text(encoding="utf-8")).body:
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == "ENTRY_POINTS"
        ):
            found: dict[str, str] = ast.literal_eval(node.value)
            return found
    return {}


packages, package_dir, stores = list(TXCOMMIT), dict(PACKAGE_DIR), []
for folder in sorted(ROOT.glob("adapters/*/python")):
    for store in find_packages(str(folder), include=["txcommit_store_*"]):
        packages.append(store)
        if "." not in store:
            package_dir[store] = (folder / store).relative_to(ROOT).as_posix()
            stores += [
                f"{name} = {store}.plugin:{attr}"
                for name, attr in entry_points(folder / store / "plugin.py").items()
            ]

setup(
    packages=packages,
    package_dir=package_dir,
    entry_points={
        "console_scripts": ["txcommit = txcommit.cli:console"],
        # fsspec finds the committed-files file systems by protocol without importing txcommit.
        "fsspec.specs": [
            "txcommit+file = txcommit.readers.fsspec:CommittedLocalFileSystem",
            "txcommit+s3 = txcommit.readers.fsspec:CommittedS3FileSystem",
            "txcommit+s3a = txcommit.readers.fsspec:CommittedS3FileSystem",
        ],
        # Stores: each a txcommit.adapters.plugin.StorePlugin under its adapter's name.
        "txcommit.adapters": stores,
    },
)

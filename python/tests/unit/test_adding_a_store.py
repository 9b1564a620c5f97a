"""Adding a built-in store is its folder and one line. In a copy of the tree, a copy of the gcs
store's folder under a new name (gcs2, its names changed inside its folder) and one line in
``txcommit.stores.BUILTIN`` give the new store what GCS has: the registry, the command line, the
packaging, the store contract run on its emulator, and every store-parametrised end-to-end test
GCS gets. (Its JVM module would be one more line, in build.sbt's ``storeModules``.)"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
#: The line a new built-in store adds to txcommit/stores.py.
LINE = '    "gcs2": "txcommit_store_gcs2:GCS",\n'


def _copy(src: Path, dst: Path) -> None:
    skip = shutil.ignore_patterns("target", "lines", "__pycache__", "_jars", "jvm", "*.egg-info")
    shutil.copytree(src, dst, ignore=skip, symlinks=True)


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the tree with the store gcs2: its folder and one line, nothing else."""
    root = tmp_path_factory.mktemp("tree")
    shutil.copy(REPO / "pyproject.toml", root)
    for part in ("python/src", "python/tests", "adapters", "conformance/vectors"):
        _copy(REPO / part, root / part)
    folder = root / "adapters" / "txcommit_store_gcs2"
    shutil.copytree(root / "adapters" / "txcommit_store_gcs", folder)
    for source in folder.rglob("*.py"):
        source.write_text(source.read_text().replace("txcommit_store_gcs", "txcommit_store_gcs2"))
    descriptor = folder / "__init__.py"
    text = descriptor.read_text().replace('name="gcs"', 'name="gcs2"')
    descriptor.write_text(text.replace('"gcs.json"', '"gcs2.json"'))
    declaration = json.loads((folder / "gcs.json").read_text())
    (folder / "gcs.json").unlink()
    # gs:// stays gcs's by default; gcs2 serves it when a session names it.
    (folder / "gcs2.json").write_text(json.dumps({**declaration, "name": "gcs2", "defaultFor": []}))
    stores = root / "python" / "src" / "txcommit" / "stores.py"
    text = stores.read_text()
    anchor = '    "gcs": "txcommit_store_gcs:GCS",\n'
    assert anchor in text
    stores.write_text(text.replace(anchor, anchor + LINE))
    return root


def _run(tree: Path, *args: str) -> str:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            str(tree / p) for p in ("python/src", "adapters", "python/tests")
        ),
    }
    done = subprocess.run(
        [sys.executable, *args], cwd=tree, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def test_the_new_store_is_registered_and_served_by_the_command_line(tree: Path) -> None:
    shown = _run(
        tree,
        "-c",
        "from txcommit.stores import store_names, store_descriptor\n"
        "from txcommit.adapters.declarations import declaration_named\n"
        "from txcommit.cli import main\n"
        "print(*store_names())\n"
        "print(declaration_named('gcs2').primitive, store_descriptor('gcs2').adapter_jar)\n"
        "main(['server', '--store', 'gcs2', '--local', '--help'])\n",
    )
    lines = shown.splitlines()
    assert lines[0].split() == ["azure", "gcs", "gcs2", "hdfs", "local", "s3", "s3-multipart"]
    assert lines[1] == "conditional-put txcommit-gcs.jar"
    assert "gcs2" in shown and "--local" in shown


def test_the_new_store_gets_every_store_parametrised_test_gcs_gets(tree: Path) -> None:
    collected = _run(
        tree,
        "-m",
        "pytest",
        "--collect-only",
        "-q",
        "-p",
        "no:cacheprovider",
        "python/tests/e2e",
        "python/tests/unit/test_store_contract.py",
    ).splitlines()
    ids = [i for i in collected if "::" in i]

    def of(name: str, cls: str) -> set[str]:
        """The tests of the store: a parameter names it, or it is the contract's class."""
        param = re.compile(rf"(?<=[\[-]){name}(?=[\]-])")
        found = set()
        for test in ids:
            where, _, rest = test.partition("::")
            if rest.startswith(f"Test{cls}Contract::"):
                found.add(f"{where}::TestSTOREContract::{rest.partition('::')[2]}")
            elif param.search(rest):
                found.add(f"{where}::{param.sub('STORE', rest)}")
        return found

    gcs, gcs2 = of("gcs", "Gcs"), of("gcs2", "Gcs2")
    assert len(gcs) > 20, f"too few tests of gcs to compare: {sorted(gcs)}"
    assert gcs2 == gcs, (
        f"gcs has {sorted(gcs - gcs2)}\nthat gcs2 lacks; gcs2 has {sorted(gcs2 - gcs)}"
    )


def test_the_store_contract_passes_on_the_new_store_s_emulator(tree: Path) -> None:
    out = _run(
        tree,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "python/tests/unit/test_store_contract.py",
        "-k",
        "Gcs2",
    )
    passed = re.search(r"(\d+) passed", out)
    assert passed and int(passed.group(1)) >= 10, out[-2000:]
    assert "failed" not in out

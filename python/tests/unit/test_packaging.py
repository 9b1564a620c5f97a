"""Packaging: the core wheel holds the package and every store's folder (its descriptor,
declarations and Python store) and nothing of the devkit; the devkit wheel holds exactly the
benchmark, the demo, the emulators and the test kits; an install of the core wheel registers
every built-in store from the one list and reads each declaration from its package."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from txcommit.stores import BUILTIN

REPO = Path(__file__).resolve().parents[3]
#: What only trying and testing on one machine needs: the devkit wheel's, never the core's.
DEVKIT = ("txcommit/bench/", "txcommit/devkit/", "/devkit/")


def build_wheel(project: Path, out: Path) -> Path:
    """The wheel pip builds of ``project`` (isolated, as a release builds it)."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(project)],
        check=True,
        capture_output=True,
    )
    (wheel,) = out.glob("*.whl")
    return wheel


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("wheels")
    return build_wheel(REPO, out / "core"), build_wheel(REPO / "python" / "devkit", out / "devkit")


@pytest.fixture(scope="module")
def wheels(built: tuple[Path, Path]) -> tuple[list[str], list[str]]:
    return zipfile.ZipFile(built[0]).namelist(), zipfile.ZipFile(built[1]).namelist()


def test_the_core_wheel_holds_every_store_folder_and_nothing_of_the_devkit(
    wheels: tuple[list[str], list[str]],
) -> None:
    core, _ = wheels
    assert not [n for n in core if any(part in n for part in DEVKIT)]
    for name, ref in BUILTIN.items():
        package = ref.partition(":")[0]
        assert f"{package}/__init__.py" in core
        assert f"{package}/{name}.json" in core
    assert "txcommit/stores.py" in core and "txcommit/testing/store_contract.py" in core
    assert [n for n in core if n.startswith("txcommit/_vectors/")]
    # The jars, the command and fsspec's file systems.
    assert [n for n in core if n.startswith("txcommit/_jars/spark-4.3/")]
    entry_points = next(n for n in core if n.endswith(".dist-info/entry_points.txt"))
    assert "txcommit.adapters" not in entry_points  # built-ins are the list, not entry points


def test_the_devkit_wheel_holds_exactly_the_devkit(wheels: tuple[list[str], list[str]]) -> None:
    _, devkit = wheels
    files = [n for n in devkit if ".dist-info/" not in n]
    assert files and all(any(part in n for part in DEVKIT) for n in files), files
    for ref in BUILTIN.values():
        assert f"{ref.partition(':')[0]}/devkit/testkit.py" in devkit
    assert "txcommit/__init__.py" not in devkit
    assert "txcommit/bench/java/DirectWriteCommitProtocol.java" in devkit


def test_an_install_of_the_core_wheel_registers_every_builtin_store(
    tmp_path: Path, built: tuple[Path, Path]
) -> None:
    lib = tmp_path / "lib"
    zipfile.ZipFile(built[0]).extractall(lib)
    probe = (
        "from txcommit.stores import store_descriptors\n"
        "from txcommit.adapters.declarations import known_adapters\n"
        "from txcommit.testing.vectors import vectors_root\n"
        "for d in store_descriptors():\n"
        "    cls = d.store_class() if d.python_store else None\n"
        "    print(d.name, cls.__module__ if cls else None, d.declaration)\n"
        "print(len(known_adapters()), vectors_root())\n"
    )
    shown = subprocess.run(
        [sys.executable, "-c", probe],
        env={**os.environ, "PYTHONPATH": str(lib)},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert shown[0:-2:3] == sorted(BUILTIN)
    assert {"txcommit_store_s3.store", "txcommit.adapters.local"} <= set(shown[1:-2:3])
    assert all(f.startswith(str(lib) + os.sep) for f in shown[2:-2:3]), shown
    assert shown[-2:] == [str(len(BUILTIN)), str(lib / "txcommit" / "_vectors")]

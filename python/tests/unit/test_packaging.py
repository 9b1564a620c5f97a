"""Packaging: every subpackage ships, and the wheel holds exactly the adapter declarations."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

from txcommit.adapters.declarations import declarations_root

REPO = Path(__file__).resolve().parents[3]


def _setuptools_dist(project: Path) -> Any:
    from setuptools.config.pyprojecttoml import apply_configuration
    from setuptools.dist import Distribution

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dist = Distribution({"script_name": "setup.py"})
        apply_configuration(dist, str(project / "pyproject.toml"))
    return dist


def test_every_subpackage_is_listed_for_the_wheel() -> None:
    listed = set(_setuptools_dist(REPO).packages)
    src = REPO / "python" / "src"
    found = {
        ".".join(p.parent.relative_to(src).parts) for p in (src / "txcommit").rglob("__init__.py")
    }
    missing = found - listed
    assert not missing, f"add {sorted(missing)} to [tool.setuptools] packages in pyproject.toml"


def test_the_package_ships_only_the_adapter_json_files_and_reads_them(tmp_path: Path) -> None:
    # A copy of the project, with JVM sources next to a declaration, as adapters/s3/jvm/ will be.
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_bytes((REPO / "pyproject.toml").read_bytes())
    for d in ("adapters", "conformance/vectors", "python/src/txcommit"):
        for f in (REPO / d).rglob("*"):
            if f.is_file() and "__pycache__" not in f.parts and "_jars" not in f.parts:
                (project / f.relative_to(REPO)).parent.mkdir(parents=True, exist_ok=True)
                (project / f.relative_to(REPO)).write_bytes(f.read_bytes())
    (project / "adapters" / "s3" / "jvm").mkdir(exist_ok=True)
    (project / "adapters" / "s3" / "jvm" / "Probe.scala").write_text("object Probe")
    lib = tmp_path / "lib"
    cwd = os.getcwd()
    os.chdir(project)  # setuptools resolves package-dir against the working directory
    try:
        dist = _setuptools_dist(project)
        build_py = dist.get_command_obj("build_py")
        build_py.build_lib = str(lib)
        build_py.compile = False
        build_py.ensure_finalized()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            build_py.run()
    finally:
        os.chdir(cwd)
    shipped = sorted(
        str(p.relative_to(lib)) for p in (lib / "txcommit" / "_adapters").rglob("*") if p.is_file()
    )
    expected = sorted(
        f"txcommit/_adapters/{p.parent.name}/adapter.json"
        for p in (REPO / "adapters").glob("*/adapter.json")
    )
    assert shipped == expected
    # The installed layout finds its own copy, not a source checkout's.
    probe = (
        "from txcommit.adapters.declarations import declarations_root, load_declarations;"
        "print(declarations_root()); print(len(load_declarations()))"
    )
    assert _installed(lib, probe) == [str(lib / "txcommit" / "_adapters"), str(len(expected))]
    # The golden vectors ship too (the kit's checks use them), and are found there.
    vectors = sorted(
        str(p.relative_to(REPO / "conformance" / "vectors"))
        for p in (REPO / "conformance" / "vectors").rglob("*.json")
    )
    assert vectors and vectors == sorted(
        str(p.relative_to(lib / "txcommit" / "_vectors"))
        for p in (lib / "txcommit" / "_vectors").rglob("*")
        if p.is_file()
    )
    probe = "from txcommit.testing.vectors import vectors_root; print(vectors_root())"
    assert _installed(lib, probe) == [str(lib / "txcommit" / "_vectors")]


def _installed(lib: Path, code: str) -> list[str]:
    """What ``code`` prints, run against the package as built into ``lib`` (not a checkout)."""
    return subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": str(lib)},
        cwd=lib.parent,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()


def test_a_source_checkout_reads_the_repositorys_declarations() -> None:
    assert Path(str(declarations_root())).resolve() == REPO / "adapters"

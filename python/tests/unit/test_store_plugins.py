"""Stores are plugins: each is a StorePlugin found through the ``txcommit.adapters`` entry-point
group. txcommit's six are registered by its build from their folders (setup.py); a store
another distribution registers shows in the launcher, the command line, the conformance kit and
the registry with no edit to txcommit; one whose entry point cannot be loaded is named, not a
deep traceback."""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest

from txcommit.adapters import plugin
from txcommit.adapters.declarations import declaration_named, load_declarations
from txcommit.adapters.plugin import GROUP, StorePlugin, store_names, store_plugin, store_plugins
from txcommit.adapters.registry import adapter_for, implementation, open_store
from txcommit.cli import _build_parser, _server_config
from txcommit.cli import main as cli_main
from txcommit.conformance.cli import main as conformance_main
from txcommit.conformance.protocol import target_for, unavailable_reason
from txcommit.errors import ServerStartError, StorePluginError
from txcommit.server import ServerConfig, store_settings

from support.build import setuptools_dist

REPO = Path(__file__).resolve().parents[3]
#: txcommit's own stores: one per declaration in adapters/ (a new store's folder adds one).
BUILTIN_NAMES = tuple(sorted(d.name for d in load_declarations()))


@pytest.fixture(autouse=True)
def _fresh_discovery() -> Iterator[None]:
    store_plugins.cache_clear()
    yield
    store_plugins.cache_clear()


def _distribution(where: Path, name: str, entry_points: str, modules: dict[str, str]) -> Path:
    """An installed distribution as pip leaves one: ``<name>-0.1.dist-info`` with its
    ``entry_points.txt`` next to its modules, in a directory to put on sys.path."""
    info = where / f"{name}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points))
    for module, source in modules.items():
        (where / f"{module}.py").write_text(textwrap.dedent(source))
    return where


def _built_stores() -> dict[str, str]:
    """The stores the build registers (setup.py, from the stores' folders)."""
    entry_points = setuptools_dist(REPO).entry_points[GROUP]
    return dict(ep.split(" = ") for ep in entry_points)


# --------------------------------------------------------------------- built-in stores


def test_the_six_builtin_stores_are_registered_in_the_entry_point_group() -> None:
    registered = _built_stores()
    assert {"local", "s3", "s3-multipart"} <= set(BUILTIN_NAMES)
    assert sorted(registered) == sorted(BUILTIN_NAMES)
    # The fallback for a stale install's metadata finds the same stores on sys.path.
    assert registered == plugin.builtin_stores()
    # One store per shipped declaration, and each descriptor names its own store.
    assert sorted(registered) == sorted(d.name for d in load_declarations())


def test_discovery_goes_through_the_installed_entry_points(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # txcommit's own metadata as an install writes it from setup.py; nothing else.
    lines = "".join(f"{k} = {v}\n" for k, v in _built_stores().items())
    dist = _distribution(tmp_path, "txcommit_like", f"[{GROUP}]\n{lines}", {})
    monkeypatch.setattr(plugin, "builtin_stores", dict)
    monkeypatch.setattr(
        metadata,
        "entry_points",
        lambda group: metadata.EntryPoints(
            ep for d in metadata.distributions(path=[str(dist)]) for ep in d.entry_points
        ).select(group=group),
    )
    assert store_names() == BUILTIN_NAMES
    for name in BUILTIN_NAMES:
        found = store_plugin(name)
        assert isinstance(found, StorePlugin)
        assert declaration_named(name).name == name
        assert found.python_store is not None
        assert found.store_class().__name__ == found.python_store.rpartition(":")[2]


def test_each_builtin_store_keeps_what_the_launcher_gave_it() -> None:
    # The if-chains these replace, as data: adapter jar, emulator switch, server confs.
    jars = {p.name: p.adapter_jar for p in store_plugins()}
    assert jars == {
        "azure": "txcommit-azure.jar", "gcs": "txcommit-gcs.jar", "hdfs": None, "local": None,
        "s3": "txcommit-s3.jar", "s3-multipart": "txcommit-s3.jar"}  # fmt: skip
    switches = {p.name: p.emulator.flag if p.emulator else None for p in store_plugins()}
    assert switches == {"azure": "--no-local-azure", "gcs": "--no-local-gcs",
                        "hdfs": "--no-local-hdfs", "local": None, "s3": "--no-local-s3",
                        "s3-multipart": "--no-local-s3"}  # fmt: skip
    confs = store_plugin("s3-multipart").server_confs
    assert confs["spark.txcommit.adapter.s3a"] == "s3-multipart"
    assert store_plugin("gcs").server_confs["spark.hadoop.fs.gs.block.size"] == "67108864"
    assert store_plugin("local").jars() == [] == store_plugin("hdfs").jars()


def test_the_emulators_command_runs_the_emulator_each_descriptor_names(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``python -m txcommit.testing.emulators <store>``: the choices and the emulators come
    from the descriptors; each emulator is its store's own module."""
    from txcommit.testing.emulators import main as emulators_main

    runs = {p.name: p.emulator.standalone for p in store_plugins() if p.emulator}
    made = {name: run("lake", 4321) for name, run in runs.items() if run is not None}
    try:
        assert {n: (type(e).__module__, e.port) for n, e in made.items()} == {
            "azure": ("txcommit_store_azure.emulator", 4321),
            "gcs": ("txcommit_store_gcs.emulator", 4321),
            "hdfs": ("txcommit_store_hdfs.emulator", 4321),
        }
        assert made["gcs"].bucket == "lake" == made["azure"].container
    finally:
        for emulator in made.values():
            emulator.stop()
    with pytest.raises(SystemExit):
        emulators_main(["s3"])  # moto runs as `txcommit local-s3`
    assert "{azure,gcs,hdfs}" in capsys.readouterr().err


# --------------------------------------------------------------- a store from elsewhere

MEMFS_DECLARATION = {
    "format": "txcommit-adapter",
    "formatVersion": 1,
    "name": "memfs",
    "title": "A store of another distribution (test)",
    "primitive": "conditional-put",
    "exclusiveCreate": True,
    "listing": "consistent",
    "schemes": ["mem"],
    "defaultFor": ["mem"],
    "implementations": ["jvm", "python"],
}

MEMFS_MODULE = """
from pathlib import Path

from txcommit.adapters.plugin import LocalEmulator, StorePlugin


class MemStore:
    def __init__(self, root, *, declaration, **options):
        self.root_url = root
        self.declaration = declaration
        self.options = options


class MemEmulator:
    endpoint = "mem://127.0.0.1:1"

    def stop(self):
        pass


MEMFS = StorePlugin(
    name="memfs",
    summary="a store kept in memory by another distribution",
    python_store="memfs_store:MemStore",
    declaration_file=Path(__file__).parent / "memfs" / "adapter.json",
    server_confs={"spark.hadoop.fs.mem.impl": "org.example.MemFileSystem"},
    emulator=LocalEmulator(
        option="local_memfs",
        help="with --store memfs: reach a real memfs",
        start=lambda config: (MemEmulator(), {"spark.hadoop.fs.mem.endpoint": "x"}),
        banner=lambda emulator, config: f"local memfs at {emulator.endpoint}",
    ),
    options={"endpoint": ("mem",)},
)
"""


@pytest.fixture
def memfs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A distribution registering the store ``memfs``, on sys.path (as pip would install it)."""
    where = _distribution(
        tmp_path / "site", "memfs_store", f"[{GROUP}]\nmemfs = memfs_store:MEMFS\n",
        {"memfs_store": MEMFS_MODULE},
    )  # fmt: skip
    (where / "memfs").mkdir()
    (where / "memfs" / "adapter.json").write_text(json.dumps(MEMFS_DECLARATION))
    monkeypatch.syspath_prepend(str(where))
    monkeypatch.delitem(sys.modules, "memfs_store", raising=False)
    return where


def test_a_store_registered_elsewhere_is_a_server_store_choice(
    memfs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "memfs" in store_names()
    with pytest.raises(SystemExit) as exited:
        cli_main(["server", "--help"])
    assert exited.value.code == 0
    shown = " ".join(capsys.readouterr().out.split())  # argparse wraps the help
    assert "memfs" in shown and "a store kept in memory by another distribution" in shown
    assert "--no-local-memfs" in shown and "with --store memfs: reach a real memfs" in shown

    ns = _build_parser().parse_args(["server", "--store", "memfs", "--no-local-memfs"])
    config = _server_config(ns)
    assert config.store == "memfs"
    assert not config.wants_emulator("local_memfs")
    assert config.wants_emulator("local_s3")  # the other stores' switches are untouched
    on = _server_config(_build_parser().parse_args(["server", "--store", "memfs"]))
    assert on.wants_emulator("local_memfs")

    jars, classpath, confs = store_settings(ServerConfig(store="memfs"))
    assert (jars, classpath) == ([], [])
    assert confs == {"spark.hadoop.fs.mem.impl": "org.example.MemFileSystem"}
    assert cli_main(["jars", "--store", "memfs"]) == 0
    assert "the memfs adapter needs no jar" in capsys.readouterr().err


def test_a_store_registered_elsewhere_brings_its_own_adapter_jar(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The jar is a file of the other distribution, not one of txcommit's _jars/.
    jar = tmp_path / "site" / "memfs_store" / "memfs-adapter.jar"
    own = StorePlugin(name="memfs", summary="memfs", adapter_jar_file=jar)
    monkeypatch.setattr(plugin, "store_plugins", lambda: (own,))
    with pytest.raises(ServerStartError, match=r"the store 'memfs' names its adapter jar .*memfs-"
                       r"adapter\.jar, which does not exist\. Reinstall"):  # fmt: skip
        store_settings(ServerConfig(store="memfs"))
    jar.parent.mkdir(parents=True)
    jar.write_bytes(b"PK")
    jars, classpath, _ = store_settings(ServerConfig(store="memfs"))
    assert (jars, classpath) == ([str(jar.resolve())], [])


def test_a_store_registered_elsewhere_is_in_the_registry_and_the_conformance_kit(
    memfs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    declaration = adapter_for("mem://bucket/table")
    assert declaration.name == "memfs"
    assert implementation(declaration).__name__ == "MemStore"
    store = open_store("mem://bucket/table", endpoint="http://127.0.0.1:1")
    assert type(store).__name__ == "MemStore"

    assert unavailable_reason(declaration) is None
    target = target_for(store, server_confs={"k": "v"})
    assert (target.server_store, target.spark_root) == ("memfs", "mem://bucket/table")
    assert target.server_confs == {"k": "v"}

    assert conformance_main(["--help"]) == 0
    assert "memfs" in capsys.readouterr().out  # among the stores Level 2 can serve
    # --endpoint is refused for stores that do not take it, and memfs takes it.
    assert conformance_main(["--store", "/tmp/x", "--endpoint", "http://e"]) == 2
    assert "mem://" in capsys.readouterr().err


# --------------------------------------------------------------- a broken entry point


@pytest.mark.parametrize(
    ("value", "module", "why"),
    [
        ("no_such_module_for_txcommit:STORE", "", "ModuleNotFoundError: No module named"),
        ("wrong_store:STORE", "STORE = 42\n", "names a int, not a txcommit.adapters.plugin."),
        (
            "wrong_store:STORE",
            "from txcommit.adapters.plugin import StorePlugin\n"
            "STORE = StorePlugin(name='other', summary='x')\n",
            "names the store 'other'",
        ),
    ],
)
def test_a_broken_entry_point_is_named_with_its_store(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    value: str,
    module: str,
    why: str,
) -> None:
    where = _distribution(
        tmp_path, "broken_store", f"[{GROUP}]\nbroken = {value}\n",
        {"wrong_store": module} if module else {},
    )  # fmt: skip
    monkeypatch.syspath_prepend(str(where))
    monkeypatch.delitem(sys.modules, "wrong_store", raising=False)
    with pytest.raises(StorePluginError) as raised:
        store_plugins()
    message = str(raised.value)
    assert f"the store 'broken' cannot be loaded: its entry point 'broken = {value}'" in message
    assert f"(group {GROUP})" in message and why in message

    # The command line says the same in one line, with no traceback.
    assert cli_main(["server", "--help"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("txcommit: the store 'broken' cannot be loaded") and why in err
    assert "Traceback" not in err
    assert conformance_main(["--store", str(tmp_path)]) == 2
    assert "the store 'broken' cannot be loaded" in capsys.readouterr().err


def test_a_store_name_two_distributions_register_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    where = _distribution(tmp_path, "other_s3", f"[{GROUP}]\ns3 = other_s3:S3\n", {})
    ours = _built_stores()["s3"]
    monkeypatch.syspath_prepend(str(where))
    monkeypatch.setattr(
        metadata,
        "entry_points",
        lambda group: metadata.EntryPoints(
            [metadata.EntryPoint("s3", ours, GROUP)]
            + [ep for d in metadata.distributions(path=[str(where)]) for ep in d.entry_points]
            + [metadata.EntryPoint("s3", ours, GROUP)]  # seen twice: once
        ).select(group=group),
    )
    with pytest.raises(StorePluginError, match="the store 's3' is registered twice.*other_s3:S3"):
        store_plugins()

"""Stores: each one StoreDescriptor, txcommit's own from the one list ``BUILTIN``, another
distribution's through the ``txcommit.adapters`` entry-point group, both loaded the same way. A
store another distribution registers shows in the launcher, the command line, the conformance
kit and the registry with no edit to txcommit; one whose entry point cannot be loaded is named,
not a deep traceback."""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest

from txcommit import stores
from txcommit.adapters.declarations import declaration_named, known_adapters
from txcommit.adapters.registry import adapter_for, implementation, open_store
from txcommit.cli import _build_parser, _server_config
from txcommit.cli import main as cli_main
from txcommit.conformance.cli import main as conformance_main
from txcommit.conformance.protocol import target_for, unavailable_reason
from txcommit.errors import ServerStartError, StorePluginError
from txcommit.server import ServerConfig, store_settings
from txcommit.stores import (
    BUILTIN,
    GROUP,
    StoreDescriptor,
    store_descriptor,
    store_descriptors,
    store_names,
)

REPO = Path(__file__).resolve().parents[3]
BUILTIN_NAMES = ("azure", "gcs", "hdfs", "local", "s3", "s3-multipart")


@pytest.fixture(autouse=True)
def _fresh_discovery() -> Iterator[None]:
    store_descriptors.cache_clear()
    known_adapters.cache_clear()
    yield
    store_descriptors.cache_clear()
    known_adapters.cache_clear()


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


def _only(monkeypatch: pytest.MonkeyPatch, *where: Path) -> None:
    """The installed entry points are those of the distributions in ``where`` alone."""
    monkeypatch.setattr(
        metadata,
        "entry_points",
        lambda group: metadata.EntryPoints(
            ep
            for d in metadata.distributions(path=[str(w) for w in where])
            for ep in d.entry_points
        ).select(group=group),
    )


# --------------------------------------------------------------------- built-in stores


def test_the_builtin_stores_are_the_one_list_and_need_no_entry_point(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _only(monkeypatch)  # no distribution registers anything
    assert store_names() == tuple(sorted(BUILTIN)) == BUILTIN_NAMES
    for name in BUILTIN_NAMES:
        found = store_descriptor(name)
        assert isinstance(found, StoreDescriptor)
        assert declaration_named(name).name == name
        assert found.python_store is not None
        assert found.store_class().__name__ == found.python_store.rpartition(":")[2]
    # txcommit's own distribution registers no store: the entry points are for the others'.
    assert not [ep for ep in metadata.entry_points(group=GROUP)]


def test_a_builtin_store_s_folder_is_its_package() -> None:
    """Each built-in's descriptor lives in adapters/txcommit_store_<folder>/, with its declaration
    beside it."""
    for d in store_descriptors():
        module = BUILTIN[d.name].partition(":")[0]
        folder = REPO / "adapters" / module
        assert folder.is_dir(), folder
        assert Path(str(d.declaration)).resolve() == folder / f"{d.name}.json"


def test_each_builtin_store_keeps_what_the_launcher_gave_it() -> None:
    # The if-chains these replace, as data: adapter jar, emulator switch, server confs.
    jars = {p.name: p.adapter_jar for p in store_descriptors()}
    assert jars == {
        "azure": "txcommit-azure.jar",
        "gcs": "txcommit-gcs.jar",
        "hdfs": None,
        "local": None,
        "s3": "txcommit-s3.jar",
        "s3-multipart": "txcommit-s3.jar",
    }
    with_emulator = {p.name for p in store_descriptors() if p.emulator}
    assert with_emulator == {"azure", "gcs", "hdfs", "s3", "s3-multipart"}
    confs = store_descriptor("s3-multipart").server_confs
    assert confs["spark.txcommit.adapter.s3a"] == "s3-multipart"
    assert store_descriptor("gcs").server_confs["spark.hadoop.fs.gs.block.size"] == "67108864"
    assert store_descriptor("local").jars() == [] == store_descriptor("hdfs").jars()


def test_the_emulators_command_runs_the_emulator_each_descriptor_names(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``python -m txcommit.devkit.emulators <store>``: the choices and the emulators come
    from the descriptors; each emulator is its store's own module."""
    from txcommit.devkit.emulators import main as emulators_main

    runs = {p.name: p.local_emulator().standalone for p in store_descriptors() if p.emulator}
    made = {name: run("lake", 4321) for name, run in runs.items() if run is not None}
    try:
        assert {n: (type(e).__module__, e.port) for n, e in made.items()} == {
            "azure": ("txcommit_store_azure.devkit.emulator", 4321),
            "gcs": ("txcommit_store_gcs.devkit.emulator", 4321),
            "hdfs": ("txcommit_store_hdfs.devkit.emulator", 4321),
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

from txcommit.stores import StoreDescriptor


class MemStore:
    def __init__(self, root, *, declaration, **options):
        self.root_url = root
        self.declaration = declaration
        self.options = options


MEMFS = StoreDescriptor(
    name="memfs",
    summary="a store kept in memory by another distribution",
    python_store="memfs_store:MemStore",
    declaration=Path(__file__).parent / "memfs" / "memfs.json",
    server_confs={"spark.hadoop.fs.mem.impl": "org.example.MemFileSystem"},
    emulator="memfs_emulator:LOCAL",
    options={"endpoint": ("mem",)},
)
"""


MEMFS_EMULATOR = """
from txcommit.stores import LocalEmulator

STARTED = []


class MemEmulator:
    endpoint = "mem://127.0.0.1:1"

    def stop(self):
        pass


def start(bucket):
    STARTED.append(bucket)
    return MemEmulator(), {"spark.hadoop.fs.mem.endpoint": "x"}


LOCAL = LocalEmulator(start=start, banner=lambda emulator, bucket: f"local memfs {bucket}")
"""


@pytest.fixture
def memfs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A distribution registering the store ``memfs``, on sys.path (as pip would install it)."""
    where = _distribution(
        tmp_path / "site",
        "memfs_store",
        f"[{GROUP}]\nmemfs = memfs_store:MEMFS\n",
        {"memfs_store": MEMFS_MODULE},
    )
    (where / "memfs").mkdir()
    (where / "memfs" / "memfs.json").write_text(json.dumps(MEMFS_DECLARATION))
    (where / "memfs_emulator.py").write_text(MEMFS_EMULATOR)
    monkeypatch.syspath_prepend(str(where))
    monkeypatch.delitem(sys.modules, "memfs_store", raising=False)
    monkeypatch.delitem(sys.modules, "memfs_emulator", raising=False)
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
    assert "--local" in shown

    ns = _build_parser().parse_args(["server", "--store", "memfs"])
    config = _server_config(ns)
    assert config.store == "memfs" and not config.local
    on = _server_config(_build_parser().parse_args(["server", "--store", "memfs", "--local"]))
    assert on.local

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
    own = StoreDescriptor(
        name="memfs", summary="memfs", declaration=tmp_path / "memfs.json", adapter_jar_file=jar
    )
    monkeypatch.setattr(stores, "store_descriptors", lambda: (own,))
    with pytest.raises(
        ServerStartError,
        match=r"the store 'memfs' names its adapter jar .*memfs-"
        r"adapter\.jar, which does not exist\. Reinstall",
    ):
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
        ("wrong_store:STORE", "STORE = 42\n", "names a int, not a txcommit.stores."),
        (
            "wrong_store:STORE",
            "from txcommit.stores import StoreDescriptor\n"
            "STORE = StoreDescriptor(name='other', summary='x', declaration='x.json')\n",
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
        tmp_path,
        "broken_store",
        f"[{GROUP}]\nbroken = {value}\n",
        {"wrong_store": module} if module else {},
    )
    monkeypatch.syspath_prepend(str(where))
    monkeypatch.delitem(sys.modules, "wrong_store", raising=False)
    with pytest.raises(StorePluginError) as raised:
        store_descriptors()
    message = str(raised.value)
    assert f"the store 'broken' cannot be loaded: the entry point 'broken' of the group {GROUP}"
    assert f"({value})" in message and why in message

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
    monkeypatch.syspath_prepend(str(where))
    _only(monkeypatch, where)
    with pytest.raises(StorePluginError, match="the store 's3' is registered twice.*other_s3:S3"):
        store_descriptors()


def test_a_server_starts_its_store_s_emulator_only_when_asked(
    memfs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``txcommit server --store X`` reaches the real store; only ``--local`` starts X's
    emulator (a test double) for the server's lifetime."""
    from txcommit import server

    assert not _server_config(_build_parser().parse_args(["server", "--store", "s3"])).local
    monkeypatch.setattr(server, "find_pyspark_server", lambda: Path("/no/pyspark"))

    def stop_here(config: ServerConfig, home: Path) -> list[str]:
        raise RuntimeError(f"the command, with confs {sorted(config.confs)}")

    monkeypatch.setattr(server, "build_command", stop_here)
    import memfs_emulator  # type: ignore[import-not-found]  # the distribution of the fixture

    with pytest.raises(RuntimeError, match=r"confs \[\]"):
        server.start(ServerConfig(store="memfs"))
    assert memfs_emulator.STARTED == [], "an emulator started without --local"
    with pytest.raises(RuntimeError, match="spark.hadoop.fs.mem.endpoint"):
        server.start(ServerConfig(store="memfs", local=True))
    assert memfs_emulator.STARTED == ["txcommit"]

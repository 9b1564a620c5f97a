"""Store plugins: everything txcommit knows about one store, in one object, found by entry point.

A store is a :class:`StorePlugin` registered in the ``txcommit.adapters`` entry-point group
(``[project.entry-points."txcommit.adapters"]`` of a distribution's pyproject.toml, the name
being the adapter's). txcommit's own six live in their folders,
``adapters/<name>/python/txcommit_store_<name>/plugin.py``, each naming its descriptors in
``ENTRY_POINTS``: packages of their own shipped in the txcommit distribution, registered by its
setup.py for every such folder, which the package never imports by name. A store of
another distribution is the same: its descriptor, its ``adapter.json``, its Python mirror and
its adapter jar (``adapter_jar_file``), with no edit to txcommit (docs/adapters.md, "A store
from outside txcommit"). The launcher, the command line, ``txcommit jars`` and the
conformance kit loop over :func:`store_plugins`.

This module imports no other part of ``txcommit.adapters`` (the declarations ask it for the
stores' own ``adapter.json``), so a store is typed loosely here: ``Any`` stands for a
``txcommit.adapters.base.Store``. A descriptor holds callables and ``module:attribute``
references, so loading one imports neither the store's client libraries nor its emulator:
``txcommit server --help`` loads every descriptor.
"""

from __future__ import annotations

import ast
import functools
import importlib
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import machinery, metadata
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from txcommit import _maven
from txcommit._maven import Artifact
from txcommit.errors import StorePluginError, UnknownAdapterError

#: The entry-point group a store's descriptor is registered in.
GROUP = "txcommit.adapters"


class Emulator(Protocol):
    """A store emulator started for a server's lifetime (LocalS3, FakeGcs, MiniHdfs, Azurite)."""

    def stop(self) -> None: ...


@dataclass(frozen=True)
class LocalEmulator:
    """The emulator ``txcommit server --store <name>`` runs on loopback unless told not to."""

    #: The ServerConfig attribute that turns it on (``local_s3``); the command line's
    #: ``--no-local-s3`` turns it off. A store without such an attribute keeps its switch in
    #: ``ServerConfig.local_emulators``.
    option: str
    #: The help of the ``--no-...`` option.
    help: str
    #: Starts it for a ServerConfig; returns it and the server confs that reach it.
    start: Callable[[Any], tuple[Emulator, dict[str, str]]]
    #: The line ``txcommit server`` prints once the server is ready: (emulator, config) -> text.
    banner: Callable[[Any, Any], str]
    #: The emulator alone, not started, for ``python -m txcommit.testing.emulators <store>``:
    #: (bucket or container, port or None for a free one) -> a
    #: ``txcommit.testing.emulators.EmulatorProcess``; None leaves the store out of it.
    standalone: Callable[[str, int | None], Any] | None = None

    @property
    def flag(self) -> str:
        """The command-line option that turns the emulator off: ``--no-local-s3``."""
        return "--no-" + self.option.replace("_", "-")


def no_connectors(line: str) -> tuple[Artifact, ...]:
    """Spark's own Hadoop client reaches the store: no connector jar."""
    return ()


def root_as_spark_names_it(store: Any, endpoint: str | None, region: str | None) -> Level2:
    """The default Level 2 target: the store's root URL (a local directory as a plain path),
    with no server confs."""
    root = store.root_url
    return (urlsplit(root).path if root.startswith("file:") else root), {}


#: (the scratch root as Spark names it, server confs reaching the store).
Level2 = tuple[str, dict[str, str]]


@dataclass(frozen=True)
class StorePlugin:
    """One store: its adapter's name and declaration, its Python mirror, what a server needs
    for it (adapter jar, connectors per Spark line, confs), its local emulator and how the
    conformance kit's Level 2 reaches it."""

    #: The adapter's name: ``--store <name>``, the ``name`` of its ``adapter.json``.
    name: str
    #: What ``--store <name>`` sets up, for ``txcommit server --help``.
    summary: str
    #: The Python mirror's class, ``module:Class`` (imported when a table is opened); None
    #: for a store implemented on the JVM only.
    python_store: str | None = None
    #: The ``adapter.json`` of a store not shipped in txcommit's own ``adapters/`` (a plugin
    #: distribution's); None reads ``adapters/<name>/adapter.json`` of txcommit.
    declaration_file: Traversable | Path | None = None
    #: The adapter's jar among those the package carries per Spark line
    #: (``_jars/spark-<line>/``); None when the plugin jar serves the store (local, hdfs).
    adapter_jar: str | None = None
    #: The adapter's jar shipped by a store not built with txcommit, as a file of its own
    #: distribution (``importlib.resources.files("mystore") / "mystore-adapter.jar"``): it
    #: joins the plugin jar in the server's class loader, as ``adapter_jar`` does.
    adapter_jar_file: Traversable | Path | None = None
    #: The Maven connectors a server of a Spark line needs on its classpath.
    connectors: Callable[[str], tuple[Artifact, ...]] = no_connectors
    #: Whether the connectors follow the line's Hadoop version (kept in a folder per Hadoop).
    connectors_follow_hadoop: bool = True
    #: Confs the server gets for the store (the user's own confs win).
    server_confs: Mapping[str, str] = field(default_factory=dict)
    #: The emulator ``txcommit server`` starts by default, if any.
    emulator: LocalEmulator | None = None
    #: The command-line options its Python mirror takes (``endpoint``, ``region``) and the
    #: URL schemes that take each, for ``txcommit ls`` and ``txcommit conformance``.
    options: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: Level 2 of the conformance kit: (store, --endpoint, --region) -> the scratch root as
    #: Spark names it and the server confs reaching the store.
    level2_target: Callable[[Any, str | None, str | None], Level2] = root_as_spark_names_it

    def store_class(self) -> type[Any]:
        """The Python mirror's class (a ``txcommit.adapters.base.Store``), imported now; only
        for a store with ``python_store``."""
        assert self.python_store is not None, f"store '{self.name}' has no Python mirror"
        module, _, attr = self.python_store.partition(":")
        found: type[Any] = getattr(importlib.import_module(module), attr)
        return found

    def jars(self, line: str | None = None, *, fetch: bool = True, log: bool = True) -> list[Path]:
        """Local paths of the connector jars a server of Spark ``line`` (default: the
        installed pyspark's) needs, downloaded once if ``fetch``."""
        if self.connectors is no_connectors:
            return []
        line = line or _maven.installed_spark_line()
        # Another Hadoop's connectors go into their own folder: a build or tool that puts
        # every jar of the cache folder on a classpath must not get two AWS SDKs.
        hadoop = _maven.SPARK_LINES[line].hadoop
        own = self.connectors_follow_hadoop and hadoop != _maven.HADOOP_VERSION
        return _maven.fetched(self.connectors(line), f"the {self.name} jars for Spark {line}",
                              f"txcommit jars --store {self.name}", fetch=fetch, log=log,
                              subdir=f"hadoop-{hadoop}" if own else "")  # fmt: skip


def builtin_stores() -> dict[str, str]:
    """txcommit's own stores as its build registers them: store name -> ``module:attribute``,
    from the ``ENTRY_POINTS`` of each ``txcommit_store_<name>/plugin.py`` on sys.path (first
    one wins), read without importing it, as setup.py reads them. Used for the ones missing
    from the installed metadata: a checkout run through PYTHONPATH, or an install made before
    the group existed."""
    found: dict[str, str] = {}
    for module in pkgutil.iter_modules():
        finder = module.module_finder
        if not (module.ispkg and module.name.startswith("txcommit_store_")):
            continue
        if isinstance(finder, machinery.FileFinder):
            source = Path(finder.path, module.name, "plugin.py")
            for name, attr in _declared_entry_points(source).items():
                found.setdefault(name, f"{module.name}.plugin:{attr}")
    return found


def _declared_entry_points(plugin: Path) -> dict[str, str]:
    """The ``ENTRY_POINTS`` literal of a store's plugin.py (none if it has no such file)."""
    if not plugin.is_file():
        return {}
    for node in ast.parse(plugin.read_text(encoding="utf-8")).body:
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == "ENTRY_POINTS"
        ):
            found: dict[str, str] = ast.literal_eval(node.value)
            return found
    return {}


def _entry_points() -> list[metadata.EntryPoint]:
    """One entry point per store; the same one seen twice (a distribution on sys.path twice,
    as an editable install next to a checkout) counts once, two for one name are refused."""
    found: dict[str, metadata.EntryPoint] = {}
    for ep in metadata.entry_points(group=GROUP):
        seen = found.setdefault(ep.name, ep)
        if seen.value != ep.value:
            raise StorePluginError(
                f"the store '{ep.name}' is registered twice in the entry-point group {GROUP}: "
                f"as {seen.value} and as {ep.value}. Uninstall one of the distributions."
            )
    for name, value in builtin_stores().items():
        found.setdefault(name, metadata.EntryPoint(name, value, GROUP))
    return list(found.values())


def _load(ep: metadata.EntryPoint) -> StorePlugin:
    where = f"entry point '{ep.name} = {ep.value}' (group {GROUP})"
    try:
        plugin = ep.load()
    except Exception as e:
        raise StorePluginError(
            f"the store '{ep.name}' cannot be loaded: its {where} fails with "
            f"{type(e).__name__}: {e}. Fix or uninstall the distribution that declares it."
        ) from e
    if not isinstance(plugin, StorePlugin):
        raise StorePluginError(
            f"the store '{ep.name}' cannot be loaded: its {where} names a "
            f"{type(plugin).__name__}, not a txcommit.adapters.plugin.StorePlugin."
        )
    if plugin.name != ep.name:
        raise StorePluginError(
            f"the store '{ep.name}' cannot be loaded: its {where} names the store "
            f"'{plugin.name}'; the entry point's name must be the store's."
        )
    return plugin


@functools.lru_cache(maxsize=1)
def store_plugins() -> tuple[StorePlugin, ...]:
    """Every store registered in the ``txcommit.adapters`` group, sorted by name.

    A descriptor that cannot be loaded raises StorePluginError naming the store and the entry
    point (cached: ``store_plugins.cache_clear()`` looks again)."""
    return tuple(sorted((_load(ep) for ep in _entry_points()), key=lambda p: p.name))


def store_names() -> tuple[str, ...]:
    """The stores' names, sorted: the choices of ``--store``."""
    return tuple(p.name for p in store_plugins())


def store_plugin(name: str) -> StorePlugin:
    """The store named ``name``; UnknownAdapterError listing the known ones otherwise."""
    for plugin in store_plugins():
        if plugin.name == name:
            return plugin
    raise UnknownAdapterError(f"unknown store '{name}'; choose one of {', '.join(store_names())}")


def schemes_taking(option: str) -> tuple[str, ...]:
    """The URL schemes whose store takes ``option`` (``endpoint``, ``region``), in store order."""
    return tuple(dict.fromkeys(s for p in store_plugins() for s in p.options.get(option, ())))


def python_stores() -> dict[str, StorePlugin]:
    """The stores with a Python mirror, by name."""
    return {p.name: p for p in store_plugins() if p.python_store is not None}


__all__ = [
    "GROUP",
    "Emulator",
    "Level2",
    "LocalEmulator",
    "StorePlugin",
    "builtin_stores",
    "no_connectors",
    "python_stores",
    "root_as_spark_names_it",
    "schemes_taking",
    "store_names",
    "store_plugin",
    "store_plugins",
]

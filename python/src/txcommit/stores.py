"""The stores txcommit commits to, each described by one :class:`StoreDescriptor`.

txcommit's own are the one list :data:`BUILTIN`; a store of another distribution registers its
descriptor in the ``txcommit.adapters`` entry-point group. Both are loaded the same way, by
:func:`store_descriptors`. A descriptor holds ``module:attribute`` references and callables, so
loading it imports neither the store's client libraries nor its emulator.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import metadata
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from txcommit import _maven
from txcommit._maven import Artifact
from txcommit.errors import ServerStartError, StorePluginError, UnknownAdapterError

#: The entry-point group a store of another distribution registers its descriptor in.
GROUP = "txcommit.adapters"

#: txcommit's own stores: name -> its descriptor, ``module:attribute``. A built-in store is its
#: folder, ``adapters/txcommit_store_<name>/``, and one line here.
BUILTIN = {
    "azure": "txcommit_store_azure:AZURE",
    "gcs": "txcommit_store_gcs:GCS",
    "hdfs": "txcommit_store_hdfs:HDFS",
    "local": "txcommit_store_local:LOCAL",
    "s3": "txcommit_store_s3:S3",
    "s3-multipart": "txcommit_store_s3:S3_MULTIPART",
}

#: How ``txcommit server --local`` is told to install the emulators.
LOCAL_EXTRA = "pip install 'txcommit[local]'"


class Emulator(Protocol):
    """A store emulator started for a server's lifetime."""

    def stop(self) -> None: ...


@dataclass(frozen=True)
class LocalEmulator:
    """A store's emulator on loopback, for ``txcommit server --store <name> --local``."""

    #: Starts it with one bucket (or container); returns it and the server confs reaching it.
    start: Callable[[str], tuple[Emulator, dict[str, str]]]
    #: The line ``txcommit server`` prints once the server is ready: (emulator, bucket) -> text.
    banner: Callable[[Any, str], str]
    #: The emulator alone, not started, for ``python -m txcommit.devkit.emulators <store>``:
    #: (bucket, port or None) -> a ``txcommit.devkit.emulators.EmulatorProcess``.
    standalone: Callable[[str, int | None], Any] | None = None
    #: Jars it runs from Maven, fetched once (``.ci/setup`` fetches every emulator's).
    artifacts: tuple[Artifact, ...] = ()

    def jars(self) -> list[Path]:
        """Local paths of its jars, downloaded once."""
        return _maven.fetched(self.artifacts, "the emulator's jars", "bash .ci/setup")


def no_connectors(line: str) -> tuple[Artifact, ...]:
    """Spark's own Hadoop client reaches the store: no connector jar."""
    return ()


#: (the scratch root as Spark names it, server confs reaching the store).
Level2 = tuple[str, dict[str, str]]


def root_as_spark_names_it(store: Any, endpoint: str | None, region: str | None) -> Level2:
    """The default Level 2 target: the store's root URL (a local directory as a plain path)."""
    root = store.root_url
    return (urlsplit(root).path if root.startswith("file:") else root), {}


@dataclass(frozen=True)
class StoreDescriptor:
    """One store: its declaration, its Python store, what a server needs for it, its emulator,
    its test kit and how the conformance kit's Level 2 reaches it."""

    #: ``--store <name>``, the ``name`` of its declaration.
    name: str
    #: What ``--store <name>`` sets up, for ``txcommit server --help``.
    summary: str
    #: Its declaration (capabilities as data), a file of its package.
    declaration: Traversable | Path
    #: Its Python store's class, ``module:Class``; None for a store on the JVM only.
    python_store: str | None = None
    #: Its adapter jar among those txcommit carries per Spark line (``_jars/spark-<line>/``).
    adapter_jar: str | None = None
    #: Its adapter jar as a file of another distribution.
    adapter_jar_file: Traversable | Path | None = None
    #: The Maven connectors a server of a Spark line needs on its classpath.
    connectors: Callable[[str], tuple[Artifact, ...]] = no_connectors
    #: Whether the connectors follow the line's Hadoop version (kept in a folder per Hadoop).
    connectors_follow_hadoop: bool = True
    #: Confs the server gets for the store (the user's own confs win).
    server_confs: Mapping[str, str] = field(default_factory=dict)
    #: Its :class:`LocalEmulator`, ``module:attribute`` (in its devkit, outside the core wheel).
    emulator: str | None = None
    #: Its test kit, ``module:attribute`` (a ``txcommit.devkit.testkit.StoreTestKit``).
    testkit: str | None = None
    #: The command-line options its Python store takes (``endpoint``, ``region``) and the URL
    #: schemes that take each, for ``txcommit ls`` and ``txcommit conformance``.
    options: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: Level 2 of the conformance kit: (store, --endpoint, --region) -> root and confs.
    level2_target: Callable[[Any, str | None, str | None], Level2] = root_as_spark_names_it

    def store_class(self) -> type[Any]:
        """Its Python store's class (a ``txcommit.adapters.base.Store``), imported now."""
        assert self.python_store is not None, f"store '{self.name}' has no Python store"
        found: type[Any] = _resolve(self.python_store)
        return found

    def local_emulator(self) -> LocalEmulator:
        """Its emulator; ServerStartError when it has none or the devkit is not installed."""
        if self.emulator is None:
            raise ServerStartError(f"the store '{self.name}' has no local emulator")
        try:
            found = _resolve(self.emulator)
        except ImportError as e:
            raise ServerStartError(
                f"the {self.name} emulator is not installed ({e}): {LOCAL_EXTRA}"
            ) from e
        assert isinstance(found, LocalEmulator), f"{self.emulator} is not a LocalEmulator"
        return found

    def jars(self, line: str | None = None, *, fetch: bool = True, log: bool = True) -> list[Path]:
        """Local paths of the connector jars a server of Spark ``line`` (default: the
        installed pyspark's) needs, downloaded once if ``fetch``."""
        if self.connectors is no_connectors:
            return []
        line = line or _maven.installed_spark_line()
        # Another Hadoop's connectors go into their own folder: a tool that puts every jar of
        # the cache folder on a classpath must not get two AWS SDKs.
        hadoop = _maven.HADOOP_BY_LINE[line]
        own = self.connectors_follow_hadoop and hadoop != _maven.HADOOP_VERSION
        return _maven.fetched(
            self.connectors(line),
            f"the {self.name} jars for Spark {line}",
            f"txcommit jars --store {self.name}",
            fetch=fetch,
            log=log,
            subdir=f"hadoop-{hadoop}" if own else "",
        )


def _resolve(ref: str) -> Any:
    module, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module), attr)


def _load(name: str, ref: str, where: str) -> StoreDescriptor:
    try:
        found = _resolve(ref)
    except Exception as e:
        raise StorePluginError(
            f"the store '{name}' cannot be loaded: {where} ({ref}) fails with "
            f"{type(e).__name__}: {e}. Fix or uninstall the distribution that declares it."
        ) from e
    if not isinstance(found, StoreDescriptor):
        raise StorePluginError(
            f"the store '{name}' cannot be loaded: {where} ({ref}) names a {type(found).__name__}, "
            "not a txcommit.stores.StoreDescriptor."
        )
    if found.name != name:
        raise StorePluginError(
            f"the store '{name}' cannot be loaded: {where} ({ref}) names the store '{found.name}'; "
            "the two names must be the same."
        )
    return found


def _registered() -> dict[str, tuple[str, str]]:
    """name -> (reference, where it was registered): BUILTIN, then the entry points. The same
    entry point seen twice counts once; two for one name, or one for a built-in's, are
    refused."""
    found = {name: (ref, "txcommit's own list") for name, ref in BUILTIN.items()}
    for ep in metadata.entry_points(group=GROUP):
        where = f"the entry point '{ep.name}' of the group {GROUP}"
        seen = found.setdefault(ep.name, (ep.value, where))
        if seen[0] != ep.value:
            raise StorePluginError(
                f"the store '{ep.name}' is registered twice: as {seen[0]} ({seen[1]}) and as "
                f"{ep.value} ({where}). Uninstall one of the distributions."
            )
    return found


@functools.lru_cache(maxsize=1)
def store_descriptors() -> tuple[StoreDescriptor, ...]:
    """Every store, built-in or registered by another distribution, sorted by name
    (cached: ``store_descriptors.cache_clear()`` looks again)."""
    loaded = (_load(name, ref, where) for name, (ref, where) in _registered().items())
    return tuple(sorted(loaded, key=lambda d: d.name))


def store_names() -> tuple[str, ...]:
    """The stores' names, sorted: the choices of ``--store``."""
    return tuple(d.name for d in store_descriptors())


def store_descriptor(name: str) -> StoreDescriptor:
    """The store named ``name``; UnknownAdapterError listing the known ones otherwise."""
    for d in store_descriptors():
        if d.name == name:
            return d
    raise UnknownAdapterError(f"unknown store '{name}'; choose one of {', '.join(store_names())}")


def schemes_taking(option: str) -> tuple[str, ...]:
    """The URL schemes whose store takes ``option`` (``endpoint``, ``region``), in store order."""
    return tuple(dict.fromkeys(s for d in store_descriptors() for s in d.options.get(option, ())))


def python_stores() -> dict[str, StoreDescriptor]:
    """The stores with a Python store, by name."""
    return {d.name: d for d in store_descriptors() if d.python_store is not None}


__all__ = [
    "BUILTIN",
    "GROUP",
    "LOCAL_EXTRA",
    "Artifact",
    "Emulator",
    "Level2",
    "LocalEmulator",
    "StoreDescriptor",
    "no_connectors",
    "python_stores",
    "root_as_spark_names_it",
    "schemes_taking",
    "store_descriptor",
    "store_descriptors",
    "store_names",
]

"""A store's test kit: what txcommit's shared tests need to run on that store.

Each store names its kit in its descriptor (``StoreDescriptor.testkit``); the kit's module is
also a pytest plugin holding the session fixture of its emulator. The shared tests (the store
contract, every end-to-end test parametrised by store) take the stores and their kits from the
registry, so a store with a kit gets their coverage with no edit to them.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from txcommit.adapters.base import Store
from txcommit.devkit.lossy_proxy import LossyProxy
from txcommit.stores import store_descriptors
from txcommit.testing.store_contract import LossyStore

#: Fault points on either side of the commit point: where a killed server's state differs.
RECORD_KILL_POINTS = ("job.beforeRecord", "job.afterRecord")


@dataclass(frozen=True)
class StoreTestKit:
    """How the shared tests reach one store on its emulator."""

    #: The session fixture of the emulator its tables live on (in the kit's module); None for
    #: stores that need none (the local file system).
    fixture: str | None
    #: A fresh table: (store, table name, workdir, what ``fixture`` gives) -> the keyword
    #: arguments of the tests' table view (``support.tables.TableRef``): ``url`` and how to read
    #: it raw (``local``, ``s3`` and ``bucket``, or an fsspec ``hdfs`` file system and its root).
    table: Callable[[str, str, Path, Any], dict[str, Any]]
    #: Fresh, empty roots for the store contract (``txcommit.testing.store_contract``), by
    #: variant name: (store name, what ``fixture`` gives, a temporary directory) -> a Python
    #: store of that name.
    contract: dict[str, Callable[[str, Any, Path], Any]] | None = None
    #: A fresh store as ``contract`` makes it, behind an endpoint that can lose answers, for the
    #: contract's lost-answer tests: (store name, what ``fixture`` gives, a temporary directory)
    #: -> a context giving a ``LossyStore`` (:func:`behind_lossy_proxy` makes one); None: the
    #: kit offers none and those tests are skipped.
    lossy_contract: Callable[[str, Any, Path], AbstractContextManager[LossyStore]] | None = None
    #: Whether its tables need a server of their own (``--store <name>``): its connector is not
    #: on the shared server.
    own_server: bool = False
    #: The server confs reaching the emulator: (emulator, ``host:port`` of a proxy in front of
    #: it or None).
    server_confs: Callable[[Any, str | None], dict[str, str]] = lambda emulator, front: {}
    #: The emulator's port a proxy that loses answers fronts (lost-answer tests); None: the
    #: store has no such tests through a proxy.
    front_port: Callable[[Any], int] | None = None
    #: A table's URL as a client behind the proxy at ``host:port`` reaches it.
    through_front: Callable[[str, str], str] = lambda url, front: url
    #: The request (a regular expression over bytes) creating a file whose path ends in a match
    #: of ``names``, for the proxy to lose its answer.
    creates: Callable[[str], bytes] | None = None
    #: The fault points where a killed server's state differs on this store.
    kill_points: tuple[str, ...] = RECORD_KILL_POINTS
    #: Whether its tables are written by executors on the standalone cluster (where executor
    #: JVMs writing through the store's connector matter).
    on_cluster: bool = False
    #: Whether the store has real directories (a file's directory stays when it is deleted).
    directories: bool = False
    #: Whether one connection carries every call of the store's client, so that a lost answer
    #: fails the calls in flight beside it too.
    one_connection: bool = False


@contextlib.contextmanager
def behind_lossy_proxy(
    port: int, creates: Callable[[str], bytes], make: Callable[[str], Store]
) -> Iterator[LossyStore]:
    """The store ``make`` gives for ``host:port`` of a :class:`LossyProxy` in front of the
    loopback ``port``, which loses the answer to the request ``creates`` (a kit's ``creates``)
    matches for a key."""
    with LossyProxy("127.0.0.1", port) as proxy:
        yield LossyStore(
            make(proxy.host_port), lambda key: proxy.lose(creates(re.escape(key))), proxy.lost
        )


def store_test_kits() -> dict[str, StoreTestKit]:
    """Every store's test kit, by store name (stores without one are left out)."""
    from txcommit.stores import _resolve

    kits: dict[str, StoreTestKit] = {}
    for d in store_descriptors():
        if d.testkit is not None:
            kit = _resolve(d.testkit)
            assert isinstance(kit, StoreTestKit), f"{d.testkit} is not a StoreTestKit"
            kits[d.name] = kit
    return kits


def kit_modules() -> list[str]:
    """The kits' modules, for ``pytest_plugins``: each holds its emulator's fixture."""
    return sorted({d.testkit.partition(":")[0] for d in store_descriptors() if d.testkit})


__all__ = [
    "RECORD_KILL_POINTS",
    "StoreTestKit",
    "behind_lossy_proxy",
    "kit_modules",
    "store_test_kits",
]

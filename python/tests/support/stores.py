"""What the tests ask a store's descriptor (txcommit.stores) instead of naming the store: the
server arguments that pick it, and the session confs that pick its adapter."""

from __future__ import annotations

from txcommit._names import adapter_conf
from txcommit.adapters.declarations import declaration_named, known_adapters
from txcommit.stores import store_descriptor


def server_args(store: str) -> list[str]:
    """``txcommit server`` arguments for ``store`` reached at an emulator the tests share: the
    server starts no emulator of its own (no ``--local``)."""
    return ["--store", store_descriptor(store).name]


def session_confs(store: str) -> dict[str, str]:
    """The session confs that make ``store``'s adapter serve its tables: the adapter named for
    the scheme Spark names its tables by (its first) when another store claims that scheme too
    (s3a: s3 and s3-multipart); none when the scheme has one adapter."""
    scheme = declaration_named(store).schemes[0]
    claimed = [d.name for d in known_adapters() if scheme in d.schemes]
    return {adapter_conf(scheme): store} if len(claimed) > 1 else {}

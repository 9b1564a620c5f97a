"""The adapter registry: which adapter serves a table, as the JVM's ``Adapters.forPath`` decides.

A table's URI scheme picks the adapter whose declaration lists that scheme in ``defaultFor``
(plain local paths are ``file``); an override per scheme, with the meaning of the JVM conf
``spark.txcommit.adapter.<scheme>=<adapter name>``, wins. An unknown scheme, an unknown
adapter name, or an override naming an adapter that does not serve the scheme is refused with
:class:`~txcommit.errors.UnknownAdapterError`, whose message lists the known adapters.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from txcommit._names import ADAPTER_CONF_PREFIX
from txcommit.adapters.base import Store
from txcommit.adapters.declarations import (
    AdapterDeclaration,
    known_adapters,
    known_summary,
)
from txcommit.errors import StoreError, UnknownAdapterError, UnsupportedStoreError
from txcommit.paths import display_url, printable
from txcommit.stores import python_stores

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")


def scheme_of(url_or_path: str) -> str:
    """The URI scheme of a URL, lower-cased; ``file`` for a plain local path."""
    m = _SCHEME.match(url_or_path)
    # A one-letter "scheme" is a Windows drive (C:\data), not a URI scheme.
    if m is None or len(m.group(1)) == 1:
        return "file"
    return m.group(1).lower()


def overrides_from_conf(conf: Mapping[str, str]) -> dict[str, str]:
    """The per-scheme adapter overrides among Spark confs (``spark.txcommit.adapter.*``)."""
    return {
        k[len(ADAPTER_CONF_PREFIX) :]: v.strip()
        for k, v in conf.items()
        if k.startswith(ADAPTER_CONF_PREFIX) and v.strip()
    }


def adapter_for(url_or_path: str, overrides: Mapping[str, str] | None = None) -> AdapterDeclaration:
    """The declaration of the adapter serving ``url_or_path``.

    ``overrides`` maps a scheme (or the full conf key ``spark.txcommit.adapter.<scheme>``) to
    an adapter name and wins over the scheme's default adapter.
    """
    scheme = scheme_of(url_or_path)
    key = ADAPTER_CONF_PREFIX + scheme
    chosen: str | None = None
    for k, v in (overrides or {}).items():
        if k.lower() in (scheme, key) and v.strip():
            chosen = v.strip()
    adapters = known_adapters()
    if chosen is not None:
        match = next((d for d in adapters if d.name == chosen), None)
        if match is None:
            raise UnknownAdapterError(
                f"txcommit: the override for scheme '{scheme}' ({key}) names the unknown store "
                f"adapter '{chosen}'; known adapters: {known_summary()}. Fix the override or "
                "remove it to get the default."
            )
        if scheme not in match.schemes:
            raise UnknownAdapterError(
                f"txcommit: the override for scheme '{scheme}' ({key}) names adapter "
                f"'{chosen}', which does not serve scheme '{scheme}' (it serves "
                f"{', '.join(match.schemes)}). Known adapters: {known_summary()}."
            )
        return match
    default = next((d for d in adapters if scheme in d.default_for), None)
    if default is None:
        raise UnknownAdapterError(
            f"txcommit: no store adapter serves scheme '{scheme}' (table "
            f"{display_url(url_or_path)}); known adapters: {known_summary()}. Use a supported "
            f"store, or add an adapter for '{scheme}' and set {key}."
        )
    return default


def implementation(declaration: AdapterDeclaration) -> type[Store]:
    """The Python class mirroring ``declaration``'s adapter: its store's descriptor names it
    (:mod:`txcommit.stores`)."""
    stores = python_stores()
    found = stores.get(declaration.name)
    if found is None:
        python = ", ".join(sorted(stores))
        raise UnsupportedStoreError(
            f"txcommit: adapter '{declaration.name}' ({declaration.primitive}) has no Python "
            f"implementation yet (Python has: {python}); use the table through Spark, where "
            "the JVM plugin serves it."
        )
    store_class: type[Store] = found.store_class()
    return store_class


def open_store(
    url_or_path: str, overrides: Mapping[str, str] | None = None, **options: Any
) -> Store:
    """A :class:`Store` rooted at ``url_or_path``, of the adapter :func:`adapter_for` picks.

    ``options`` go to the store's constructor (for S3: ``endpoint``, ``region``,
    ``path_style``, ``allow_http``, ``access_key_id``, ``secret_access_key``, ...; for GCS:
    ``endpoint``; for HDFS: ``endpoint`` (the NameNode's WebHDFS address), ``user``; for Azure:
    ``account``, ``account_key``, ``endpoint``, ``emulator``).
    """
    dropped = next((c for c in url_or_path if c in "\t\r\n"), None)
    if dropped is not None and _SCHEME.match(url_or_path) and scheme_of(url_or_path) != "file":
        shown = printable(display_url(url_or_path))
        raise StoreError(
            f"txcommit: {shown} has a control character ({printable(dropped)}) in it, which URL "
            "parsing drops (it would name another path); txcommit's Python readers cannot read "
            "it there. Spark with the txcommit plugin reads it: read the table through Spark, "
            "or copy it to a path without control characters",
            url=shown,
        )
    declaration = adapter_for(url_or_path, overrides)
    return implementation(declaration)(url_or_path, declaration=declaration, **options)


__all__ = [
    "adapter_for",
    "implementation",
    "open_store",
    "overrides_from_conf",
    "scheme_of",
]

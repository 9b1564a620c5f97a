"""The ``local`` store: the local file system through Spark's own Hadoop client."""

from __future__ import annotations

from txcommit.adapters.plugin import StorePlugin

LOCAL = StorePlugin(
    name="local",
    summary="the local file system, served by the plugin jar alone",
    python_store="txcommit.adapters.local:LocalStore",
)

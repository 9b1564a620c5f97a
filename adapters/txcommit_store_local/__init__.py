"""The ``local`` store: the local file system through Spark's own Hadoop client."""

from __future__ import annotations

from txcommit.adapters.plugin import StorePlugin

LOCAL = StorePlugin(
    name="local",
    summary="the local file system, served by the plugin jar alone",
    python_store="txcommit.adapters.local:LocalStore",
)

#: The entry points of the txcommit.adapters group (store name -> descriptor above), read
#: without importing this module by the build (setup.py) and by a checkout (builtin_stores).
ENTRY_POINTS = {"local": "LOCAL"}

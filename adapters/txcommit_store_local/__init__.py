"""The ``local`` store: the local file system through Spark's own Hadoop client. Its Python
store is ``txcommit.adapters.local`` (the readers open local tables with it)."""

from __future__ import annotations

from importlib.resources import files

from txcommit.stores import StoreDescriptor

LOCAL = StoreDescriptor(
    name="local",
    summary="the local file system, served by the plugin jar alone",
    declaration=files(__name__) / "local.json",
    python_store="txcommit.adapters.local:LocalStore",
    testkit="txcommit_store_local.devkit.testkit:KIT",
)

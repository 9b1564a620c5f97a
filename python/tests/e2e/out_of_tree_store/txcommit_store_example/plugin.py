"""The descriptor txcommit finds through the ``txcommit.adapters`` entry point ``example``."""

from __future__ import annotations

from importlib.resources import files

from txcommit.adapters.plugin import StorePlugin

EXAMPLE = StorePlugin(
    name="example",
    summary="example:///abs/path tables (a local directory), from txcommit-store-example",
    python_store="txcommit_store_example.store:ExampleStore",
    declaration_file=files("txcommit_store_example") / "adapter.json",
    adapter_jar_file=files("txcommit_store_example") / "txcommit-store-example.jar",
    # Hadoop reaches example:// through the jar's own FileSystem.
    server_confs={"spark.hadoop.fs.example.impl": "org.example.txcommit.ExampleFileSystem"},
)

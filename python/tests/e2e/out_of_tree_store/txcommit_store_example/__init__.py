"""``example://`` tables for txcommit: a local directory under its own URL scheme, a store of
another distribution, in one folder of the shape txcommit's own have: this descriptor, its
declaration (``example.json``), its Python store (``store.py``) and its JVM adapter
(``txcommit-store-example.jar``, built from ``jvm/``), registered in the ``txcommit.adapters``
entry-point group."""

from __future__ import annotations

from importlib.resources import files

from txcommit.stores import StoreDescriptor

EXAMPLE = StoreDescriptor(
    name="example",
    summary="example:///abs/path tables (a local directory), from txcommit-store-example",
    python_store="txcommit_store_example.store:ExampleStore",
    declaration=files(__name__) / "example.json",
    adapter_jar_file=files(__name__) / "txcommit-store-example.jar",
    # Hadoop reaches example:// through the jar's own FileSystem.
    server_confs={"spark.hadoop.fs.example.impl": "org.example.txcommit.ExampleFileSystem"},
)

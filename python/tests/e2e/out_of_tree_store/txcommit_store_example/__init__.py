"""``example://`` tables for txcommit: a local directory under its own URL scheme.

A store adapter distributed on its own, as a third party writes one: its declaration
(``adapter.json``), its Python mirror (:class:`~txcommit_store_example.store.ExampleStore`),
its JVM adapter (``txcommit-store-example.jar``, built from ``jvm/``) and the descriptor that
ties them together (:data:`~txcommit_store_example.plugin.EXAMPLE`), registered in the
``txcommit.adapters`` entry-point group.
"""

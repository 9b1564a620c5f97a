"""The ``gcs`` store of txcommit (Google Cloud Storage), as its folder ``adapters/gcs/`` ships
it in the txcommit distribution: its descriptor (:data:`~txcommit_store_gcs.plugin.GCS`) and its
Python mirror (:class:`~txcommit_store_gcs.store.GcsStore`).
"""

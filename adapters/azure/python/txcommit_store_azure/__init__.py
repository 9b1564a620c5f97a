"""The ``azure`` store of txcommit (Azure Blob Storage), as its folder ``adapters/azure/`` ships
it in the txcommit distribution: its descriptor (:data:`~txcommit_store_azure.plugin.AZURE`) and
its Python mirror (:class:`~txcommit_store_azure.store.AzureBlobStore`).
"""

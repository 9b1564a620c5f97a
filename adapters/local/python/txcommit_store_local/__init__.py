"""The ``local`` store of txcommit (the local file system), as its folder ``adapters/local/``
ships it in the txcommit distribution: its descriptor
(:data:`~txcommit_store_local.plugin.LOCAL`). Its Python mirror,
:class:`txcommit.adapters.local.LocalStore`, stays in the package: the readers, the table views
and the conformance kit open local tables with it whatever stores are installed.
"""

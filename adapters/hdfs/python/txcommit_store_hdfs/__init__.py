"""The ``hdfs`` store of txcommit, as its folder ``adapters/hdfs/`` ships it in the txcommit
distribution: its descriptor (:data:`~txcommit_store_hdfs.plugin.HDFS`) and its Python mirror
over WebHDFS (:class:`~txcommit_store_hdfs.store.HdfsStore`).
"""

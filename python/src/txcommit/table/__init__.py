"""The table format without a JVM, one module per thing it holds: :mod:`~txcommit.table.names`
(transaction ids, write ids, data file names), :mod:`~txcommit.table.layout` (where the log
lives), :mod:`~txcommit.table.records` and :mod:`~txcommit.table.checkpoints` (their codecs,
byte for byte as the JVM plugin writes them, over :mod:`~txcommit.table.jackson`) and
:mod:`~txcommit.table.view` (the reader rule: which data files a reader may see). Nothing here
draws on a terminal: the command line renders (:mod:`txcommit._console`)."""

"""The table format without a JVM: :mod:`~txcommit.table.format` (the log layout, transaction
ids, data file names, the commit record and checkpoint codecs, byte for byte as the JVM plugin
writes them) and :mod:`~txcommit.table.view` (the reader rule: which data files a reader may
see)."""

"""The table format without a JVM: :mod:`~txcommit.table.format` (the log layout, transaction
ids, data file names and the commit record codec, byte for byte as the JVM plugin writes them)
and :mod:`~txcommit.table.view` (the reader rule: which data files a reader may see)."""

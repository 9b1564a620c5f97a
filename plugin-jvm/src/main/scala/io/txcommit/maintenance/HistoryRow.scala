package io.txcommit.maintenance

/**
 * One transaction of a table as history shows it (docs/protocol.md, "History"). `rows` is
 * always empty: Spark's commit API gives a committer no row counts. `schema` is set where the
 * table's schema changed: the schema this commit set, when it differs from the one before it.
 * `version` is the commit's place in the table's versions (docs/protocol.md, I30) and `storeTime`
 * the time the store gave its commit point: what `txcommit.asOf` and `TIMESTAMP AS OF` compare.
 * `restoredFiles` counts the files a restore re-added (I31).
 */
final case class HistoryRow(txn: String, state: String, startedAt: Long, committedAt: Option[Long],
    operation: Option[String], writeId: Option[String], files: Option[Long], bytes: Option[Long],
    rows: Option[Long], removedFiles: Option[Long], removedBytes: Option[Long], sequence: Option[Long],
    schema: Option[String] = None, version: Option[Long] = None, storeTime: Option[Long] = None,
    restoredFiles: Option[Long] = None, transaction: Option[String] = None)

package io.txcommit.spark

import org.apache.spark.sql.SparkSessionExtensions
import org.apache.spark.sql.catalyst.FunctionIdentifier
import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionInfo, Literal}
import org.apache.spark.sql.txcommit.TxCommitSQLConf

import io.txcommit.Version

/**
 * `spark.sql.extensions=io.txcommit.spark.TxCommitExtensions`: registers txcommit's confs (so
 * `spark.conf.set` validates them), the SQL function `txcommit_version()`, by which a
 * client checks that the server it talks to has the plugin, and which version, and the
 * maintenance statements `TXCOMMIT VACUUM | CHECKPOINT | HISTORY | FILES | GENERATE MANIFEST`
 * ([[TxCommitSqlParser]]), and the log-first snapshot of file-source reads ([[LogFirstReads]]) and of
 * catalog tables' reads ([[CatalogTableSnapshots]]).
 */
class TxCommitExtensions extends (SparkSessionExtensions => Unit) {
  override def apply(ext: SparkSessionExtensions): Unit = {
    Version.requireSparkLine() // a session of another Spark line would fail its first query
    TxCommitSQLConf.register()
    // TXCOMMIT VACUUM | CHECKPOINT | HISTORY | FILES | GENERATE MANIFEST '<path>': maintenance a
    // Connect client runs with spark.sql.
    ext.injectParser((_, delegate) => new TxCommitSqlParser(delegate))
    // Log-first snapshots for file-source reads, fixed before Spark lists their data.
    ext.injectHintResolutionRule(session => LogFirstReads(session))
    // The same for catalog tables: the snapshot before FindDataSourceTable, and the file index of
    // a table with partitions in the catalog swapped for one that lists with it.
    ext.injectHintResolutionRule(session => CatalogTableSnapshots(session))
    ext.injectResolutionRule(session => CatalogTableSnapshotIndexes(session))
    // A read of a past snapshot, its data listed: every file of it VACUUM may delete was there.
    ext.injectCheckRule(session => PastSnapshotListings(session))
    // Writes into catalog tables: the catalog's columns count for the schema guard, and a write
    // that may reach a partition located outside the table is refused before it runs.
    ext.injectPostHocResolutionRule(session => CatalogTableWrites(session))
    ext.injectCheckRule(session => CustomLocationWrites(session))
    // DROP TABLE after a write waits for the write's row count, which would recreate its directory.
    ext.injectCheckRule(session => DropTableWaits(session))
    ext.injectFunction((
        FunctionIdentifier("txcommit_version"),
        new ExpressionInfo(classOf[TxCommitExtensions].getName, null, "txcommit_version",
          "_FUNC_() - the version of the txcommit plugin on this server.", "", "", "", "misc_funcs",
          "0.1.0", "", "built-in"),
        (args: Seq[Expression]) => {
          if (args.nonEmpty) throw new IllegalArgumentException("txcommit_version() takes no arguments")
          Literal(Version.current)
        }))
  }
}

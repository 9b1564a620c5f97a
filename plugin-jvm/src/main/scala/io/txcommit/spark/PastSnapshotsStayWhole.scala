package io.txcommit.spark

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.execution.datasources.{HadoopFsRelation, LogicalRelation}

import io.txcommit.conf.TxCommitConf
import io.txcommit.read.{SnapshotAsOf, SnapshotHandle}
import io.txcommit.store.Adapters

/**
 * A read of a past snapshot lists the table's log (its snapshot, [[LogFirstReads]]), then the
 * data. VACUUM may run in between: it records its horizon in `vacuum/`, then deletes the files
 * a later replacing commit removed, which the snapshot holds; the data listing then misses them
 * and the read would show part of the snapshot, or none of it. So once the analyzer has built
 * the read's relation (Spark lists a path's data then), the snapshot is resolved again: a file
 * the listing missed was deleted after VACUUM's record was written, so that record is found now
 * and the read fails whole ([[io.txcommit.TimeTravelException]]), as one that began after it.
 * A file deleted after the listing fails the read when Spark opens it.
 */
final case class PastSnapshotsStayWhole(session: SparkSession) extends (LogicalPlan => Unit) {
  import ReadRules.{AsOfKey, ClauseKey, Key}

  override def apply(plan: LogicalPlan): Unit = plan.foreach {
    case l: LogicalRelation => l.relation match {
        case r: HadoopFsRelation if r.options.contains(AsOfKey) => recheck(r.options)
        case _ => ()
      }
    case _ => ()
  }

  private def recheck(options: Map[String, String]): Unit =
    for {
      encoded <- options.get(Key).toSeq
      handle <- SnapshotHandle.decode(encoded).toOption.flatten.toSeq
      roots = handle.tables.map(_.root)
      asOf <- ReadRules.asOfOf(options - ClauseKey, roots, options.getOrElse(ClauseKey, TxCommitConf.AsOfOption))
      root <- roots
    } {
      val conf = session.sessionState.newHadoopConf()
      val dir = new Path(root)
      val ignoreCorrupt = TxCommitConf.bool(conf, TxCommitConf.IgnoreCorruptRecords, default = false)
      SnapshotAsOf.resolve(dir, Adapters.open(dir, conf), asOf.value, asOf.option, ignoreCorrupt)
    }
}

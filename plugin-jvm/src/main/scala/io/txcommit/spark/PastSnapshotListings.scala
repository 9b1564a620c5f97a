package io.txcommit.spark

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.execution.datasources.{HadoopFsRelation, LogicalRelation, PartitioningAwareFileIndex}

import io.txcommit.conf.TxCommitConf
import io.txcommit.read.AsOfListing

/**
 * A check of each analysed plan (docs/protocol.md, I30): a file-source relation reading a past
 * snapshot was listed during resolution, after its snapshot was taken from the log; its listing
 * must hold every file of the snapshot that a later replacing commit removed ([[AsOfListing]]:
 * the files VACUUM may delete), or the read fails with a `TimeTravelException` naming them. So a
 * VACUUM between the snapshot's log listing and the data listing, one that recorded no horizon,
 * or a file replaced under its name never makes a past read short. Costs nothing when the
 * listing holds them (a look-up per such file), and nothing at all for other reads. A catalog
 * table whose partitions the catalog tracks lists later, and checks there
 * ([[SnapshotCatalogFileIndex]]).
 */
final case class PastSnapshotListings(session: SparkSession) extends (LogicalPlan => Unit) {
  override def apply(plan: LogicalPlan): Unit = plan.foreachWithSubqueries {
    case l: LogicalRelation => l.relation match {
        case r: HadoopFsRelation => (r.location, r.options.get(TxCommitConf.SnapshotOption)) match {
            case (index: PartitioningAwareFileIndex, Some(snapshot)) if snapshot.nonEmpty =>
              AsOfListing.of(snapshot).foreach { case (root, listing) =>
                listing.verify(root, index.rootPaths, index.allFiles(),
                  session.sessionState.newHadoopConfWithOptions(r.options))
              }
            case _ => ()
          }
        case _ => ()
      }
    case _ => ()
  }
}

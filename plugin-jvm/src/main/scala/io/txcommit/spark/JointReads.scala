package io.txcommit.spark

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.datasources.{HadoopFsRelation, InMemoryFileIndex, LogicalRelation, NoopCache}
import org.apache.spark.sql.txcommit.LogFileIndex

import io.txcommit.read.{LogFirstSnapshot, ReadFiles, SnapshotHandle}

/**
 * Makes the reads of now of one plan that were analyzed apart hold each multi-table transaction
 * whole or not at all (docs/protocol.md, I35). A statement's reads take one snapshot together
 * ([[ReadRules.planJoint]]), but a classic DataFrame read is analyzed when it is created and a
 * Spark Connect plan's `read` relations are analyzed one by one before the plan is, each taking
 * (and listing with) its own snapshot: a transaction committed between two of them would be in
 * one table and not the other.
 *
 * So, once the whole plan is resolved (post-hoc resolution, subqueries included): when its
 * relations of now carry snapshots of more than one read, take one snapshot of all their tables
 * and list again each relation whose tables' snapshot differs from it; every relation takes the
 * joint handle, so a plan built on this one (`df.count()` analyzes it again) finds one read and
 * costs nothing more. A read of several tables analyzed apart thus pays one more listing of
 * their logs, and a listing of the data of a table that changed in between.
 *
 * Read-path note: this is the one place that rebuilds a relation's file index after analysis; a
 * new kind of file index carrying a snapshot needs its case in [[withSnapshot]] (an index it
 * cannot rebuild is left as listed, as before this rule). A read planned from the log
 * (`LogFileIndex`) takes the files [[ReadFiles.of]] chooses under the joint snapshot.
 */
final case class JointReads(session: SparkSession) extends Rule[LogicalPlan] {
  import ReadRules.{AsOfKey, Key}

  override def apply(plan: LogicalPlan): LogicalPlan =
    if (!ReadRules.enabled(session)) plan
    else {
      val reads = plan.collectWithSubqueries { case l: LogicalRelation => l.relation }.collect {
        case r: HadoopFsRelation if ofNow(r) => r -> handleOf(r)
      }.collect { case (r, Some(h)) => r -> h }
      if (reads.map(_._2.readId).distinct.size <= 1) plan
      else {
        // The tables each read's own snapshot holds too: a directory of tables read by a planned read.
        val roots = (reads.flatMap(_._1.location.rootPaths) ++
          reads.flatMap(_._2.tables.map(t => new org.apache.hadoop.fs.Path(t.root)))).distinct
        LogFirstSnapshot.forRoots(roots, session.sessionState.newHadoopConf()).fold(plan) { joint =>
          plan.transformUpWithSubqueries {
            case l: LogicalRelation => l.relation match {
                case r: HadoopFsRelation if ofNow(r) && handleOf(r).isDefined =>
                  l.copy(relation = withSnapshot(r, handleOf(r).get, joint))
                case _ => l
              }
          }
        }
      }
    }

  /** A relation whose options hold a snapshot of now (not of a past version: those are fixed). */
  private def ofNow(r: HadoopFsRelation): Boolean = !r.options.keySet.exists(_.equalsIgnoreCase(AsOfKey))

  private def handleOf(r: HadoopFsRelation): Option[SnapshotHandle] =
    r.options.collectFirst { case (k, v) if k.equalsIgnoreCase(Key) => v }
      .flatMap(v => SnapshotHandle.decode(v).toOption.flatten)

  /** `r` with the joint snapshot: listed again only when its tables' snapshot changed. */
  private def withSnapshot(r: HadoopFsRelation, own: SnapshotHandle, joint: SnapshotHandle): HadoopFsRelation = {
    val encoded = joint.encode
    val options = r.options.filterNot(_._1.equalsIgnoreCase(Key)) + (Key -> encoded)
    val same = own.readId == joint.readId || own.tables.forall(joint.tables.contains)
    val location = if (same) Some(r.location)
    else r.location match {
      case s: SnapshotCatalogFileIndex => Some(s.copy(snapshot = encoded))
      case i: InMemoryFileIndex =>
        Some(new InMemoryFileIndex(session, i.rootPaths, options, Some(r.schema), NoopCache))
      case l: LogFileIndex =>
        // A read planned from the log: its files, chosen again under the joint snapshot.
        val conf = session.sessionState.newHadoopConfWithOptions(r.options.filterNot(_._1.equalsIgnoreCase(Key)))
        ReadFiles.of(joint, l.rootPaths, conf) match {
          case ReadFiles.Files(files, _) => Some(l.withFiles(files))
          case ReadFiles.SparkLists => None
        }
      case _ => None // not one of ours to rebuild: keep it and the snapshot it was listed with
    }
    location.fold(r)(loc => r.copy(location = loc, options = options)(r.sparkSession))
  }
}

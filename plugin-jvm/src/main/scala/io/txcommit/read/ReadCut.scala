package io.txcommit.read

import java.util.UUID

import io.txcommit.log.CommitRecord

/**
 * The cut of one Spark read: the moment the read's listing began, fixed on the driver when
 * Spark creates the read filter for one listing, and carried to every executor that lists part
 * of it (the filter is serialised with it). A transaction belongs to the read's snapshot iff
 * its record was found by the read (the first JVM to look decides, for all of them: see
 * [[CutArbiter]]) and it committed before the read began.
 *
 * Why "before the read began": Spark lists a table's directories one after another, and on
 * executors in parallel, before txcommit sees a single file; a transaction that committed
 * after some directory was listed may have written files there after that listing. Its record's
 * `committedAt` is taken after its last data file was complete, so a transaction that
 * committed before the read began has every file in every listing of the read, and applying
 * it (its files, and the files a replacing commit removes) can never show part of it.
 *
 * `committedAt` is the writer's driver clock and `startedAt` the reader's: equal clocks when
 * both are one Spark application (one Connect server). A record of another application counts
 * `maxClockSkewMs` later, so a writer clock behind the reader's by up to that much cannot make
 * a transaction that committed during the listing look older.
 */
final case class ReadCut(id: String, startedAt: Long, appId: Option[String], maxClockSkewMs: Long) {
  def precedes(record: CommitRecord): Boolean = {
    val allowance = if (appId.isDefined && record.appId == appId) 0L else maxClockSkewMs
    record.committedAt + allowance <= startedAt
  }

  override def toString: String = s"read $id (began at $startedAt)"
}

object ReadCut {

  /** A new cut, for a listing that begins now in this application. */
  def begin(maxClockSkewMs: Long): ReadCut =
    ReadCut(UUID.randomUUID().toString, System.currentTimeMillis(),
      io.txcommit.SparkApp.id, maxClockSkewMs)
}

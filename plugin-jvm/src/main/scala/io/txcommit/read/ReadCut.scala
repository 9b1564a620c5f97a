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
 * Which clock: a commit of the reading application counts at its `committedAt`, the same
 * driver's clock as the cut (the same Spark application: one Connect server). Another
 * application's counts at `storedAt`, the time its record's store stamped on it (S3's
 * `LastModified`, the NameNode's modification time): one clock for every writer, so a writer
 * driver whose clock runs ahead delays nothing and one that runs behind cannot slip a commit
 * made during the listing into the read. It counts `maxClockSkewMs` later, the allowance for
 * the reader's clock against the store's. The record's own `committedAt` is used only where
 * the store keeps no time (a modification time of 0).
 *
 * Why a record's store time is late enough: its transaction's data files were complete before
 * the record was written (on `rename` stores the time is the temporary record's, on
 * `multipart-complete` the upload's start: both after the last data file).
 */
final case class ReadCut(id: String, startedAt: Long, appId: Option[String], maxClockSkewMs: Long) {
  def precedes(record: CommitRecord, storedAt: => Option[Long]): Boolean =
    if (appId.isDefined && record.appId == appId) record.committedAt <= startedAt
    else storedAt.filter(_ > 0L).getOrElse(record.committedAt) + maxClockSkewMs <= startedAt

  override def toString: String = s"read $id (began at $startedAt)"
}

object ReadCut {

  /** A new cut, for a listing that begins now in this application. */
  def begin(maxClockSkewMs: Long): ReadCut =
    ReadCut(UUID.randomUUID().toString, System.currentTimeMillis(),
      io.txcommit.SparkApp.id, maxClockSkewMs)
}

package io.txcommit.log

import java.util.concurrent.{Callable, Executors, TimeUnit}

import scala.jdk.CollectionConverters._

import org.apache.hadoop.fs.Path
import org.slf4j.LoggerFactory

import io.txcommit.{CommitConflictException, Paths, Version}
import io.txcommit.store.CommitStore

/**
 * Writes a table's next [[Checkpoint]]: the newest one (if any) folded with every record
 * published since, listed as a reader would (`commits/` first, then `replace/`, so a replacing
 * commit whose `commits/` copy was listed is in the `replace/` listing), and created with the
 * store's exclusive primitive. Called as derived work after a commit, by VACUUM and by
 * `TXCOMMIT CHECKPOINT`; best effort for all of them: a reader never needs a checkpoint.
 */
object CheckpointWriter {
  private val log = LoggerFactory.getLogger(getClass)

  /** Records read at once while building (S3 answers each GET in a round trip). */
  val ReadThreads = 16

  /** What a call did: the checkpoint written, or why none was. */
  final case class Outcome(written: Option[Checkpoint], why: String)

  def write(table: Path, store: CommitStore, appId: Option[String],
      now: () => Long = () => System.currentTimeMillis(), reads: Option[String] = None): Outcome = {
    val layout = LogLayout(table)
    val listed = CheckpointLog.list(layout, store.list)
    val previous = CheckpointLog.newest(listed, store.read, Paths.display, _ => true)
    val through = previous.map(_.through).getOrElse(0L)
    val commitTxns = store.list(layout.commitsDir).flatMap(st => LogLayout.txnOfRecordName(st.getPath.getName))
    val replaced = ReplaceLog.load(layout, store.list, store.read, Paths.display, after = through)
    val covered = previous.map(_.committed.keySet).getOrElse(Set.empty)
    val unread = commitTxns.filterNot(t => covered(t) || replaced.byTxn.contains(t)).distinct
    // How the table is read (I32): carried from the previous checkpoint unless this one changes it.
    val mode = reads.orElse(previous.flatMap(_.reads))
    if (previous.isDefined && unread.isEmpty && replaced.records.isEmpty && mode == previous.get.reads) {
      return Outcome(None, s"checkpoint ${previous.get.number} is up to date")
    }
    val appendRecords = readAll(unread) { t =>
      val path = layout.commitRecord(t)
      val bytes = store.read(path).getOrElse(throw new java.io.IOException(
          s"txcommit: ${Paths.display(path)} was listed but cannot be read now; no checkpoint written"))
      RecordCodec.decode(bytes, Paths.display(path), t)
    }.filterNot(_.isReplacing) // a replacing commit's copy: its replace/ record was listed too
    val appends = appendRecords.map(r => r.txn -> r.added.toVector).toMap
    val (committed, removed) = fold(previous, appends, replaced)
    // The table's schema as of what it covers (I27), so the schema guard need not read those records.
    val schema = TableSchema.checkpointMark(previous, appendRecords ++ replaced.records, committed.contains,
      layout, store.list, store.read)
    val checkpoint = Checkpoint(listed.highest + 1, now(), appId, Version.writer,
      math.max(through, replaced.highest), committed, removed, schema = Some(schema), reads = mode)
    val target = layout.checkpoint(checkpoint.number)
    try {
      store.createExclusive(target, CheckpointCodec.encode(checkpoint))
      log.info(s"txcommit: wrote checkpoint ${Paths.display(target)}: ${committed.size} transaction(s), " +
        s"${checkpoint.files} live file(s), through replacing commit ${checkpoint.through}")
      Outcome(Some(checkpoint), "written")
    } catch {
      case _: CommitConflictException =>
        Outcome(None, s"another writer published checkpoint ${checkpoint.number} first")
    }
  }

  /**
   * The committed state of `previous` (none: empty) after the appends `appends` (not covered by
   * it) and the replacing commits `replaced` (those after its `through`), by the reader rule of
   * docs/protocol.md: a transaction's files are those of its highest-sequence `replace/`
   * record, else of its `commits/` record (else what `previous` kept), plus those a restore
   * re-added (I31), less every path still removed after the removals and restores folded in
   * sequence order ([[NetRemovals]]). Removals no covered transaction accounts for stay listed;
   * a removal a restore cancelled is gone, so the checkpoint keeps the restore.
   */
  def fold(previous: Option[Checkpoint], appends: Map[String, Vector[AddedFile]],
      replaced: ReplaceLog): (Map[String, Vector[AddedFile]], Vector[RemovedFile]) = {
    val net = NetRemovals.of(previous, replaced.records)
    val hidden = net.removed.iterator.map(_._1.path).toSet
    val carried = previous.map(_.committed).getOrElse(Map.empty)
    val latest = replaced.byTxn.map { case (t, r) => t -> r.added.toVector } // last sequence wins
    val listed = carried ++ appends ++ latest
    // A restored file of T is T's again, also where a checkpoint had dropped it from T's list; a
    // restored file without a txn id is the restoring commit's (a log-only table shows it, I32).
    val restorer = replaced.records.flatMap(r => r.restored.map(_.path -> r.txn)).toMap
    val restored = net.restored.values.toVector.flatMap(f =>
      f.txn.orElse(restorer.get(f.path)).map(_ -> AddedFile(f.path, f.size))).groupMap(_._1)(_._2)
    val committed = (listed.keySet ++ restored.keySet).iterator.map { t =>
      val own = listed.getOrElse(t, Vector.empty)
      val back = restored.getOrElse(t, Vector.empty).filterNot(f => own.exists(_.path == f.path))
      t -> (own ++ back).filterNot(f => hidden(f.path)).sortBy(_.path) // in the order the codec writes
    }.toMap
    val removed = Removals.distinct(net.removed.map(_._1)).filterNot(_.txn.exists(committed.contains))
    (committed, removed)
  }

  private def readAll[A](txns: Seq[String])(f: String => A): Seq[A] =
    if (txns.size <= 1) txns.map(f)
    else {
      val pool = Executors.newFixedThreadPool(math.min(ReadThreads, txns.size))
      try {
        pool.invokeAll(txns.map(t => (() => f(t)): Callable[A]).asJava).asScala.toSeq.map(_.get())
      } catch {
        case e: java.util.concurrent.ExecutionException => throw e.getCause
      } finally {
        pool.shutdownNow()
        pool.awaitTermination(10, TimeUnit.SECONDS)
      }
    }
}

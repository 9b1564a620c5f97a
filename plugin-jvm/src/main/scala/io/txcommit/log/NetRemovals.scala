package io.txcommit.log

/**
 * The reader rule's removals, folded once for every reader (docs/protocol.md, I11 and I31):
 * start from a checkpoint's `removed` (net as of its `through`), then take each replacing
 * record in sequence order, adding its `removed` and then cancelling, for each of its
 * `restored`, every removal so far that hides the file it names (same path; for a file without
 * a txn id, the same identity). A file is hidden iff a removal is left ([[removals]]); a file
 * of transaction T that a restore re-added is visible although T's file list (a checkpoint's,
 * which drops removed files) no longer has it ([[isRestored]]).
 *
 * @param removed  the net removals, each with the record that made it (None: the checkpoint's)
 * @param restored the files that the records folded in re-added, by path (a file without a txn
 *                 id among them is named by the log: a log-only table shows it, I32)
 */
final class NetRemovals private (val removed: Vector[(RemovedFile, Option[CommitRecord])],
    val restored: Map[String, RemovedFile]) {
  lazy val removals: Removals = Removals(removed.iterator.map(_._1))
  private lazy val byPath = removed.groupBy(_._1.path)

  /** Whether a restore folded in re-added the file at `path`. */
  def isRestored(path: String): Boolean = restored.contains(path)

  /** The net removals of `path`, each with the record that made it. */
  def removedBy(path: String): Seq[(RemovedFile, Option[CommitRecord])] = byPath.getOrElse(path, Vector.empty)
}

object NetRemovals {

  /** `base` (a checkpoint's net removals, or none) then `records`, in the order given (sequence order). */
  def fold(base: Seq[RemovedFile], records: Seq[CommitRecord]): NetRemovals = {
    val (removed, restored) =
      records.foldLeft(
        (base.iterator.map(f => f -> Option.empty[CommitRecord]).toVector, Map.empty[String, RemovedFile])) {
        case ((removed, restored), r) =>
          val added = removed ++ r.removed.map(_ -> Some(r))
          val cancels = r.restored.groupBy(_.path)
          val kept =
            if (cancels.isEmpty) added
            else added.filterNot { case (f, _) => cancels.get(f.path).exists(_.exists(f.cancelledBy)) }
          (kept, restored ++ r.restored.iterator.map(f => f.path -> f))
      }
    new NetRemovals(removed, restored)
  }

  /** The removals of a snapshot: its checkpoint's, then its `replace/` records after `through`. */
  def of(checkpoint: Option[Checkpoint], records: Seq[CommitRecord]): NetRemovals =
    fold(checkpoint.map(_.removed).getOrElse(Nil), records)
}

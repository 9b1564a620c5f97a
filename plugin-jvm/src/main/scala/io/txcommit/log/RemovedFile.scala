package io.txcommit.log

/**
 * One file a replacing transaction logically deletes (`removed`), or re-adds (`restored`, I31),
 * relative to the table directory.
 *
 * A file named with a transaction id is removed by its path: no two transactions share a
 * name, so the name is the file. A file written without txcommit (`part-0.parquet`, Hive's
 * `000000_0`) can be written again under the same name after VACUUM deleted it, so the
 * removal also records `modifiedAt`, the store's modification time (epoch ms) of the file it
 * saw, and applies only to a file of that size modified in that same second (some stores keep
 * whole seconds). An entry without it (written by an older txcommit) removes the path.
 */
final case class RemovedFile(path: String, size: Long, modifiedAt: Option[Long] = None) {

  /** Whether this removal hides the file now at `path` with `size` and `modifiedAtMs`. */
  def appliesTo(size: Long, modifiedAtMs: Long): Boolean =
    modifiedAt.forall(m => size == this.size && Math.floorDiv(m, 1000L) == Math.floorDiv(modifiedAtMs, 1000L))

  /**
   * Whether the file at its path, of `size` bytes modified at `modifiedAtMs`, is the file this
   * entry names: of its size and, without a txn id, modified in the same second (I21's identity).
   */
  def isFile(size: Long, modifiedAtMs: Long): Boolean = size == this.size && appliesTo(size, modifiedAtMs)

  /** The txn id its name carries (then the path alone is the file), None for a file written without txcommit. */
  def txn: Option[String] = DataFileName.txnOf(path.substring(path.lastIndexOf('/') + 1))

  /** Whether a restore of `restored` cancels this removal: it hides the file `restored` names. */
  def cancelledBy(restored: RemovedFile): Boolean =
    path == restored.path && restored.modifiedAt.forall(appliesTo(restored.size, _))
}

object RemovedFile {

  /** The entry naming `f` as it is now: by path, and with its identity when it has no txn id. */
  def of(f: TableFile): RemovedFile = RemovedFile(f.path, f.size, if (f.txn.isEmpty) Some(f.modifiedAt) else None)

  /** Up to ten paths, quoted, for a message. */
  def names(files: Seq[RemovedFile]): String =
    files.take(10).map(f => s"'${f.path}'").mkString(", ") + (if (files.size > 10) s", and ${files.size - 10} more"
                                                              else "")
}

/**
 * The removals of a log (its checkpoint's and its replacing commits'), by path: whether a file
 * is hidden, judged by path alone where that settles it and by the file's identity otherwise.
 */
final class Removals private (byPath: Map[String, Seq[RemovedFile]]) {
  def isEmpty: Boolean = byPath.isEmpty

  /** Whether some removal names `path` (of whichever file). */
  def names(path: String): Boolean = byPath.contains(path)

  /** Whether the file at `path` is hidden whatever it is now (a removal without identity). */
  def hidesPath(path: String): Boolean = byPath.get(path).exists(_.exists(_.modifiedAt.isEmpty))

  /** Whether the file at `path` with this size and modification time (ms) is hidden. */
  def hides(path: String, size: Long, modifiedAtMs: Long): Boolean =
    byPath.get(path).exists(_.exists(_.appliesTo(size, modifiedAtMs)))

  def hides(f: TableFile): Boolean = hides(f.path, f.size, f.modifiedAt)
}

object Removals {
  val Empty: Removals = new Removals(Map.empty)
  def apply(removed: IterableOnce[RemovedFile]): Removals =
    new Removals(removed.iterator.toSeq.groupBy(_.path))

  /** Sorted by path, one entry per distinct file (a path removed twice with different identities keeps both). */
  def distinct(removed: Seq[RemovedFile]): Vector[RemovedFile] =
    removed.distinct.toVector.sortBy(f => (f.path, f.modifiedAt.getOrElse(Long.MinValue), f.size))

  /** A removal's entry in a record or checkpoint: `path`, `size`, and `modifiedAt` when known. */
  def encode(f: RemovedFile, into: com.fasterxml.jackson.databind.node.ObjectNode): Unit = {
    into.put("path", f.path).put("size", f.size)
    f.modifiedAt.foreach(into.put("modifiedAt", _))
  }

  /** The optional `modifiedAt` of an entry, or why it is not valid. */
  def modifiedAtOf(entry: com.fasterxml.jackson.databind.JsonNode,
      field: String = "removed"): Either[String, Option[Long]] =
    Option(entry.get("modifiedAt")) match {
      case None => Right(None)
      case Some(n) if n.isIntegralNumber && n.canConvertToLong && n.asLong() >= 0 => Right(Some(n.asLong()))
      case Some(_) => Left(s"an entry of '$field' has a 'modifiedAt' that is not a time in milliseconds")
    }
}

package io.txcommit.log

/**
 * A checkpoint of a table's log (`_txcommit/checkpoints/<number>.json`): the committed state up
 * to a point, so a reader that has not seen the table reads the newest checkpoint and the records
 * after it instead of one record per transaction. Derived from the records (which stay: they are
 * the log), created with the store's exclusive primitive, immutable. docs/protocol.md, I20.
 *
 * @param through   the highest `replace/` sequence folded in (0: none)
 * @param committed every transaction it covers, with exactly its files still live after the
 *                  replacing commits up to `through` (possibly none: a fence, or all replaced)
 * @param removed   files hidden by a replacing commit up to `through` that no covered
 *                  transaction accounts for: files without a transaction id (with their
 *                  identity, see [[RemovedFile]]), and files of transactions it does not cover
 * @param createdAt when it was published (its writer's clock): every transaction it covers
 *                  committed before, so a read that began after may apply all of it
 * @param schema    the table's schema as of the transactions it covers (I27): the mark of the
 *                  covered record carrying a schema that committed last, Some(None) when none
 *                  carries one; None for a checkpoint written before checkpoints carried it
 *                  (unknown: the schema guard reads the records it covers instead)
 * @param reads     how the table is read (I32): [[ReadMode.Log]] (log-only: files come from the
 *                  log alone, a file written without txcommit shows only where a record names
 *                  it) or [[ReadMode.Listing]]; None (a checkpoint that does not say, written
 *                  before it could) reads as `listing`. Unlike the rest it is not derived from
 *                  the records: each checkpoint carries its predecessor's value unless a
 *                  change (`TXCOMMIT ALTER`) sets it, so checkpoint numbers order the changes.
 */
final case class Checkpoint(
    number: Long,
    createdAt: Long,
    appId: Option[String],
    writer: String,
    through: Long,
    committed: Map[String, Vector[AddedFile]],
    removed: Vector[RemovedFile],
    schema: Option[Option[SchemaMark]] = None,
    reads: Option[String] = None) {
  def files: Int = committed.valuesIterator.map(_.size).sum
  lazy val removals: Removals = Removals(removed)
  lazy val livePaths: Map[String, Set[String]] = committed.map { case (t, fs) => t -> fs.iterator.map(_.path).toSet }
  def covers(txn: String): Boolean = committed.contains(txn)

  /** Whether the table is log-only as of this checkpoint (I32). */
  def logOnly: Boolean = reads.contains(ReadMode.Log)

  /** The files without a txn id it names (adopted or restored into a log-only table), by path. */
  lazy val namedPlain: Set[String] =
    committed.valuesIterator.flatMap(_.iterator.map(_.path)).filter(p =>
      DataFileName.txnOf(p.substring(
          p.lastIndexOf('/') + 1)).isEmpty).toSet

  /** As a record for [[io.txcommit.read.ReadCut.precedes]]: it "committed" when it was published. */
  def asOf: CommitRecord = CommitRecord("", "", "", createdAt, createdAt, Nil, appId, writer)
}

/**
 * How a table is read (docs/protocol.md, I32), as its checkpoints carry it: `log` (log-only,
 * what a table txcommit creates is) or `listing` (files written without txcommit visible: a
 * table txcommit adopted, or one written before the mode existed).
 */
object ReadMode {
  val Log = "log"
  val Listing = "listing"
  val All: Set[String] = Set(Log, Listing)

  /**
   * The reader rule for a path without a txn id at `rel` that no removal hides, in a snapshot
   * starting from `checkpoint` with removals and restores `net` (I11, I32): visible unless the
   * table is log-only, where only a file the log names (the checkpoint's lists, a restore) is.
   * Hadoop's input formats and Spark's partition repair ask a path filter about directories
   * too: `isDirectory` (asked only then) lets those through, as before.
   */
  def plainVisible(checkpoint: Option[Checkpoint], net: NetRemovals, rel: String, isDirectory: => Boolean): Boolean =
    !checkpoint.exists(_.logOnly) || checkpoint.exists(_.namedPlain(rel)) || net.isRestored(rel) || isDirectory
}

object Checkpoint {
  val Format = "txcommit-checkpoint"
  val FormatVersion = 1L
}

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
 */
final case class Checkpoint(
    number: Long,
    createdAt: Long,
    appId: Option[String],
    writer: String,
    through: Long,
    committed: Map[String, Vector[AddedFile]],
    removed: Vector[RemovedFile],
    schema: Option[Option[SchemaMark]] = None) {
  def files: Int = committed.valuesIterator.map(_.size).sum
  lazy val removals: Removals = Removals(removed)
  lazy val livePaths: Map[String, Set[String]] = committed.map { case (t, fs) => t -> fs.iterator.map(_.path).toSet }
  def covers(txn: String): Boolean = committed.contains(txn)

  /** As a record for [[io.txcommit.read.ReadCut.precedes]]: it "committed" when it was published. */
  def asOf: CommitRecord = CommitRecord("", "", "", createdAt, createdAt, Nil, appId, writer)
}

object Checkpoint {
  val Format = "txcommit-checkpoint"
  val FormatVersion = 1L
}

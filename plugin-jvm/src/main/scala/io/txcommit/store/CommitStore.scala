package io.txcommit.store

import org.apache.hadoop.fs.{FileStatus, Path}

/**
 * One table's store, opened by a [[StoreAdapter]] for one job stage. What txcommit needs from
 * it, and what every implementation must guarantee. This numbered list is the store contract,
 * written once: docs/adapters.md carries a copy that a unit test keeps equal to it
 * (`test_contract_docs.py`), and `StoreContractSuite` (JVM) and the conformance kit's Level 1
 * (`txcommit.testing.store_contract`) test it.
 *
 *  1. `createExclusive(target, bytes)` is atomic and exclusive: a reader sees either no file
 *     or all of `bytes`, never a part; of any number of concurrent callers for one target,
 *     exactly one succeeds and every other gets [[io.txcommit.CommitConflictException]]
 *     (Python: `AlreadyExistsError`); an existing target is never overwritten. Only the log's
 *     own files are created this way (commit and `replace/` records, `pending/` markers, table
 *     properties, checkpoints, row counts, streaming batch claims): a commit record is
 *     published only so.
 *  2. `writeReplacing(target, bytes)` makes `bytes` visible in full (readers see the old or the
 *     new content, never a part) and may overwrite: it is used only for derived files
 *     (`_SUCCESS`, `aborted/` markers, symlink manifests) that can be rewritten from the log.
 *  3. `list(dir)` returns every file whose create or publish completed before the call
 *     (list-after-write consistency), and none deleted before it; a missing directory lists
 *     as empty. `read` of a missing file is None; `delete` of a missing file does nothing
 *     (it returns false where the store can tell the file was absent).
 *  4. Data files are written by Spark's own writers to `dataWritePath(target)`; they are never
 *     moved or copied afterwards. Where that path is not the final place (`s3-multipart`:
 *     multipart uploads that complete later), `stagedFile` describes what a task left behind,
 *     `publishData` makes it final at job commit BEFORE the record is created, `discardData`
 *     forgets it on abort, and `cleanupStaging` removes the staging area after the commit.
 *  5. `checkReady` proves, before any data of a job is written, that the store really has the
 *     primitive its adapter declares, or fails with an error naming the endpoint and the
 *     missing capability.
 *  6. Every request is counted in `requests` (reported in `_SUCCESS` as `jobCommitRequests`);
 *     nothing a store logs, stores or throws contains credentials, and paths are shown
 *     without user info. A failed request throws an IOException naming the path; one cut
 *     short because its thread was interrupted (a query stopped, a job cancelled) an
 *     `InterruptedIOException`, which Spark takes for the stop ([[StoreFailure]] builds both).
 *     An interrupt never publishes part of a file: a write interrupted before or while it
 *     sends its bytes publishes all of them or nothing (`StoreContractSuite` interrupts each
 *     kind of write).
 *  7. `openUploads` lists the staged data under a table that is neither published nor
 *     discarded (open multipart uploads: target path relative to the table, upload id, start
 *     time), and `abortUpload` forgets one: VACUUM uses them to stop paying for uploads of
 *     dead transactions. JVM only; stores that never stage have none (the default). Both S3
 *     adapters implement it: an `s3` table may hold uploads too (S3A's own large-file uploads
 *     of a dead task).
 *  8. `openAtomic(target, overwrite)` (streaming checkpoint files, through
 *     [[io.txcommit.streaming.TxCommitCheckpointFileManager]]; docs/streaming.md) returns a
 *     stream whose bytes become visible at `target` all at once when it is closed, and never
 *     in part. Without `overwrite` the publish is exclusive as in point 1: of concurrent
 *     writers of one target exactly one `close` succeeds, every other fails with
 *     [[AtomicFileExistsException]] (Hadoop's `FileAlreadyExistsException`) and an existing
 *     file is never replaced. With `overwrite` the new content replaces the old atomically
 *     (readers see one or the other). `cancel` leaves nothing visible and nothing billed
 *     (temporary files deleted, uploads aborted). The bytes stream to the store as they are
 *     written: a store never holds a whole file in memory. Each store publishes with its own
 *     primitive: `rename` stores write a temporary file and link/rename it into place,
 *     `conditional-put` sends the file on close with `If-None-Match: *` (a multipart upload
 *     completed with `If-None-Match: *` once it outgrows one part), `multipart-complete`
 *     uploads parts as they fill and completes the upload on close.
 */
trait CommitStore {
  def declaration: AdapterDeclaration
  final def primitive: Primitive = declaration.primitive
  val requests: RequestCounter = new RequestCounter

  def createExclusive(target: Path, bytes: Array[Byte]): Unit
  def writeReplacing(target: Path, bytes: Array[Byte]): Unit
  def read(path: Path): Option[Array[Byte]]
  def list(dir: Path): Seq[FileStatus]
  def exists(path: Path): Boolean
  def delete(path: Path): Boolean

  /**
   * Point 8: a stream that publishes `target` atomically when closed. Stores that cannot do
   * it say so; they never fall back to a non-atomic write.
   */
  def openAtomic(target: Path, overwrite: Boolean): AtomicOutput =
    throw new io.txcommit.UnsupportedStoreException(s"adapter '${declaration.name}' cannot write " +
      s"atomic files such as streaming checkpoints (${io.txcommit.Paths.display(target)}); use " +
      "Spark's own checkpoint file manager for this store, or an adapter that implements openAtomic.")

  /**
   * Before the first exclusive `openAtomic` under `root`: proves what point 8 relies on (on S3,
   * that the endpoint honours If-None-Match). Cheap after the first call in a JVM.
   */
  def checkAtomicReady(root: Path): Unit = ()

  /** Called on the driver when a job starts; see point 5. */
  def checkReady(table: Path): Unit = ()

  /** Where a task attempt writes the data file whose final place is `target`. */
  def dataWritePath(table: Path, target: Path, txn: String, attempt: String): Path = target

  /** Task side, after its writers closed: the file the attempt leaves for the job commit (None: the store has no such file). */
  def stagedFile(table: Path, rel: String, written: Path): Option[StagedFile]

  /** Job commit, before the record: make staged data final. Must be idempotent. */
  def publishData(table: Path, files: Seq[StagedFile]): Unit = ()

  /** Abort: forget these data files (delete them, or abort their uploads). Returns how many. */
  def discardData(table: Path, files: Seq[StagedFile]): Int =
    files.count(f => delete(new Path(table, f.path)))

  /**
   * After the commit (derived work) or on abort, on stores that stage: forget what staging left
   * for transaction `txn` except the `committed` files (relative paths): data of attempts that
   * lost or that the driver never heard of (an executor killed mid-upload), and markers.
   * Returns how many staged data files were discarded.
   */
  def cleanupStaging(table: Path, txn: String, committed: Set[String]): Int = 0

  /** VACUUM: staged uploads under `table` neither completed nor aborted; see point 7. */
  def openUploads(table: Path): Seq[OpenUpload] = Seq.empty

  /** VACUUM: aborts one open upload; true if this call aborted it. */
  def abortUpload(table: Path, upload: OpenUpload): Boolean = false
}

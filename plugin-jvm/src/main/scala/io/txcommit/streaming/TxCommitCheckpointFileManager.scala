package io.txcommit.streaming

import java.io.FileNotFoundException
import java.util.concurrent.atomic.AtomicBoolean

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{
  FileStatus,
  FileSystem,
  FSDataInputStream,
  LocalFileSystem,
  Path,
  PathFilter,
  RawLocalFileSystem
}
import org.apache.hadoop.fs.permission.FsPermission

import io.txcommit.store.{Adapters, AtomicOutput, CommitStore}
import io.txcommit.streaming.SparkStreamingApi.{CancellableFSDataOutputStream, CheckpointFileManager}

/**
 * Structured Streaming's checkpoint files, published with the store adapter's own primitive
 * (`spark.sql.streaming.checkpointFileManagerClass=io.txcommit.streaming.TxCommitCheckpointFileManager`).
 *
 * Spark writes every offset-log, commit-log, `_spark_metadata`, state-store delta/snapshot and
 * RocksDB checkpoint file through `createAtomic(path, overwriteIfPossible)`. Its own managers
 * write a temp file and rename it; on S3 a rename is a copy plus a delete, and "rename without
 * overwrite" is an existence check followed by the copy: two writers can both win. Here the
 * adapter chosen for the checkpoint's scheme (`Adapters`, `spark.txcommit.adapter.<scheme>`)
 * publishes the file ([[CommitStore.openAtomic]]): a link or rename that refuses an existing
 * target on local and HDFS stores, a PUT (or multipart upload) completed with
 * `If-None-Match: *` on S3. Without `overwriteIfPossible` exactly one of racing writers wins;
 * the others get Hadoop's `FileAlreadyExistsException`, which Spark's logs expect.
 *
 * Reads, listings and deletes are plain Hadoop FileSystem calls, as in Spark's
 * FileSystem-based manager (the store's listing is consistent: its adapter declares it).
 */
class TxCommitCheckpointFileManager(path: Path, hadoopConf: Configuration) extends CheckpointFileManager {
  private val fs: FileSystem = path.getFileSystem(hadoopConf)
  private val store: CommitStore = Adapters.open(path, hadoopConf)
  private val checked = new AtomicBoolean(false)

  /** The adapter publishing this checkpoint's files (for logs and tests). */
  def adapterName: String = store.declaration.name

  override def createAtomic(p: Path, overwriteIfPossible: Boolean): CancellableFSDataOutputStream = {
    if (!overwriteIfPossible && checked.compareAndSet(false, true)) store.checkAtomicReady(path)
    new TxCommitCheckpointFileManager.AtomicStream(store.openAtomic(fs.makeQualified(p), overwriteIfPossible))
  }

  override def open(p: Path): FSDataInputStream = fs.open(p)

  override def list(p: Path, filter: PathFilter): Array[FileStatus] = fs.listStatus(p, filter)

  override def mkdirs(p: Path): Unit = fs.mkdirs(p, FsPermission.getDirDefault)

  override def exists(p: Path): Boolean = fs.exists(p)

  override def delete(p: Path): Unit =
    try fs.delete(p, true)
    catch { case _: FileNotFoundException => () } // already gone: that is what was asked

  override def isLocal: Boolean = fs match {
    case _: LocalFileSystem | _: RawLocalFileSystem => true
    case _ => false
  }

  override def createCheckpointDirectory(): Path = {
    val qualified = fs.makeQualified(path)
    fs.mkdirs(qualified, FsPermission.getDirDefault)
    qualified
  }
}

object TxCommitCheckpointFileManager {
  val ConfKey = "spark.sql.streaming.checkpointFileManagerClass"

  /** Spark's cancellable stream over an [[AtomicOutput]]: close publishes, cancel discards. */
  final class AtomicStream(out: AtomicOutput) extends CancellableFSDataOutputStream(out) {
    override def cancel(): Unit = out.cancel()
  }
}

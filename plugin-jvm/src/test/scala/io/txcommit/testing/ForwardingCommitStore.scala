package io.txcommit.testing

import org.apache.hadoop.fs.{FileStatus, Path}

import io.txcommit.store.{AdapterDeclaration, AtomicOutput, CommitStore, OpenUpload, StagedFile}

/** A store that forwards every call to `inner`: tests override the calls they make misbehave. */
class ForwardingCommitStore(val inner: CommitStore) extends CommitStore {
  override def declaration: AdapterDeclaration = inner.declaration
  override def createExclusive(target: Path, bytes: Array[Byte]): Unit = inner.createExclusive(target, bytes)
  override def writeReplacing(target: Path, bytes: Array[Byte]): Unit = inner.writeReplacing(target, bytes)
  override def read(path: Path): Option[Array[Byte]] = inner.read(path)
  override def list(dir: Path): Seq[FileStatus] = inner.list(dir)
  override def exists(path: Path): Boolean = inner.exists(path)
  override def delete(path: Path): Boolean = inner.delete(path)
  override def openAtomic(target: Path, overwrite: Boolean): AtomicOutput = inner.openAtomic(target, overwrite)
  override def checkAtomicReady(root: Path): Unit = inner.checkAtomicReady(root)
  override def checkReady(table: Path): Unit = inner.checkReady(table)
  override def dataWritePath(table: Path, target: Path, txn: String, attempt: String): Path =
    inner.dataWritePath(table, target, txn, attempt)
  override def stagedFile(table: Path, rel: String, written: Path): Option[StagedFile] =
    inner.stagedFile(table, rel, written)
  override def publishData(table: Path, files: Seq[StagedFile]): Unit = inner.publishData(table, files)
  override def discardData(table: Path, files: Seq[StagedFile]): Int = inner.discardData(table, files)
  override def cleanupStaging(table: Path, txn: String, committed: Set[String]): Int =
    inner.cleanupStaging(table, txn, committed)
  override def openUploads(table: Path): Seq[OpenUpload] = inner.openUploads(table)
  override def abortUpload(table: Path, upload: OpenUpload): Boolean = inner.abortUpload(table, upload)
}

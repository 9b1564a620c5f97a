package io.txcommit.store

import java.io.{File, FileNotFoundException}
import java.nio.file.{FileAlreadyExistsException, Files, StandardCopyOption, StandardOpenOption}
import java.util.UUID

import org.apache.commons.io.IOUtils
import org.apache.hadoop.fs.{FileStatus, FileSystem, Path}

import io.txcommit.{CommitConflictException, Paths}

/**
 * The `rename` primitive over a Hadoop FileSystem: publish = write a temporary file next to
 * the target, then move it into place without overwrite.
 *
 * How the move is made exclusive differs per file system, because Hadoop's `rename` does not
 * promise it everywhere: on the local file system `rename(2)` silently replaces an existing
 * target, so there a hard link (`link(2)` fails if the target exists) publishes the file; HDFS's
 * `rename` refuses an existing target atomically in the NameNode.
 */
final class RenameStore(val declaration: AdapterDeclaration, fs: FileSystem, local: Boolean)
  extends CommitStore {

  override def createExclusive(target: Path, bytes: Array[Byte]): Unit = {
    val tmp = tempFor(target)
    writeNew(tmp, bytes)
    requests.add("RENAME")
    try {
      val published =
        if (local) {
          try { Files.createLink(localFile(target).toPath, localFile(tmp).toPath); true }
          catch { case _: FileAlreadyExistsException => false }
        } else {
          fs.rename(tmp, target)
        }
      if (!published) {
        throw new CommitConflictException(
          s"${Paths.display(target)} already exists, so it was not overwritten; another writer " +
            "published it first")
      }
    } finally {
      if (local || fs.exists(tmp)) fs.delete(tmp, false)
    }
  }

  override def writeReplacing(target: Path, bytes: Array[Byte]): Unit = {
    val tmp = tempFor(target)
    writeNew(tmp, bytes)
    requests.add("RENAME")
    if (local) {
      Files.move(localFile(tmp).toPath, localFile(target).toPath,
        StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING)
    } else {
      // HDFS rename does not replace: drop the old derived file first (readers tolerate a gap).
      fs.delete(target, false)
      if (!fs.rename(tmp, target)) {
        fs.delete(tmp, false)
        throw new java.io.IOException(s"could not write ${Paths.display(target)}")
      }
    }
  }

  override def read(path: Path): Option[Array[Byte]] =
    try {
      requests.add("GET")
      val in = fs.open(path)
      try Some(IOUtils.toByteArray(in)) finally in.close()
    } catch { case _: FileNotFoundException => None }

  override def list(dir: Path): Seq[FileStatus] = {
    requests.add("LIST")
    try fs.listStatus(dir).toSeq.filter(_.isFile)
    catch { case _: FileNotFoundException => Seq.empty }
  }

  override def exists(path: Path): Boolean = { requests.add("HEAD"); fs.exists(path) }

  override def delete(path: Path): Boolean = { requests.add("DELETE"); fs.delete(path, false) }

  override def stagedFile(table: Path, rel: String, written: Path): Option[StagedFile] =
    try { requests.add("HEAD"); Some(StagedFile(rel, fs.getFileStatus(written).getLen)) }
    catch { case _: FileNotFoundException => None } // a writer that never opened its file

  private def tempFor(target: Path): Path =
    new Path(target.getParent, s".${target.getName}.${UUID.randomUUID()}.tmp")

  private def writeNew(path: Path, bytes: Array[Byte]): Unit = {
    requests.add("PUT")
    if (local) {
      val f = localFile(path)
      f.getParentFile.mkdirs()
      val ch = java.nio.channels.FileChannel.open(f.toPath,
        StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)
      try {
        ch.write(java.nio.ByteBuffer.wrap(bytes))
        ch.force(true) // the record must be durable before it is linked into place
      } finally ch.close()
    } else {
      val out = fs.create(path, false)
      try out.write(bytes) finally out.close()
    }
  }

  private def localFile(path: Path): File = new File(path.toUri.getPath)
}

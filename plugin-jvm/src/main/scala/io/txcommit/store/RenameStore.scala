package io.txcommit.store

import java.io.{File, FileNotFoundException, IOException}
import java.nio.file.{FileAlreadyExistsException, Files, StandardCopyOption, StandardOpenOption}
import java.util.UUID

import org.apache.commons.io.IOUtils
import org.apache.hadoop.fs.{FileContext, FileStatus, FileSystem, Options, Path}
import org.apache.hadoop.ipc.RemoteException

import io.txcommit.{CommitConflictException, Paths}

/**
 * The `rename` primitive over a Hadoop FileSystem: publish = write a temporary file next to
 * the target, then move it into place without overwrite.
 *
 * How the move is made exclusive differs per file system, because Hadoop's `rename` does not
 * promise it everywhere: on the local file system `rename(2)` silently replaces an existing
 * target, so there a hard link (`link(2)` fails if the target exists) publishes the file. On
 * HDFS the move is `FileContext.rename` with `Rename.NONE`, which the NameNode refuses
 * atomically when the target exists, and a replacement is one `Rename.OVERWRITE`. Never
 * `FileSystem.rename` there: it answers `false` alike for a missing source, a missing parent and
 * an existing target, and MOVES the file into the target when the target is a directory.
 */
final class RenameStore(val declaration: AdapterDeclaration, fs: FileSystem, local: Boolean)
  extends CommitStore {

  override def createExclusive(target: Path, bytes: Array[Byte]): Unit = {
    val tmp = tempFor(target)
    writeNew(tmp, bytes)
    requests.add("RENAME")
    try {
      if (!moveExclusive(tmp, target)) {
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
    try moveReplacing(tmp, target)
    finally if (!local && fs.exists(tmp)) fs.delete(tmp, false)
  }

  /** Moves `tmp` to `target` unless `target` exists (a file or a directory): false then. */
  private def moveExclusive(tmp: Path, target: Path): Boolean =
    if (local) {
      try { Files.createLink(localFile(target).toPath, localFile(tmp).toPath); syncDir(target); true }
      catch { case _: FileAlreadyExistsException => false }
    } else {
      try { files.rename(tmp, target, Options.Rename.NONE); true }
      catch {
        case e: IOException if RenameStore.targetExists(e) => false
        // The rename's answer did not come (a connection broken after the NameNode moved the
        // file, which also fails every call in flight on it). The temporary name is this
        // attempt's alone: gone, with the target in place, means the move landed. A directory
        // of that name fails the rename with a plain IOException ("must both be directories"):
        // the name is taken all the same.
        case e: IOException if fs.exists(target) => !fs.exists(tmp)
      }
    }

  /** Moves `tmp` over `target` in one step: a reader sees the old file or the new one, never
    * none (HDFS: one NameNode operation). */
  private def moveReplacing(tmp: Path, target: Path): Unit =
    if (local) {
      Files.move(localFile(tmp).toPath, localFile(target).toPath,
        StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING)
      syncDir(target)
    } else {
      files.rename(tmp, target, Options.Rename.OVERWRITE)
    }

  /** HDFS's rename with options lives on FileContext (the same NameNode call FileSystem hides). */
  private lazy val files: FileContext = FileContext.getFileContext(fs.getUri, fs.getConf)

  override def read(path: Path): Option[Array[Byte]] =
    try {
      requests.add("GET")
      val in = fs.open(path)
      try Some(IOUtils.toByteArray(in))
      finally in.close()
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
    catch { case _: FileNotFoundException => None } // never opened, or deleted under the task

  override def openAtomic(target: Path, overwrite: Boolean): AtomicOutput = {
    val tmp = tempFor(target)
    requests.add("PUT")
    if (local) new LocalAtomicOutput(target, tmp, overwrite)
    else new HadoopAtomicOutput(target, tmp, overwrite)
  }

  /**
   * A temporary file written through `out`, then published once at [[close]] or removed at
   * [[cancel]] (whichever comes first; later calls do nothing).
   */
  private abstract class TempFileOutput(target: Path) extends AtomicOutput(target) {
    protected def out: java.io.OutputStream

    /** Makes the temporary file visible at `target`; the temporary file is gone after it. */
    protected def publish(): Unit

    /** Abandons the temporary file. */
    protected def discard(): Unit
    private var done = false

    override def write(b: Int): Unit = out.write(b)
    override def write(b: Array[Byte], off: Int, len: Int): Unit = out.write(b, off, len)

    override def close(): Unit = synchronized {
      if (!done) {
        done = true
        publish()
      }
    }

    override def cancel(): Unit = synchronized {
      if (!done) {
        done = true
        discard()
      }
    }
  }

  /**
   * Local: the temp file is written with java.nio (no Hadoop `.crc` side files), forced to disk,
   * then published with `link(2)` (refuses an existing target) or, to overwrite, an atomic
   * `rename(2)`.
   */
  private final class LocalAtomicOutput(target: Path, tmp: Path, overwrite: Boolean)
    extends TempFileOutput(target) {
    private val tmpFile = localFile(tmp).toPath
    private val channel = {
      Files.createDirectories(tmpFile.getParent)
      java.nio.channels.FileChannel.open(tmpFile, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)
    }
    protected val out: java.io.OutputStream = java.nio.channels.Channels.newOutputStream(channel)

    protected def publish(): Unit =
      try {
        channel.force(true) // durable before it is published
        channel.close()
        requests.add("RENAME")
        val dest = localFile(target).toPath
        if (overwrite) {
          Files.move(tmpFile, dest, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING)
        } else {
          try Files.createLink(dest, tmpFile)
          catch {
            case _: FileAlreadyExistsException => throw new AtomicFileExistsException(target, "link(2) refused it")
          }
        }
        syncDir(target)
      } finally Files.deleteIfExists(tmpFile)

    protected def discard(): Unit =
      try channel.close()
      finally Files.deleteIfExists(tmpFile)
  }

  /** HDFS: the NameNode's rename refuses an existing target; FileContext's OVERWRITE replaces. */
  private final class HadoopAtomicOutput(target: Path, tmp: Path, overwrite: Boolean)
    extends TempFileOutput(target) {
    protected val out: java.io.OutputStream = fs.create(tmp, false)

    protected def publish(): Unit =
      try {
        out.close()
        requests.add("RENAME")
        if (overwrite) moveReplacing(tmp, target)
        else if (!moveExclusive(tmp, target)) {
          throw new AtomicFileExistsException(target, "the NameNode refused the rename")
        }
      } finally if (fs.exists(tmp)) fs.delete(tmp, false)

    protected def discard(): Unit =
      try out.close()
      finally fs.delete(tmp, false)
  }

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
      try out.write(bytes)
      finally out.close()
    }
  }

  private def localFile(path: Path): File = new File(path.toUri.getPath)

  /**
   * Makes a link or rename into `target`'s directory durable: the file's own bytes were forced
   * before, but the new directory entry survives a power loss only once the directory is synced.
   */
  private def syncDir(target: Path): Unit = {
    requests.add("FSYNC_DIR")
    val dir = java.nio.channels.FileChannel.open(localFile(target).getParentFile.toPath, StandardOpenOption.READ)
    try dir.force(true)
    finally dir.close()
  }
}

object RenameStore {

  /** Hadoop's classes for "the target is already there" (HDFS sends them as RemoteException):
    * an existing file, and a file another client is still writing. */
  private val Exists = Set(
    classOf[org.apache.hadoop.fs.FileAlreadyExistsException].getName,
    "org.apache.hadoop.hdfs.protocol.AlreadyBeingCreatedException")

  /** Whether `e` says the target of a create or rename exists: a conflict, not a failure. */
  def targetExists(e: IOException): Boolean = e match {
    case _: org.apache.hadoop.fs.FileAlreadyExistsException => true
    case r: RemoteException => Exists.contains(r.getClassName)
    case _ => Exists.contains(e.getClass.getName)
  }
}

package io.txcommit.store

import java.net.URI
import java.util.EnumSet

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs._
import org.apache.hadoop.fs.permission.FsPermission
import org.apache.hadoop.util.Progressable

/**
 * An adapter's own create path for txcommit's data files: a Hadoop file system over the
 * table's own (`txcommit+s3a://bucket/key` over `s3a://bucket/key`: the scheme is a name of the
 * create path, `+`, and the inner scheme), which a store hands Spark's writers as
 * the place of each data file (`CommitStore.dataWritePath`). Every writer Spark has (Parquet,
 * ORC, Avro, text, Hive SerDes) opens that path with `FileSystem.create`, where no per-file
 * option can be passed; here the store creates the file its own way ([[createData]]: on S3
 * without S3A's existence probes, which guard nothing for a name no other write ever uses),
 * counts its bytes, and once the store acknowledged the whole file (the stream closed without
 * error) records them in [[WrittenFiles]], with what publishes the file where the store stages
 * it (the stream it created is [[DataFileSystem.Staged]]). Spark's statistics tracker, which asks each file's
 * size after closing it, is answered from there, and so is the task's manifest: no request.
 *
 * Anything else is passed to the inner file system, paths translated both ways. Spark finds
 * this class by `fs.<scheme>.impl`, which the store sets in the task's conf (the conf Spark's
 * writer opens the path with) before it names the path; the tracker, which has a conf of its
 * own, finds the instance the writer created in Hadoop's file system cache.
 */
abstract class DataFileSystem extends FileSystem {
  private var outer: URI = _
  private var innerScheme: String = _
  private var innerFs: FileSystem = _

  /** Creates the data file `path` on `fs`, the inner file system. */
  protected def createData(fs: FileSystem, path: Path, bufferSize: Int, progress: Option[Progressable])
      : FSDataOutputStream

  override def initialize(name: URI, conf: Configuration): Unit = {
    super.initialize(name, conf)
    setConf(conf)
    val scheme = name.getScheme
    require(scheme != null && scheme.contains('+'), s"txcommit: $name is not a txcommit data file path")
    innerScheme = scheme.substring(scheme.lastIndexOf('+') + 1)
    outer = new URI(scheme, name.getAuthority, "/", null, null)
    innerFs = FileSystem.get(new URI(innerScheme, name.getAuthority, "/", null, null), conf)
  }

  override def getUri: URI = outer
  override def getScheme: String = Option(outer).map(_.getScheme).getOrElse("txcommit+")

  private def toInner(p: Path): Path = {
    val u = makeQualified(p).toUri
    new Path(innerScheme, u.getAuthority, u.getPath)
  }

  private def toOuter(p: Path): Path = new Path(outer.getScheme, p.toUri.getAuthority, p.toUri.getPath)

  private def outward(st: FileStatus): FileStatus = { st.setPath(toOuter(st.getPath)); st }

  override def create(f: Path, permission: FsPermission, overwrite: Boolean, bufferSize: Int,
      replication: Short, blockSize: Long, progress: Progressable): FSDataOutputStream = {
    val path = makeQualified(f)
    val out = createData(innerFs, toInner(path), bufferSize, Option(progress))
    new DataFileSystem.Counted(out,
      bytes => {
        val pending = out.getWrappedStream match {
          case s: DataFileSystem.Staged => Some(s.pending)
          case _ => None
        }
        WrittenFiles.record(path, WrittenFiles.Written(bytes, System.currentTimeMillis(), pending))
      })
  }

  override def createNonRecursive(f: Path, permission: FsPermission, flags: EnumSet[CreateFlag],
      bufferSize: Int, replication: Short, blockSize: Long, progress: Progressable): FSDataOutputStream =
    create(f, permission, flags.contains(CreateFlag.OVERWRITE), bufferSize, replication, blockSize, progress)

  /** A file this JVM wrote and the store acknowledged: its length as written, no request. */
  override def getFileStatus(f: Path): FileStatus = {
    val path = makeQualified(f)
    WrittenFiles.peek(path) match {
      case Some(w) => new FileStatus(w.size, false, 1, getDefaultBlockSize(path), w.closedAt, path)
      case None => outward(innerFs.getFileStatus(toInner(path)))
    }
  }

  /** Spark's tracker asks for S3A's magic-file length header of an empty file; ours are whole. */
  override def getXAttr(f: Path, name: String): Array[Byte] =
    if (WrittenFiles.peek(makeQualified(f)).isDefined) null else innerFs.getXAttr(toInner(f), name)

  override def open(f: Path, bufferSize: Int): FSDataInputStream = innerFs.open(toInner(f), bufferSize)
  override def append(f: Path, bufferSize: Int, progress: Progressable): FSDataOutputStream =
    innerFs.append(toInner(f), bufferSize, progress)
  override def rename(src: Path, dst: Path): Boolean = innerFs.rename(toInner(src), toInner(dst))
  override def delete(f: Path, recursive: Boolean): Boolean = innerFs.delete(toInner(f), recursive)
  override def listStatus(f: Path): Array[FileStatus] = innerFs.listStatus(toInner(f)).map(outward)
  override def mkdirs(f: Path, permission: FsPermission): Boolean = innerFs.mkdirs(toInner(f), permission)
  override def getWorkingDirectory: Path = new Path(outer)
  override def setWorkingDirectory(dir: Path): Unit = ()
  override def getDefaultBlockSize(f: Path): Long = innerFs.getDefaultBlockSize(toInner(f))
  override def getDefaultReplication(f: Path): Short = innerFs.getDefaultReplication(toInner(f))

  /** The inner file system is Hadoop's shared, cached instance: never closed from here. */
  override def close(): Unit = super.close()
}

object DataFileSystem {

  /** A stream whose file the store stages: once it closed, what publishes the file. */
  trait Staged { def pending: String }

  /** Where a data file whose final place is `target` is written through `impl`, a create path
    * named `name`; registers `impl` for the scheme in `conf`, the task's conf that Spark's
    * writer opens the path with. */
  def pathFor(target: Path, conf: Configuration, name: String, impl: Class[_ <: DataFileSystem]): Path = {
    val u = target.toUri
    val scheme = s"$name+${u.getScheme}"
    val key = s"fs.$scheme.impl"
    if (conf.get(key) == null) conf.set(key, impl.getName)
    new Path(scheme, u.getAuthority, u.getPath)
  }

  /** The path `written` (a data file path of [[pathFor]]) names on the table's own file system. */
  def innerPath(written: Path): Path = {
    val u = written.toUri
    Option(u.getScheme).filter(_.contains('+')) match {
      case Some(s) => new Path(s.substring(s.lastIndexOf('+') + 1), u.getAuthority, u.getPath)
      case None => written
    }
  }

  /**
   * Counts the bytes written; `onClosed` gets the count once the inner stream closed without
   * error (the store acknowledged the whole file). A failed or aborted stream calls nothing,
   * and later calls to close do nothing.
   */
  private final class Counted(out: FSDataOutputStream, onClosed: Long => Unit)
    extends FSDataOutputStream(out, null) {
    private var finished = false

    override def close(): Unit = synchronized {
      if (!finished) {
        finished = true
        super.close()
        onClosed(getPos)
      }
    }

    override def abort(): Abortable.AbortableResult = synchronized {
      finished = true
      super.abort()
    }
  }
}

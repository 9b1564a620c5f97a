package io.txcommit.store

import java.io.{FilterOutputStream, IOException}
import java.nio.file.Files

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{Abortable, FSDataOutputStream, FileSystem, Path}
import org.apache.hadoop.util.Progressable
import org.scalatest.funsuite.AnyFunSuite

/** The data files' create path over the local file system: what it records, and when not. */
class DataFileSystemSuite extends AnyFunSuite {
  private val dir = Files.createTempDirectory("txcommit-datafs")
  private val conf = new Configuration()

  private def target(name: String) = new Path(dir.toUri.toString.stripSuffix("/") + "/k=1/" + name)
  private def written(name: String) =
    DataFileSystem.pathFor(target(name), conf, "txcommit", classOf[DataFileSystemSuite.Local])

  private def write(at: Path, bytes: Int): FSDataOutputStream = {
    val out = at.getFileSystem(conf).create(at, false)
    out.write(Array.fill[Byte](bytes)(7))
    out
  }

  test("a closed file is recorded with the bytes written; its size is answered without the store") {
    val at = written("part-00000-tid-a-1.parquet")
    assert(at.toUri.getScheme == "txcommit+file")
    write(at, 1234).close()
    assert(Files.size(dir.resolve("k=1/part-00000-tid-a-1.parquet")) == 1234)
    assert(WrittenFiles.peek(at).map(_.size).contains(1234L))
    Files.delete(dir.resolve("k=1/part-00000-tid-a-1.parquet"))
    val st = at.getFileSystem(conf).getFileStatus(at)
    assert(st.getLen == 1234 && st.getPath == at, "answered from what the writer counted")
    assert(WrittenFiles.take(at).isDefined && WrittenFiles.peek(at).isEmpty)
  }

  test("a file whose close failed or that was aborted is never recorded, and a later close records nothing") {
    val failing = written("part-00001-tid-a-2.parquet")
    val out = write(failing, 10)
    DataFileSystemSuite.failClose = true
    try intercept[IOException](out.close())
    finally DataFileSystemSuite.failClose = false
    out.close()
    assert(WrittenFiles.peek(failing).isEmpty)

    val aborted = written("part-00002-tid-a-3.parquet")
    val out2 = write(aborted, 10)
    out2.abort()
    out2.close()
    assert(WrittenFiles.peek(aborted).isEmpty)
  }

  test("everything else goes to the table's own file system, paths translated both ways") {
    val at = DataFileSystem.pathFor(new Path(dir.toUri.toString.stripSuffix("/") + "/k=2/part-00003-tid-a-4.parquet"),
      conf, "txcommit", classOf[DataFileSystemSuite.Local])
    write(at, 5).close()
    WrittenFiles.take(at)
    val fs = at.getFileSystem(conf)
    assert(fs.getFileStatus(at).getLen == 5, "asked of the file system once not recorded")
    assert(fs.listStatus(at.getParent).map(_.getPath).toSeq == Seq(at))
    assert(
      DataFileSystem.innerPath(at) == new Path(dir.toUri.toString.stripSuffix("/") + "/k=2/part-00003-tid-a-4.parquet"))
    assert(fs.delete(at, false) && !fs.exists(at))
  }
}

object DataFileSystemSuite {
  @volatile var failClose = false

  /** The local file system's data files, with a close that fails on demand. */
  final class Local extends DataFileSystem {
    override protected def createData(fs: FileSystem, path: Path, bufferSize: Int,
        progress: Option[Progressable]): FSDataOutputStream = {
      val inner = fs.create(path, true, bufferSize)
      new FSDataOutputStream(new FilterOutputStream(inner) with Abortable {
          override def abort(): Abortable.AbortableResult = {
            inner.close()
            new Abortable.AbortableResult {
              override def alreadyClosed(): Boolean = false
              override def anyCleanupException(): IOException = null
            }
          }
          override def write(b: Array[Byte], off: Int, len: Int): Unit = inner.write(b, off, len)
          override def close(): Unit = {
            if (failClose) throw new IOException("the store refused the upload")
            inner.close()
          }
        }, null)
    }
  }

}

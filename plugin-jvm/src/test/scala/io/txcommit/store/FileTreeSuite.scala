package io.txcommit.store

import java.nio.file.Files

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{LocatedFileStatus, Path, RemoteIterator}
import org.scalatest.funsuite.AnyFunSuite

class FileTreeSuite extends AnyFunSuite {
  test("lists every file below a local directory, nested and hidden ones too, and no directory") {
    val root = Files.createTempDirectory("txcommit-tree")
    for (rel <- Seq("a.parquet", "k=1/b.parquet", "k=1/j=2/c.parquet", "_txcommit/commits/x.json")) {
      Files.createDirectories(root.resolve(rel).getParent)
      Files.write(root.resolve(rel), Array[Byte](1, 2, 3))
    }
    Files.createDirectories(root.resolve("empty"))
    val dir = new Path(root.toUri)
    val fs = dir.getFileSystem(new Configuration())
    val listed = FileTree.files(fs, dir).map(st => root.toUri.relativize(st.getPath.toUri).getPath -> st.getLen).toMap
    assert(listed == Map("a.parquet" -> 3L, "k=1/b.parquet" -> 3L, "k=1/j=2/c.parquet" -> 3L,
      "_txcommit/commits/x.json" -> 3L))
    assertThrows[java.io.FileNotFoundException](FileTree.files(fs, new Path(dir, "missing")).toList)
  }

  /** A file system whose recursive listing fails `failures` times after its first file, as
   *  Hadoop's does when a directory it is about to enter was deleted. */
  private final class FlakyTreeFs(failures: Int) extends org.apache.hadoop.fs.LocalFileSystem {
    var failed = 0
    override def getUri: java.net.URI = java.net.URI.create("flaky:///")
    override def listFiles(f: Path, recursive: Boolean): RemoteIterator[LocatedFileStatus] = {
      val inner = super.listFiles(f, recursive)
      var yielded = 0
      new RemoteIterator[LocatedFileStatus] {
        override def hasNext: Boolean = {
          if (yielded == 1 && failed < failures) {
            failed += 1
            throw new java.io.FileNotFoundException("k=3/_temporary")
          }
          inner.hasNext
        }
        override def next(): LocatedFileStatus = { yielded += 1; inner.next() }
      }
    }
  }

  private def tree(n: Int): java.nio.file.Path = {
    val root = Files.createTempDirectory("txcommit-tree")
    (0 until n).foreach { i =>
      Files.createDirectories(root.resolve(s"k=$i"))
      Files.write(root.resolve(s"k=$i/f.parquet"), Array[Byte](1))
    }
    root
  }

  test("a recursive listing cut short by a vanished directory is begun again, each file returned once") {
    val root = tree(6)
    val fs = new FlakyTreeFs(2)
    fs.initialize(java.net.URI.create("file:///"), new Configuration())
    val listed = FileTree.files(fs, new Path(root.toUri)).map(_.getPath.getParent.getName).toList
    assert(fs.failed == 2, "the listing never failed")
    assert(listed.sorted == (0 until 6).map(i => s"k=$i"), s"listed $listed")
  }

  test("a recursive listing that keeps changing fails with an error naming it, never a part") {
    val root = tree(3)
    val fs = new FlakyTreeFs(Int.MaxValue)
    fs.initialize(java.net.URI.create("file:///"), new Configuration())
    val e = intercept[io.txcommit.ListingChangedException](FileTree.files(fs, new Path(root.toUri)).toList)
    assert(e.getMessage.contains(root.getFileName.toString) && e.getMessage.contains("run again"))
  }

  /**
   * The local file system where another writer deletes directory `dir` between Hadoop's
   * existence check and its listing: that listing fails with the plain IOException Hadoop
   * reports then ("Invalid directory ..."). With `comesBack` the writer creates the directory
   * again at once (its next listing works); without, it is gone.
   */
  private final class VanishingDirFs(dir: String, comesBack: Boolean) extends org.apache.hadoop.fs.LocalFileSystem {
    var failed = 0
    override def listStatus(f: Path): Array[org.apache.hadoop.fs.FileStatus] =
      if (f.getName != dir || (comesBack && failed > 0)) super.listStatus(f)
      else {
        if (!comesBack) org.apache.commons.io.FileUtils.deleteDirectory(new java.io.File(f.toUri))
        failed += 1
        throw new java.io.IOException(s"Invalid directory or I/O error occurred for dir: ${f.toUri.getPath}")
      }
  }

  /** Walks a 3-partition table holding `_temporary/0/x.parquet` through `fs`: the parent
   *  directory of each file listed. */
  private def walkBesideTemporary(fs: VanishingDirFs): List[String] = {
    val root = tree(3)
    Files.createDirectories(root.resolve("_temporary/0"))
    Files.write(root.resolve("_temporary/0/x.parquet"), Array[Byte](1))
    fs.initialize(java.net.URI.create("file:///"), new Configuration())
    FileTree.files(fs, new Path(root.toUri)).map(_.getPath.getParent.getName).toList
  }

  test("a local walk lists again a directory that vanished under it and came back at once") {
    val fs = new VanishingDirFs("0", comesBack = true)
    val listed = walkBesideTemporary(fs)
    assert(fs.failed == 1, "the directory never failed its listing")
    assert(listed.sorted == Seq("0") ++ (0 until 3).map(i => s"k=$i"), s"listed $listed")
  }

  test("a local walk skips a directory that vanished under it, whatever error Hadoop reports") {
    val fs = new VanishingDirFs("_temporary", comesBack = false)
    val listed = walkBesideTemporary(fs)
    assert(fs.failed == 1, "the directory never vanished under the walk")
    assert(listed.sorted == (0 until 3).map(i => s"k=$i"), s"listed $listed")
  }
}

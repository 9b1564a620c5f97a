package io.txcommit.store

import java.nio.file.Files

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
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
}

package io.txcommit.log

import java.nio.file.Files

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.testing.{InMemoryCommitStore, VanishingFileSystem}

/**
 * What a replacing commit removes is a listing of its scope: a directory that disappears while
 * it is listed (another writer's `_temporary/`) must never cost the listing its siblings' files.
 */
class TableStateListingSuite extends AnyFunSuite {
  private def table(files: Int): (java.nio.file.Path, Path) = {
    val root = Files.createTempDirectory("txcommit-vanish").resolve("t")
    (0 until files).foreach { i =>
      Files.createDirectories(root.resolve(s"k=$i"))
      Files.write(root.resolve(s"k=$i/part-$i.parquet"), Array[Byte](1, 2, 3))
    }
    (root, new Path(root.toUri))
  }

  private def vanishing(root: java.nio.file.Path, times: Int): Configuration = {
    val conf = new Configuration()
    conf.set("fs.file.impl", classOf[VanishingFileSystem].getName)
    conf.setBoolean("fs.file.impl.disable.cache", true)
    conf.set(VanishingFileSystem.Parent, root.toUri.getPath)
    conf.set(VanishingFileSystem.Child, "_temporary")
    conf.setInt(VanishingFileSystem.Times, times)
    VanishingFileSystem.vanished.set(0)
    conf
  }

  test("a directory vanishing mid-listing costs no sibling's file") {
    val (root, t) = table(10)
    val state = new TableState(t, new InMemoryCommitStore, vanishing(root, 1))
    val listed = state.dataFiles().map(_.path)
    assert(VanishingFileSystem.vanished.get() == 1, "the directory did not vanish under the listing")
    assert(listed == (0 until 10).map(i => s"k=$i/part-$i.parquet").sorted, s"listed $listed")
  }

  test("a scope that does not exist lists as empty") {
    val (_, t) = table(1)
    assert(new TableState(t, new InMemoryCommitStore, new Configuration()).dataFiles("k=9").isEmpty)
  }
}

package io.txcommit.testing

import java.util.concurrent.atomic.AtomicInteger

import org.apache.hadoop.fs.{FileStatus, LocalFileSystem, Path}

/**
 * The local file system with one directory that disappears while its parent is being walked,
 * as a plain Spark writer's `_temporary/` or Hive's `.hive-staging*` does beside a txcommit job:
 * the first `times` listings of the directory named by [[VanishingFileSystem.Parent]] return it
 * first (so every sibling is listed after it) and then delete the child named by
 * [[VanishingFileSystem.Child]], which is made again before the next listing of the parent.
 * Install with `fs.file.impl` and `fs.file.impl.disable.cache=true` in one test's conf.
 */
final class VanishingFileSystem extends LocalFileSystem {
  override def listStatus(f: Path): Array[FileStatus] = {
    val parent = getConf.get(VanishingFileSystem.Parent)
    val child = getConf.get(VanishingFileSystem.Child)
    val times = getConf.getInt(VanishingFileSystem.Times, 1)
    if (parent != null && makeQualified(f).toUri.getPath.stripSuffix("/") == parent.stripSuffix("/") &&
      VanishingFileSystem.vanished.get() < times) {
      val dir = new Path(makeQualified(f), child)
      mkdirs(new Path(dir, "0/_temporary/a"))
      val listed = super.listStatus(f).sortBy(st => if (st.getPath.getName == child) 0 else 1)
      delete(dir, true)
      VanishingFileSystem.vanished.incrementAndGet()
      listed
    } else super.listStatus(f)
  }
}

object VanishingFileSystem {
  val Parent = "test.txcommit.vanish.parent"
  val Child = "test.txcommit.vanish.child"
  val Times = "test.txcommit.vanish.times"

  /** How many times the child vanished under a listing (JVM-wide: one test at a time uses it). */
  val vanished = new AtomicInteger()
}

package io.txcommit.testing

import java.util.concurrent.atomic.AtomicReference

import org.apache.hadoop.fs.{FileStatus, LocalFileSystem, Path}

/**
 * The local file system that runs [[ListingHookFileSystem.before]] once, right before the
 * first listing of the directory [[ListingHookFileSystem.Dir]] names: something that happens
 * between a read's log listing and its data listing (a VACUUM). Install with `fs.file.impl` and
 * `fs.file.impl.disable.cache=true` for one read.
 */
final class ListingHookFileSystem extends LocalFileSystem {
  override def listStatus(f: Path): Array[FileStatus] = {
    val dir = getConf.get(ListingHookFileSystem.Dir)
    if (dir != null && makeQualified(f).toUri.getPath.stripSuffix("/") == dir.stripSuffix("/"))
      Option(ListingHookFileSystem.before.getAndSet(null)).foreach(_())
    super.listStatus(f)
  }
}

object ListingHookFileSystem {
  val Dir = "test.txcommit.hook.dir"

  /** What runs before that listing, once (JVM-wide: one test at a time sets it). */
  val before = new AtomicReference[() => Unit]()
}

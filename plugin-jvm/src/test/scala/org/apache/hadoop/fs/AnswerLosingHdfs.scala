package org.apache.hadoop.fs

import java.net.URI
import java.util.concurrent.atomic.AtomicInteger

import org.apache.hadoop.conf.Configuration

/**
 * HDFS as FileContext reaches it, whose next `renames` renames land on the NameNode and then
 * fail as a connection that broke before the answer came back does. In Hadoop's package: the
 * constructor of [[Hdfs]] is package-private (FileContext builds it by reflection).
 */
class AnswerLosingHdfs(uri: URI, conf: Configuration) extends Hdfs(uri, conf) {
  override def renameInternal(src: Path, dst: Path, overwrite: Boolean): Unit = {
    super.renameInternal(src, dst, overwrite)
    if (AnswerLosingHdfs.renames.getAndUpdate(n => math.max(0, n - 1)) > 0) {
      throw new java.io.EOFException(s"the answer to the rename of $src to $dst was lost (test)")
    }
  }
}

object AnswerLosingHdfs {

  /** How many renames still lose their answer. */
  val renames = new AtomicInteger(0)

  /** `conf` with HDFS's FileContext file system replaced by this one. */
  def conf(base: Configuration): Configuration = {
    val c = new Configuration(base)
    c.set("fs.AbstractFileSystem.hdfs.impl", classOf[AnswerLosingHdfs].getName)
    c.setBoolean("fs.hdfs.impl.disable.cache", true) // a FileSystem that carries this conf
    c
  }
}

package io.txcommit.store

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/** Local and NFS-style POSIX file systems: records are published with `link(2)`. */
final class LocalAdapter extends StoreAdapter {
  override val name = "local"
  override def open(table: Path, conf: Configuration): CommitStore =
    new RenameStore(declaration, table.getFileSystem(conf), local = true)
}

/** HDFS and viewfs: the NameNode's rename refuses an existing target atomically. */
final class HdfsAdapter extends StoreAdapter {
  override val name = "hdfs"
  override def open(table: Path, conf: Configuration): CommitStore =
    new RenameStore(declaration, table.getFileSystem(conf), local = false)
}

package io.txcommit.store

import org.apache.hadoop.fs.{FileAlreadyExistsException, Path}

import io.txcommit.Paths

/**
 * `openAtomic(target, overwrite = false)` found `target` already published: another writer won.
 * It is Hadoop's `FileAlreadyExistsException`, which Spark's streaming logs expect from a
 * checkpoint file manager (they turn it into "another query is writing this checkpoint").
 */
final class AtomicFileExistsException(val target: Path, how: String)
  extends FileAlreadyExistsException(s"txcommit: ${Paths.display(target)} already exists, so it " +
    s"was not overwritten ($how); another writer published it first. If two queries use this " +
    "checkpoint location, stop one of them.")

package io.txcommit.store

import org.apache.hadoop.fs.{FileStatus, FileSystem, Path}

/**
 * Every file below a directory, recursively and lazily (path, length and modification time:
 * all txcommit asks of a listing). A missing `dir` throws `FileNotFoundException`.
 *
 * On object stores this is `FileSystem.listFiles(dir, true)`: one flat listing of the prefix.
 * On the local file system that call builds a `LocatedFileStatus` per file, whose constructor
 * reads the file's permissions, which Hadoop's local file system gets by running `ls -ld` in a
 * subprocess when its native library is not loaded (it is not in Spark's distribution): about
 * 10 ms per file (Spark's own listing avoids it the same way, SPARK-15307). There the tree is
 * walked with `listStatus`, which never reads permissions.
 */
object FileTree {
  def files(fs: FileSystem, dir: Path): Iterator[FileStatus] =
    if (fs.getUri.getScheme == "file") walk(fs, dir)
    else {
      val it = fs.listFiles(dir, true)
      new Iterator[FileStatus] {
        override def hasNext: Boolean = it.hasNext
        override def next(): FileStatus = it.next()
      }
    }

  private def walk(fs: FileSystem, dir: Path): Iterator[FileStatus] =
    fs.listStatus(dir).iterator.flatMap(st => if (st.isDirectory) walk(fs, st.getPath) else Iterator.single(st))
}

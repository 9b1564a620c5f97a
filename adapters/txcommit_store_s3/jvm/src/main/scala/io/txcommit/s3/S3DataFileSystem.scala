package io.txcommit.s3

import scala.language.existentials // FileSystem.createFile returns Hadoop's raw builder type

import org.apache.hadoop.fs.{FSDataOutputStream, FileSystem, Path}
import org.apache.hadoop.util.Progressable

import io.txcommit.store.DataFileSystem

/**
 * The `s3` adapter's create path for data files (`txcommit+s3a://`, [[DataFileSystem]]): S3A
 * writes each file, with the user's S3A settings (buffering, multipart, encryption), but without
 * its create-time probes (`fs.s3a.create.performance`, per file: is something at this key, is
 * it a directory). txcommit names every data file with its transaction and task attempt, so no
 * two writes share a key and the probes guard against nothing. Overwrite is asked for, so S3A
 * never turns the PUT into a conditional one: a PUT resent after a lost answer succeeds.
 */
class S3DataFileSystem extends DataFileSystem {
  override protected def createData(fs: FileSystem, path: Path, bufferSize: Int,
      progress: Option[Progressable]): FSDataOutputStream = {
    val b = fs.createFile(path) // each call sets the builder's state and returns the builder
    b.overwrite(true)
    b.recursive()
    b.bufferSize(bufferSize)
    b.opt(S3DataFileSystem.CreatePerformance, "true")
    progress.foreach(b.progress)
    b.build()
  }
}

object S3DataFileSystem {

  /** S3A's per-file option (Hadoop 3.4.1, 3.4.2 and 3.5.0 alike): no HEAD or LIST at create. */
  val CreatePerformance = "fs.s3a.create.performance"
}

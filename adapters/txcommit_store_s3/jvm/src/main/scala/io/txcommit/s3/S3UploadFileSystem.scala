package io.txcommit.s3

import org.apache.hadoop.fs.{FSDataOutputStream, FileSystem, Path}
import org.apache.hadoop.fs.s3a.S3AFileSystem
import org.apache.hadoop.util.Progressable

import io.txcommit.UnsupportedStoreException
import io.txcommit.store.DataFileSystem

/**
 * The `s3-multipart` adapter's create path for data files (`txcommit-upload+s3a://`,
 * [[DataFileSystem]]): each file is an [[S3PendingUpload]], a multipart upload that the job
 * commit completes. Per file, a task sends the upload's start and its parts, and nothing else:
 * no probe, no marker, no summary file to read back at task commit.
 */
class S3UploadFileSystem extends DataFileSystem {
  @volatile private var store: S3Store = _

  override protected def createData(fs: FileSystem, path: Path, bufferSize: Int,
      progress: Option[Progressable]): FSDataOutputStream = {
    if (store == null) store = fs match {
      case s3a: S3AFileSystem => new S3MultipartStore(new S3MultipartAdapter().declaration, new S3Bucket(s3a, getConf))
      case other => throw new UnsupportedStoreException(s"the s3-multipart adapter writes through Hadoop's " +
          s"S3A connector, but ${path.toUri.getScheme} is served by ${other.getClass.getName}")
    }
    new FSDataOutputStream(new S3PendingUpload(store, path), null)
  }
}

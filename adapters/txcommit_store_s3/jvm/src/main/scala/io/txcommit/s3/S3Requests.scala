package io.txcommit.s3

import org.apache.hadoop.fs.s3a.impl.PutObjectOptions
import software.amazon.awssdk.services.s3.model.{CreateMultipartUploadRequest, UploadPartRequest}

/**
 * Multipart upload requests as S3A builds them for its own uploads (its request factory: the
 * bucket's encryption, ACL, storage class and custom headers), so a data file the adapter
 * uploads itself is stored as one S3A wrote would be. Two signatures differ between the
 * Hadoop versions of the Spark lines (3.4.1: `keepingDirs()` and a part builder without the
 * last-part flag; 3.4.2 and 3.5.0: `defaultOptions()`, and the flag), so those two are found
 * by name once.
 */
object S3Requests {
  private lazy val options: PutObjectOptions = {
    val c = classOf[PutObjectOptions]
    scala.util.Try(c.getMethod("defaultOptions")).orElse(scala.util.Try(c.getMethod("keepingDirs")))
      .get.invoke(null).asInstanceOf[PutObjectOptions]
  }

  private lazy val partBuilder: java.lang.reflect.Method =
    classOf[org.apache.hadoop.fs.s3a.api.RequestFactory].getMethods
      .filter(_.getName == "newUploadPartRequestBuilder").maxBy(_.getParameterCount)

  def initiate(loc: S3Bucket, key: String): CreateMultipartUploadRequest =
    loc.fs.getRequestFactory.newMultipartUploadRequestBuilder(key, options).build()

  def part(loc: S3Bucket, key: String, uploadId: String, n: Int, last: Boolean, size: Long): UploadPartRequest = {
    val args: Seq[AnyRef] =
      if (partBuilder.getParameterCount == 5)
        Seq(key, uploadId, Int.box(n), Boolean.box(last), Long.box(size))
      else Seq(key, uploadId, Int.box(n), Long.box(size))
    partBuilder.invoke(loc.fs.getRequestFactory, args: _*).asInstanceOf[UploadPartRequest.Builder].build()
  }
}

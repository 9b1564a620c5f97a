package io.txcommit.s3

import java.net.URI

import scala.util.Try

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.hadoop.fs.s3a.S3AFileSystem
import software.amazon.awssdk.services.s3.S3Client

import io.txcommit.{Paths, UnsupportedStoreException}

/**
 * One bucket as S3A sees it. Requests go through the AWS SDK client S3A built (same
 * credentials, endpoint, retries and auditing), so the adapter controls each header and counts
 * each request itself. `jobConf` is the write's own conf (session settings), `fs`'s is the
 * conf the cached file system was created with.
 */
final class S3Bucket(val fs: S3AFileSystem, val jobConf: Configuration) {
  val bucket: String = fs.getBucket
  lazy val client: S3Client = fs.getS3AInternals.getAmazonS3Client("txcommit")

  def key(p: Path): String = fs.pathToKey(p)
  def path(key: String): Path = fs.keyToQualifiedPath(key)
  def url(key: String): String = s"s3a://$bucket/$key"

  /** The endpoint for errors and logs: never with user info or query (where secrets could hide). */
  def endpoint: String =
    Option(fs.getConf.getTrimmed("fs.s3a.endpoint")).filter(_.nonEmpty).map { e =>
      Try {
        val u = new URI(if (e.contains("://")) e else s"https://$e")
        new URI(u.getScheme, null, u.getHost, u.getPort, null, null, null).toString
      }.getOrElse("(unparseable fs.s3a.endpoint)")
    }.getOrElse("the default AWS S3 endpoint")
}

object S3Bucket {
  def apply(table: Path, conf: Configuration): S3Bucket = table.getFileSystem(conf) match {
    case fs: S3AFileSystem => new S3Bucket(fs, conf)
    case other =>
      val scheme = Option(table.toUri.getScheme).getOrElse("?")
      throw new UnsupportedStoreException(s"the S3 adapters need Hadoop's S3A connector for " +
        s"${Paths.display(table)}, but scheme '$scheme' is served by ${other.getClass.getName}. " +
        s"Set fs.$scheme.impl=org.apache.hadoop.fs.s3a.S3AFileSystem, or write to an s3a:// path.")
  }
}

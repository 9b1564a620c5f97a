package io.txcommit.gcs

import java.net.URI
import java.nio.charset.StandardCharsets.UTF_8
import java.security.MessageDigest
import java.util.concurrent.ConcurrentHashMap

import scala.jdk.CollectionConverters._
import scala.util.Try

import com.google.cloud.hadoop.fs.gcs.GoogleHadoopFileSystem
import com.google.cloud.hadoop.repackaged.gcs.com.google.cloud.hadoop.gcsio.{GoogleCloudStorage, StorageResourceId}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{Path, UnsupportedFileSystemException}

import io.txcommit.{Paths, UnsupportedStoreException}

/**
 * One bucket as Google's Cloud Storage connector sees it. Spark's writers reach it through the
 * `gs` file system the cluster configured (`fs`); the adapter's own requests (records,
 * checkpoint files, listings of the log) go through [[publisher]], a second connector instance
 * built from the same settings (credentials, endpoint, retries) with its upload path forced to
 * the one on which a generation precondition is checked ([[GcsBucket.PublishSettings]]).
 * `jobConf` is the write's own conf (session settings), `fs`'s is the conf the cached file
 * system was created with.
 */
final class GcsBucket(val fs: GoogleHadoopFileSystem, val jobConf: Configuration) {
  val bucket: String = fs.getUri.getAuthority
  lazy val publisher: GoogleCloudStorage = GcsBucket.publisherFor(fs).getGcsFs.getGcs

  /** The object name of `p` (no leading slash); a path of another bucket is refused. */
  def name(p: Path): String = {
    val u = fs.makeQualified(p).toUri
    if (u.getAuthority != bucket) throw new IllegalArgumentException(
      s"txcommit: ${Paths.display(p)} is not in bucket gs://$bucket/")
    u.getPath.stripPrefix("/")
  }
  def id(p: Path): StorageResourceId = new StorageResourceId(bucket, name(p))
  def path(name: String): Path = new Path(s"gs://$bucket/$name")
  def url(name: String): String = s"gs://$bucket/$name"

  /** The JSON API root for errors and logs: never with user info or query (secrets could hide there). */
  def endpoint: String =
    Option(fs.getConf.getTrimmed(GcsBucket.RootUrlKey)).filter(_.nonEmpty).map { e =>
      Try {
        val u = new URI(e)
        new URI(u.getScheme, null, u.getHost, u.getPort, null, null, null).toString
      }.getOrElse(s"(unparseable ${GcsBucket.RootUrlKey})")
    }.getOrElse("https://storage.googleapis.com")
}

object GcsBucket {
  val ConnectorClass = "com.google.cloud.hadoop.fs.gcs.GoogleHadoopFileSystem"
  val RootUrlKey = "fs.gs.storage.root.url"
  val BlockSizeKey = "fs.gs.block.size"

  /**
   * Hadoop 3.5's core-default.xml sets `fs.gs.block.size=64m` for its own hadoop-gcp module;
   * Google's connector reads the key with `Configuration.getLong`, so every connector release
   * fails to initialise with NumberFormatException unless it is a plain number
   * (reported upstream as GoogleCloudDataproc/hadoop-connectors#1730).
   */
  val BlockSize = "67108864"

  /**
   * How the adapter's own connector instance uploads. An exclusive create must be ONE request
   * carrying `ifGenerationMatch=0` on an upload path where the store checks it: the connector's
   * default (a resumable upload) is not checked by fake-gcs-server, the emulator we test
   * against (16 "winners" of a 16-way race), while a direct `uploadType=multipart` upload is
   * (exactly one winner). Google Cloud checks both; the multipart path is the one both agree on.
   * The JSON API client (not gRPC, not the java-storage client, whose writes are resumable), no
   * client-side re-upload of a failed upload, and one request per delete (no batch endpoint).
   */
  val PublishSettings: Map[String, String] = Map(
    "fs.gs.client.type" -> "HTTP_API_CLIENT",
    "fs.gs.grpc.enable" -> "false",
    "fs.gs.outputstream.direct.upload.enable" -> "true",
    "fs.gs.outputstream.upload.cache.size" -> "0",
    "fs.gs.max.requests.per.batch" -> "1")

  /** Connector instances for the adapter's requests, one per bucket and set of `fs.gs.*` settings, kept for the JVM's life. */
  private val publishers = new ConcurrentHashMap[String, GoogleHadoopFileSystem]()

  private[gcs] def publishConf(base: Configuration): Configuration = {
    val c = new Configuration(base)
    PublishSettings.foreach { case (k, v) => c.set(k, v) }
    if (Try(c.getLong(BlockSizeKey, 0L)).isFailure) c.set(BlockSizeKey, BlockSize)
    c
  }

  private def publisherFor(fs: GoogleHadoopFileSystem): GoogleHadoopFileSystem = {
    val conf = publishConf(fs.getConf)
    // Keyed by a digest of the settings (they may hold credentials: never kept or logged in clear).
    val digest = MessageDigest.getInstance("SHA-256")
    conf.iterator().asScala.map(e => e.getKey -> e.getValue).filter(_._1.startsWith("fs.gs.")).toSeq.sorted
      .foreach { case (k, v) => digest.update(s"$k=$v\n".getBytes(UTF_8)) }
    val key = fs.getUri.toString + "|" + digest.digest().map("%02x".format(_)).mkString
    publishers.computeIfAbsent(key,
      _ => {
        val p = new GoogleHadoopFileSystem()
        p.initialize(fs.getUri, conf)
        p
      })
  }

  def apply(table: Path, conf: Configuration): GcsBucket = {
    val fs =
      try table.getFileSystem(conf)
      catch {
        case e: RuntimeException
            if causes(e).exists(_.isInstanceOf[NumberFormatException]) &&
              Try(conf.getLong(BlockSizeKey, 0L)).isFailure =>
          throw new UnsupportedStoreException(s"Google's Cloud Storage connector cannot start for " +
            s"${Paths.display(table)}: $BlockSizeKey is '${conf.get(BlockSizeKey)}' (Hadoop 3.5's default " +
            s"for its own GCS module), and the connector reads only a plain number. Set " +
            s"spark.hadoop.$BlockSizeKey=$BlockSize.")
        case e @ (_: RuntimeException | _: UnsupportedFileSystemException)
            if e.isInstanceOf[UnsupportedFileSystemException] || causes(e).exists(
              _.isInstanceOf[ClassNotFoundException]) =>
          throw new UnsupportedStoreException(s"no gs:// file system could be loaded for " +
            s"${Paths.display(table)} (${e.getMessage}). The gcs adapter writes through Google's Cloud " +
            s"Storage connector: put the jar `txcommit jars --store gcs` prints on the classpath and set " +
            s"spark.hadoop.fs.gs.impl=$ConnectorClass.")
      }
    fs match {
      case g: GoogleHadoopFileSystem => new GcsBucket(g, conf)
      case other =>
        val scheme = Option(table.toUri.getScheme).getOrElse("?")
        throw new UnsupportedStoreException(s"the gcs adapter needs Google's Cloud Storage " +
          s"connector for ${Paths.display(table)}, but scheme '$scheme' is served by " +
          s"${other.getClass.getName}. Set fs.$scheme.impl=$ConnectorClass (spark.hadoop.fs.$scheme.impl).")
    }
  }

  private def causes(e: Throwable): Iterator[Throwable] =
    Iterator.iterate(e)(_.getCause).takeWhile(_ != null).take(10)
}

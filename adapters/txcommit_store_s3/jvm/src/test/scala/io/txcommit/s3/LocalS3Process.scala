package io.txcommit.s3

import java.util.UUID

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import io.txcommit.testing.ReadyProcess

/**
 * A real S3 endpoint for the JVM tests: `python -m txcommit_store_s3.devkit.emulator` (moto's server) from the
 * project's server venv, on a free loopback port, with one bucket.
 */
final class LocalS3Process(ignoreIfNoneMatch: Boolean = false) extends AutoCloseable {
  val bucket = "txcommit-test"
  val port: Int = ReadyProcess.freePort()
  val endpoint = s"http://127.0.0.1:$port"

  private val proc = new ReadyProcess("local S3",
    Seq("txcommit_store_s3.devkit.emulator", "--port", port.toString, "--bucket", bucket) ++
      (if (ignoreIfNoneMatch) Seq("--ignore-if-none-match") else Nil))

  /** Hadoop settings reaching this endpoint; `secret` is a recognisable fake credential. */
  val secret = "not-a-real-secret-" + UUID.randomUUID()
  def conf(): Configuration = {
    val c = new Configuration()
    c.set("fs.s3a.endpoint", endpoint)
    c.set("fs.s3a.endpoint.region", "us-east-1")
    c.set("fs.s3a.path.style.access", "true")
    c.set("fs.s3a.connection.ssl.enabled", "false")
    c.set("fs.s3a.access.key", "txcommit-local")
    c.set("fs.s3a.secret.key", secret)
    c.set("fs.s3a.aws.credentials.provider", "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider")
    c.setBoolean("fs.s3a.impl.disable.cache", true) // each test gets its own client and conf
    c
  }

  def freshTable(): Path = new Path(s"s3a://$bucket/t-${UUID.randomUUID()}")

  /**
   * The endpoint forwards the next `count` requests whose "<OP> <bucket>/<key>" matches `pattern`
   * and drops each connection without answering (`txcommit local-s3 --lose-response`); returns
   * the endpoint's fault state as JSON. `count = 0` disarms it.
   */
  def loseAnswers(pattern: String, count: Int = 1): String = http("POST",
    s"/_txcommit/faults?lose-response=${java.net.URLEncoder.encode(pattern, "UTF-8")}&count=$count")

  /** The requests whose answers were lost so far (their "<OP> <bucket>/<key>"). */
  def lostAnswers: Seq[String] =
    "\"lost\": \\[(.*?)\\]".r.findFirstMatchIn(http("GET", "/_txcommit/faults")).toSeq
      .flatMap(_.group(1).split(",").map(_.trim.stripPrefix("\"").stripSuffix("\"")).filter(_.nonEmpty))

  /** "<OP> <bucket>/<key>" (a LIST: "LIST <bucket>/<prefix>") of every request the endpoint has served. */
  def served: Seq[String] = {
    val log = http("GET", "/_txcommit/requests")
    val entry = "\\{\"op\": \"([A-Z_]+)\", \"bucket\": \"([^\"]*)\", \"key\": \"([^\"]*)\"([^}]*)\\}".r
    val prefix = "\"prefix\": \"([^\"]*)\"".r
    entry.findAllMatchIn(log).map { m =>
      val key = if (m.group(3).nonEmpty) m.group(3) else prefix.findFirstMatchIn(m.group(4)).fold("")(_.group(1))
      s"${m.group(1)} ${m.group(2)}/$key"
    }.toSeq
  }

  private def http(method: String, pathAndQuery: String): String = {
    val c = new java.net.URL(endpoint + pathAndQuery).openConnection().asInstanceOf[java.net.HttpURLConnection]
    c.setRequestMethod(method)
    try scala.io.Source.fromInputStream(c.getInputStream, "UTF-8").mkString
    finally c.disconnect()
  }

  override def close(): Unit = proc.close()
}

package io.txcommit.s3

import java.io.{BufferedReader, File, InputStreamReader}
import java.net.ServerSocket
import java.util.UUID
import java.util.concurrent.TimeUnit

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/**
 * A real S3 endpoint for the JVM tests: `python -m txcommit.testing.local_s3` (moto's server) from the
 * project's server venv, on a free loopback port, with one bucket.
 */
final class LocalS3Process(ignoreIfNoneMatch: Boolean = false) extends AutoCloseable {
  val bucket = "txcommit-test"
  val port: Int = { val s = new ServerSocket(0); try s.getLocalPort finally s.close() }
  val endpoint = s"http://127.0.0.1:$port"

  private val python: String = sys.env.getOrElse("TXCOMMIT_SERVER_PYTHON", {
    val root = Iterator.iterate(new File(".").getAbsoluteFile)(_.getParentFile)
      .takeWhile(_ != null).find(d => new File(d, ".venv/bin/python").exists())
      .getOrElse(sys.error("no .venv/bin/python above the working directory: run bash .ci/setup"))
    new File(root, ".venv/bin/python").getPath
  })

  private val proc: Process = {
    val args = Seq(python, "-m", "txcommit.testing.local_s3", "--port", port.toString, "--bucket", bucket) ++
      (if (ignoreIfNoneMatch) Seq("--ignore-if-none-match") else Nil)
    val p = new ProcessBuilder(args: _*).redirectErrorStream(true).start()
    val out = new BufferedReader(new InputStreamReader(p.getInputStream))
    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60)
    var line = out.readLine()
    while (line != null && !line.contains("ready at") && System.nanoTime() < deadline) line = out.readLine()
    if (line == null || !line.contains("ready at")) { p.destroyForcibly(); sys.error(s"local S3 did not start: $line") }
    new Thread(() => while (out.readLine() != null) {}).start() // keep draining its output
    p
  }

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

  private def http(method: String, pathAndQuery: String): String = {
    val c = new java.net.URL(endpoint + pathAndQuery).openConnection().asInstanceOf[java.net.HttpURLConnection]
    c.setRequestMethod(method)
    try scala.io.Source.fromInputStream(c.getInputStream, "UTF-8").mkString finally c.disconnect()
  }

  override def close(): Unit = { proc.destroy(); proc.waitFor(10, TimeUnit.SECONDS); proc.destroyForcibly() }
}

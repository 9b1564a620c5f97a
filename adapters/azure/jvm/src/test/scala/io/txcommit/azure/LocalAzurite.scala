package io.txcommit.azure

import java.io.{BufferedReader, File, InputStreamReader}
import java.util.UUID
import java.util.concurrent.TimeUnit

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/**
 * A real Azure Blob endpoint for the JVM tests: Azurite (npm, installed by .ci/setup) started by
 * `python -m txcommit.testing.emulators azure` from the project's server venv, on a free
 * loopback port, in memory, with one container.
 */
final class LocalAzurite extends AutoCloseable {
  val container = "txcommit-test"
  val account: String = LocalAzurite.Account

  private val root: File = Iterator.iterate(new File(".").getAbsoluteFile)(_.getParentFile)
    .takeWhile(_ != null).find(d => new File(d, ".venv/bin/python").exists())
    .getOrElse(sys.error("no .venv/bin/python above the working directory: run bash .ci/setup"))

  private val python: String =
    sys.env.getOrElse("TXCOMMIT_SERVER_PYTHON", new File(root, ".venv/bin/python").getPath)

  /** `http://127.0.0.1:<port>/devstoreaccount1`, as the emulator prints it. */
  val (proc: Process, endpoint: String) = {
    val pb = new ProcessBuilder(python, "-m", "txcommit.testing.emulators", "azure", "--container", container)
      .redirectErrorStream(true)
    // This checkout's Python sources (the venv may be shared with another checkout).
    pb.environment().put("PYTHONPATH", new File(root, "python/src").getPath)
    val p = pb.start()
    val out = new BufferedReader(new InputStreamReader(p.getInputStream))
    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90)
    var line = out.readLine()
    while (line != null && !line.contains("ready at") && System.nanoTime() < deadline) line = out.readLine()
    if (line == null || !line.contains("ready at")) { p.destroyForcibly(); sys.error(s"Azurite did not start: $line") }
    new Thread(() => while (out.readLine() != null) {}).start() // keep draining its output
    (p, line.substring(line.indexOf("ready at ") + "ready at ".length).trim)
  }

  /** `127.0.0.1:<port>`: what fs.azure.abfs.endpoint takes. */
  val hostPort: String = new java.net.URI(endpoint).getRawAuthority

  /** Hadoop settings reaching this endpoint through ABFS (docs/adapters.md, Azure). */
  def conf(): Configuration = LocalAzurite.conf(hostPort)

  def freshTable(): Path = new Path(s"abfs://$container@$account.dfs.core.windows.net/t-${UUID.randomUUID()}")

  override def close(): Unit = { proc.destroy(); proc.waitFor(10, TimeUnit.SECONDS); proc.destroyForcibly() }
}

object LocalAzurite {
  /** Azurite's well-known development account and key (public, documented by Microsoft). */
  val Account = "devstoreaccount1"
  val Key = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

  def conf(hostPort: String): Configuration = {
    val c = new Configuration()
    c.set("fs.azure.abfs.endpoint", hostPort)
    c.set("fs.azure.always.use.https", "false")
    c.set("fs.azure.networking.library", "JDK_HTTP_URL_CONNECTION")
    c.set("fs.azure.account.auth.type", "SharedKey")
    c.set(s"fs.azure.account.key.$Account.dfs.core.windows.net", Key)
    c.set("fs.azure.account.hns.enabled", "false")
    // ABFS 3.5 sends its client metrics to the account at JVM exit, retrying for minutes
    // against an emulator that is gone by then.
    c.set("fs.azure.metrics.collection.enabled", "false")
    c.setBoolean("fs.abfs.impl.disable.cache", true) // each test gets its own client and conf
    c
  }
}

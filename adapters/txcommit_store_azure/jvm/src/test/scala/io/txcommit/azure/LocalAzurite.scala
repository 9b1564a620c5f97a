package io.txcommit.azure

import java.util.UUID

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import io.txcommit.testing.ReadyProcess

/**
 * A real Azure Blob endpoint for the JVM tests: Azurite (npm, installed by .ci/setup) started by
 * `python -m txcommit.devkit.emulators azure` from the project's server venv, on a free
 * loopback port, in memory, with one container.
 */
final class LocalAzurite extends AutoCloseable {
  val container = "txcommit-test"
  val account: String = LocalAzurite.Account

  private val proc = new ReadyProcess("Azurite",
    Seq("txcommit.devkit.emulators", "azure", "--container", container), timeoutSeconds = 90)

  /** `http://127.0.0.1:<port>/devstoreaccount1`, as the emulator prints it. */
  val endpoint: String = proc.readyAt

  /** `127.0.0.1:<port>`: what fs.azure.abfs.endpoint takes. */
  val hostPort: String = new java.net.URI(endpoint).getRawAuthority

  /** Hadoop settings reaching this endpoint through ABFS (docs/adapters.md, Azure). */
  def conf(): Configuration = LocalAzurite.conf(hostPort)

  def freshTable(): Path = new Path(s"abfs://$container@$account.dfs.core.windows.net/t-${UUID.randomUUID()}")

  override def close(): Unit = proc.close()
}

object LocalAzurite {

  /** Hadoop 3.5's ABFS reaches Azurite through the Blob API Azurite serves; 3.4's (Spark 4.0
    * and 4.1) speaks only the DFS API, which Azurite lacks (listings come back empty, creates
    * and opens fail). Real Azure serves both; docs/user-guide.md says those lines' ABFS paths
    * are not tested here. */
  val abfsReachesAzurite: Boolean = !org.apache.hadoop.util.VersionInfo.getVersion.startsWith("3.4.")

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

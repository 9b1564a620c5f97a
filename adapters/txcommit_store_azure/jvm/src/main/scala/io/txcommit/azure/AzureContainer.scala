package io.txcommit.azure

import java.net.URI

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.hadoop.fs.azurebfs.AzureBlobFileSystem
import org.apache.hadoop.fs.azurebfs.services.AuthType

import io.txcommit.{Paths, UnsupportedStoreException}

/**
 * One container as ABFS sees it, and how to reach its Blob endpoint. The adapter sends its own
 * Blob REST requests (see [[BlobClient]]) with the account, endpoint and credentials ABFS was
 * configured with, so a table needs no setting beyond the usual `fs.azure.*` ones.
 *
 * The Blob endpoint is ABFS's: `http[s]://<account>.blob.<suffix>/<container>` for an account
 * host `<account>.dfs.<suffix>`, or, when `fs.azure.abfs.endpoint` names `host:port` (an
 * emulator), `http[s]://host:port/<account>/<container>`. HTTPS unless the scheme is `abfs`
 * and `fs.azure.always.use.https=false`.
 */
final class AzureContainer(val fs: AzureBlobFileSystem, val jobConf: Configuration) {
  private val abfs = fs.getAbfsStore.getAbfsConfiguration
  private val fsUri: URI = fs.getUri

  /** The container (ABFS calls it the file system): the user part of the URI's authority. */
  val container: String = fsUri.getUserInfo

  /** The account host of the URI, e.g. `lake.dfs.core.windows.net`. */
  val accountHost: String = fsUri.getHost

  /** The storage account name, e.g. `lake`. */
  val account: String = accountHost.takeWhile(_ != '.')

  private val secure: Boolean = fs.isSecureScheme || abfs.isHttpsAlwaysUsed

  /** `http[s]://...[/<account>]`: the Blob service root the requests go to. */
  val serviceRoot: String = {
    val scheme = if (secure) "https" else "http"
    Option(abfs.get(AzureContainer.EndpointKey)).map(_.trim).filter(_.contains(":")) match {
      case Some(hostPort) => s"$scheme://$hostPort/$account"
      case None => s"$scheme://${accountHost.replaceFirst("\\.dfs\\.", ".blob.")}"
    }
  }

  /** The endpoint as shown in errors and logs (no credentials ever appear in it). */
  def endpoint: String = serviceRoot

  /** The Authorization header of a request, computed from ABFS's own credentials. */
  private[azure] lazy val auth: Authorizer = abfs.getAuthType(abfs.getAccountName) match {
    case AuthType.SharedKey => new SharedKeyAuthorizer(account, abfs.getStorageAccountKey)
    case AuthType.OAuth | AuthType.Custom => new BearerAuthorizer(() => fs.getAbfsStore.getClient.getAccessToken)
    case other => throw new UnsupportedStoreException(
        s"the 'azure' adapter cannot authenticate to ${Paths.display(new Path(fsUri))} with " +
          s"fs.azure.account.auth.type=$other: it signs its requests with a shared key " +
          s"(fs.azure.account.key.$accountHost) or an OAuth token (fs.azure.account.auth.type=OAuth " +
          "or Custom). Use one of those for this account.")
  }

  lazy val client: BlobClient = new BlobClient(this)

  /** The blob name of a path in this container (no leading slash). */
  def blobName(p: Path): String = {
    val q = if (p.isAbsolute && p.toUri.getScheme != null) p else fs.makeQualified(p)
    q.toUri.getPath.stripPrefix("/")
  }

  /** The qualified Hadoop path of a blob. */
  def path(name: String): Path = new Path(s"${fsUri.getScheme}://${fsUri.getRawAuthority}/$name")

  /** The URL of a blob as shown to users: the table's own scheme. */
  def url(name: String): String = s"${fsUri.getScheme}://${fsUri.getRawAuthority}/$name"
}

object AzureContainer {

  /** ABFS's endpoint override (`host:port`), used for emulators. */
  val EndpointKey = "fs.azure.abfs.endpoint"

  def apply(table: Path, conf: Configuration): AzureContainer = {
    val scheme = Option(table.toUri.getScheme).getOrElse("")
    if (scheme == "wasb" || scheme == "wasbs") throw new UnsupportedStoreException(wasbGone(table))
    table.getFileSystem(conf) match {
      case fs: AzureBlobFileSystem => new AzureContainer(fs, conf)
      case other => throw new UnsupportedStoreException(s"the 'azure' adapter needs Hadoop's ABFS " +
          s"connector (hadoop-azure) for ${Paths.display(table)}, but scheme '$scheme' is served by " +
          s"${other.getClass.getName}. Write to an abfs[s]://<container>@<account>.dfs.core.windows.net/ " +
          s"path, or set fs.$scheme.impl=org.apache.hadoop.fs.azurebfs.SecureAzureBlobFileSystem.")
    }
  }

  def wasbGone(table: Path): String =
    s"${Paths.display(table)}: Hadoop 3.5 removed the WASB connector (wasb://, wasbs://); the " +
      "same containers are reached through ABFS: write abfss://<container>@<account>.dfs.core." +
      "windows.net/<path> instead (hadoop-azure's ABFS works with accounts with or without a " +
      "hierarchical namespace)."
}

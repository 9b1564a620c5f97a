package io.txcommit.azure

import java.io.IOException
import java.time.ZonedDateTime
import java.time.format.DateTimeFormatter
import java.util.UUID

import org.apache.hadoop.fs.{FileStatus, Path}
import org.slf4j.LoggerFactory

import io.txcommit.CommitConflictException
import io.txcommit.store.{AdapterDeclaration, AtomicOutput, CommitStore, StagedFile}

/**
 * The `azure` store (primitive `conditional-put`): data files are written by Spark's writers
 * through ABFS straight to their final names; every exclusive create is ONE Put Blob with
 * `If-None-Match: *`, which Azure refuses with 409 `BlobAlreadyExists` when the blob exists.
 *
 * Never ABFS's `create(overwrite = false)`: on the Blob endpoint it checks with a HEAD and then
 * writes unconditionally (two winners of one race were seen on Azurite), and an empty file is
 * visible from `create` until `close`. A Put Blob makes a blob appear whole when it succeeds.
 * Reads, listings and deletes are plain Blob REST requests too, so each is one counted request.
 */
class AzureStore(val declaration: AdapterDeclaration, val loc: AzureContainer) extends CommitStore {
  private val log = LoggerFactory.getLogger(getClass)
  import loc.{blobName, client, url}

  private def fail(what: String, name: String, r: BlobResponse): Nothing = {
    val advice = r.status match {
      case 403 => "access was denied: check the account key (fs.azure.account.key." +
          s"${loc.accountHost}) or the identity's role on container ${loc.container}"
      case 404 if r.errorCode == "ContainerNotFound" => s"container ${loc.container} does not exist; create it"
      case _ => "check that the endpoint is reachable and the account's settings, then retry"
    }
    throw new IOException(s"txcommit: $what ${url(name)} at ${loc.endpoint} failed with " +
      s"${r.status} ${r.errorCode}: $advice")
  }

  /** Counts each attempt of a request as `kind`: a resent request is a request on the wire. */
  private def counted(kind: String): () => Unit = () => requests.add(kind)

  /**
   * Creates `name` only if absent: true if this call created it, false if it existed.
   *
   * A request whose answer was lost is sent again, and the resend's `If-None-Match: *` meets
   * the blob the first attempt created: 409, although this call created it. So each call tags
   * its blob with a random create id (blob metadata), and a refusal is a conflict only when
   * the blob in place carries another id (docs/protocol.md, I17).
   */
  final def putIfAbsent(name: String, body: BlobBody): Boolean = {
    val id = UUID.randomUUID().toString
    val r = client.send("PUT", name, headers = AzureStore.putHeaders(Some(id)), body = body, onAttempt = counted("PUT"))
    r.status match {
      case 201 => true
      case 409 | 412 if AzureStore.exists(r) => createdBy(name, id)
      case _ => fail("Put Blob (If-None-Match: *) of", name, r)
    }
  }

  /** Whether the blob `name` is the one an exclusive create tagged `id` made (see putIfAbsent). */
  private def createdBy(name: String, id: String): Boolean = {
    val r = client.send("HEAD", name, onAttempt = counted("HEAD"))
    val mine = r.status == 200 && r.header(AzureStore.CreateIdHeader).contains(id)
    if (mine) log.warn(s"txcommit: ${url(name)}: the store refused a resent create, but the blob " +
      "in place is this create's own (its first attempt landed and the answer was lost)")
    mine
  }

  override def createExclusive(target: Path, bytes: Array[Byte]): Unit = {
    val name = blobName(target)
    if (!putIfAbsent(name, BlobBody.Bytes(bytes))) throw new CommitConflictException(
      s"${url(name)} already exists, so it was not overwritten (Azure refused Put Blob with " +
        "If-None-Match: *); another writer published it first")
  }

  /** One Put Blob without a condition: the new blob replaces the old one whole. */
  override def writeReplacing(target: Path, bytes: Array[Byte]): Unit =
    putReplacing(blobName(target), BlobBody.Bytes(bytes))

  private[azure] def putReplacing(name: String, body: BlobBody): Unit = {
    val r = client.send("PUT", name, headers = AzureStore.putHeaders(None), body = body, onAttempt = counted("PUT"))
    if (r.status != 201) fail("Put Blob of", name, r)
  }

  override def read(path: Path): Option[Array[Byte]] = {
    val name = blobName(path)
    val r = client.send("GET", name, onAttempt = counted("GET"))
    r.status match {
      case 200 => Some(r.body)
      case 404 if r.errorCode != "ContainerNotFound" => None
      case _ => fail("Get Blob of", name, r)
    }
  }

  override def exists(path: Path): Boolean = properties(blobName(path)).isDefined

  /** Get Blob Properties (HEAD): the blob's length, None if absent. */
  private def properties(name: String): Option[Long] = {
    val r = client.send("HEAD", name, onAttempt = counted("HEAD"))
    r.status match {
      case 200 => Some(r.header("Content-Length").map(_.toLong).getOrElse(0L))
      case 404 if r.errorCode != "ContainerNotFound" => None
      case _ => fail("Get Blob Properties of", name, r)
    }
  }

  override def delete(path: Path): Boolean = {
    val name = blobName(path)
    val r = client.send("DELETE", name, onAttempt = counted("DELETE"))
    r.status match {
      case 202 => true
      case 404 if r.errorCode != "ContainerNotFound" => false
      case _ => fail("Delete Blob of", name, r)
    }
  }

  /**
   * The blobs directly under `dir` (one List Blobs request per page of up to 5000), without
   * ABFS's directory marker blobs (metadata `hdi_isfolder=true`).
   */
  override def list(dir: Path): Seq[FileStatus] = {
    val prefix = blobName(dir).stripSuffix("/") + "/"
    val out = Seq.newBuilder[FileStatus]
    var marker: Option[String] = None
    var more = true
    while (more) {
      val query = Seq("restype" -> "container", "comp" -> "list", "prefix" -> prefix,
        "delimiter" -> "/", "include" -> "metadata") ++ marker.map("marker" -> _)
      val r = client.send("GET", "", query, onAttempt = counted("LIST"))
      if (r.status != 200) fail("List Blobs under", prefix, r)
      val page = BlobListing.parse(r.body)
      out ++= page.blobs.filterNot(_.isFolderMarker).map(b =>
        new FileStatus(b.length, false, 1, 0, b.lastModified, loc.path(b.name)))
      marker = page.nextMarker
      more = marker.isDefined
    }
    out.result()
  }

  override def openAtomic(target: Path, overwrite: Boolean): AtomicOutput =
    new AzureAtomicOutput(this, target, blobName(target), overwrite)

  override def checkReady(table: Path): Unit = verifyConditionalPut(table)
  override def checkAtomicReady(root: Path): Unit = verifyConditionalPut(root)

  private def verifyConditionalPut(table: Path): Unit = ConditionalPutProbe.verify(this, table)

  override def stagedFile(table: Path, rel: String, written: Path): Option[StagedFile] =
    properties(blobName(written)).map(StagedFile(rel, _)) // None: never opened, or deleted under the task
}

object AzureStore {

  /** `spark.txcommit.azure.verifyConditionalPut=false` skips the probe (an endpoint certified otherwise). */
  val VerifyConditionalPut = "spark.txcommit.azure.verifyConditionalPut"

  /** Blob metadata (`x-ms-meta-<name>`; a C# identifier, so no dashes) of an exclusive create's id. */
  val CreateIdHeader = "x-ms-meta-txcommit_create_id"

  def putHeaders(createId: Option[String]): Map[String, String] =
    Map("x-ms-blob-type" -> "BlockBlob", "Content-Type" -> "application/octet-stream") ++
      createId.toSeq.flatMap(id => Seq("If-None-Match" -> "*", CreateIdHeader -> id))

  /** A refusal because the blob exists (409 BlobAlreadyExists; 412 where a store answers so). */
  def exists(r: BlobResponse): Boolean =
    r.status == 412 || r.errorCode == "BlobAlreadyExists" || (r.status == 409 && r.errorCode.isEmpty)

  private[azure] val lastModified = DateTimeFormatter.RFC_1123_DATE_TIME
  private[azure] def millis(rfc1123: String): Long = ZonedDateTime.parse(rfc1123, lastModified).toInstant.toEpochMilli
}

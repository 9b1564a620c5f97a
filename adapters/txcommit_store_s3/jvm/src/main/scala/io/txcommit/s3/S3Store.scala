package io.txcommit.s3

import java.io.IOException

import scala.annotation.tailrec
import scala.jdk.CollectionConverters._

import org.apache.hadoop.fs.{FileStatus, Path}
import org.slf4j.LoggerFactory
import software.amazon.awssdk.awscore.AwsRequestOverrideConfiguration
import software.amazon.awssdk.core.exception.{AbortedException, SdkException}
import software.amazon.awssdk.core.sync.RequestBody
import software.amazon.awssdk.services.s3.model._

import io.txcommit.CommitConflictException
import io.txcommit.conf.TxCommitConf
import io.txcommit.store.{
  AdapterDeclaration,
  AtomicOutput,
  CommitStore,
  DataFileSystem,
  OpenUpload,
  StagedFile,
  StoreFailure,
  WrittenFiles
}

/**
 * The `conditional-put` store: data files are written by Spark's writers through S3A straight
 * to their final keys (an S3 object is visible only once its PUT or multipart upload
 * completes, so a reader never sees part of one); the commit record is created with
 * `PUT` + `If-None-Match: *`, which S3 answers with 412 when the key exists.
 */
class S3Store(val declaration: AdapterDeclaration, val loc: S3Bucket) extends CommitStore {
  protected val log = LoggerFactory.getLogger(getClass)
  import loc.{bucket, client, key, url}

  /**
   * Runs one request, counted as `kind`; SDK errors become IOExceptions naming the key (an
   * interrupted one an InterruptedIOException: the SDK says so with an AbortedException).
   */
  private[s3] def request[T](kind: String, k: String)(f: => T): T = {
    requests.add(kind)
    try f
    catch {
      case e: SdkException => throw StoreFailure(
          s"txcommit: $kind ${url(k)} at ${loc.endpoint} failed: ${e.getMessage}", e,
          interrupted = e.isInstanceOf[AbortedException])
    }
  }

  private[s3] def status(e: Throwable): Int = e.getCause match {
    case s: S3Exception => s.statusCode()
    case _ => -1
  }

  /**
   * Creates `k` only if absent: true if this call created it, false if it existed.
   *
   * The SDK resends a request whose answer it lost, and the resend's `If-None-Match: *` then
   * meets the object the first attempt created: 412, although this call created it. So each
   * call tags its object with a random create id (user metadata), and a 412 is a conflict only
   * when the object in place carries another id.
   */
  final def putIfAbsent(k: String, bytes: Array[Byte]): Boolean = {
    val id = S3Store.newCreateId()
    @tailrec def attempt(n: Int): Boolean = {
      val outcome =
        try {
          request("PUT", k)(client.putObject(
              PutObjectRequest.builder().bucket(bucket).key(k)
                .overrideConfiguration(S3Store.IfNoneMatchAny).metadata(S3Store.createIdMetadata(id)).build(),
              RequestBody.fromBytes(bytes)))
          Some(true)
        } catch {
          case e: IOException if status(e) == 412 => Some(createdBy(k, id))
          // 409: another conditional write of this key is in flight; retry, the winner then shows as 412.
          case e: IOException if status(e) == 409 && n < 6 => None
        }
      outcome match {
        case Some(created) => created
        case None =>
          Thread.sleep(25L << n)
          attempt(n + 1)
      }
    }
    attempt(0)
  }

  /** Whether the object at `k` is the one an exclusive create tagged `id` made (see putIfAbsent). */
  private[s3] def createdBy(k: String, id: String): Boolean = {
    val mine =
      try {
        Option(request("HEAD", k)(client.headObject(HeadObjectRequest.builder().bucket(bucket).key(k).build()))
            .metadata().get(S3Store.CreateIdKey)).contains(id)
      } catch { case e: IOException if status(e) == 404 => false }
    if (mine) log.warn(s"txcommit: ${url(k)}: the store answered a resent create with 412, but the " +
      "object in place is this create's own (its first attempt landed and the answer was lost)")
    mine
  }

  override def createExclusive(target: Path, bytes: Array[Byte]): Unit = {
    val k = key(target)
    if (!putIfAbsent(k, bytes)) throw new CommitConflictException(
      s"${url(k)} already exists, so it was not overwritten (the store refused If-None-Match: *); " +
        "another writer published it first")
  }

  override def openAtomic(target: Path, overwrite: Boolean): AtomicOutput =
    new S3AtomicOutput(this, target, overwrite, multipart = false)

  /** Checkpoints need the conditional put only (not, for s3-multipart, S3A's magic paths). */
  override def checkAtomicReady(root: Path): Unit = verifyConditionalPut(root)

  override def writeReplacing(target: Path, bytes: Array[Byte]): Unit = {
    val k = key(target)
    request("PUT", k)(client.putObject(
        PutObjectRequest.builder().bucket(bucket).key(k).build(), RequestBody.fromBytes(bytes)))
  }

  override def read(path: Path): Option[Array[Byte]] = {
    val k = key(path)
    try Some(request("GET", k)(client.getObjectAsBytes(
            GetObjectRequest.builder().bucket(bucket).key(k).build()).asByteArray()))
    catch { case e: IOException if status(e) == 404 => None }
  }

  override def exists(path: Path): Boolean = {
    val k = key(path)
    try { request("HEAD", k)(client.headObject(HeadObjectRequest.builder().bucket(bucket).key(k).build())); true }
    catch { case e: IOException if status(e) == 404 => false }
  }

  /** S3 deletes are idempotent and do not say whether the key existed. */
  override def delete(path: Path): Boolean = {
    val k = key(path)
    request("DELETE", k)(client.deleteObject(DeleteObjectRequest.builder().bucket(bucket).key(k).build()))
    true
  }

  override def list(dir: Path): Seq[FileStatus] =
    listKeys(key(dir).stripSuffix("/") + "/", delimited = true)
      .filterNot(_.key.endsWith("/"))
      .map(o => new FileStatus(o.size, false, 1, 0, o.lastModified.toEpochMilli, loc.path(o.key)))

  /** Every object under `prefix` (directly under it if `delimited`), one LIST per page. */
  protected def listKeys(prefix: String, delimited: Boolean): Seq[S3Object] = {
    val out = Seq.newBuilder[S3Object]
    var token: Option[String] = None
    var more = true
    while (more) {
      val req = ListObjectsV2Request.builder().bucket(bucket).prefix(prefix)
      if (delimited) req.delimiter("/")
      token.foreach(req.continuationToken)
      val page = request("LIST", prefix)(client.listObjectsV2(req.build()))
      out ++= page.contents().asScala
      token = Option(page.nextContinuationToken())
      more = page.isTruncated && token.isDefined
    }
    out.result()
  }

  /** Deletes the keys in batches of 1000 (one request per batch). */
  protected def deleteKeys(keys: Seq[String]): Unit =
    keys.grouped(1000).foreach { batch =>
      val ids = batch.map(k => ObjectIdentifier.builder().key(k).build()).asJava
      request("DELETE_BULK", batch.head)(client.deleteObjects(DeleteObjectsRequest.builder()
            .bucket(bucket).delete(Delete.builder().objects(ids).quiet(true).build()).build()))
    }

  protected def abort(k: String, uploadId: String): Boolean =
    try {
      request("MULTIPART_ABORT", k)(client.abortMultipartUpload(
          AbortMultipartUploadRequest.builder().bucket(bucket).key(k).uploadId(uploadId).build()))
      true
    } catch { case e: IOException if isNoSuchUpload(e) => false }

  /** Aborts an upload even from a thread Spark interrupted (a cancelled task): the SDK refuses
    * to send a request from an interrupted thread, which would leave the upload billed. */
  private[s3] def abortInterrupted(k: String, uploadId: String): Unit = {
    val interrupted = Thread.interrupted()
    try request("MULTIPART_ABORT", k)(client.abortMultipartUpload(
          AbortMultipartUploadRequest.builder().bucket(bucket).key(k).uploadId(uploadId).build()))
    finally if (interrupted) Thread.currentThread().interrupt()
  }

  protected def listUploads(prefix: String): Seq[MultipartUpload] = {
    val out = Seq.newBuilder[MultipartUpload]
    var keyMarker: Option[String] = None
    var idMarker: Option[String] = None
    var more = true
    while (more) {
      val req = ListMultipartUploadsRequest.builder().bucket(bucket).prefix(prefix)
      keyMarker.foreach(req.keyMarker); idMarker.foreach(req.uploadIdMarker)
      val page = request("MULTIPART_LIST", prefix)(client.listMultipartUploads(req.build()))
      out ++= page.uploads().asScala
      keyMarker = Option(page.nextKeyMarker()); idMarker = Option(page.nextUploadIdMarker())
      more = page.isTruncated && keyMarker.isDefined
    }
    out.result()
  }

  protected def isNoSuchUpload(e: IOException): Boolean = status(e) == 404

  override def openUploads(table: Path): Seq[OpenUpload] = {
    val prefix = key(table).stripSuffix("/") + "/"
    listUploads(prefix).map(u =>
      OpenUpload(u.key().substring(prefix.length), u.uploadId(),
        Option(u.initiated()).map(_.toEpochMilli).getOrElse(0L)))
  }

  override def abortUpload(table: Path, upload: OpenUpload): Boolean =
    abort(key(new Path(table, upload.path)), upload.uploadId)

  override def checkReady(table: Path): Unit = verifyConditionalPut(table)

  protected final def verifyConditionalPut(table: Path): Unit = ConditionalPutProbe.verify(this, table)

  /** Data files go through [[S3DataFileSystem]]: S3A without its create-time probes. */
  override def dataWritePath(table: Path, target: Path, txn: String, attempt: String): Path =
    DataFileSystem.pathFor(target, loc.jobConf, "txcommit", classOf[S3DataFileSystem])

  /**
   * The file as its writer left it: the bytes it counted, once S3 acknowledged the object (the
   * writer's close returned; `WrittenFiles`), with no request. A file the writer never closed
   * without error has no entry: then, or with `spark.txcommit.s3.checkDataFiles`, one HEAD
   * tells its size, or that it is gone.
   */
  override def stagedFile(table: Path, rel: String, written: Path): Option[StagedFile] =
    WrittenFiles.peek(written).filterNot(_ => checkDataFiles) match {
      case Some(w) => Some(StagedFile(rel, w.size))
      case None =>
        val k = key(DataFileSystem.innerPath(written))
        try Some(StagedFile(rel,
              request("HEAD", k)(client.headObject(
                  HeadObjectRequest.builder().bucket(bucket).key(k).build())).contentLength()))
        catch { case e: IOException if status(e) == 404 => None } // never opened, or deleted under the task
    }

  private def checkDataFiles: Boolean =
    TxCommitConf.bool(loc.jobConf, TxCommitConf.CheckDataFiles, default = false)
}

object S3Store {

  /** `If-None-Match: *` as a plain request header rather than the SDK's typed `ifNoneMatch`:
    * the same request on the wire, and it works with every Spark line's SDK (the 2.24.6 that
    * Spark 4.0's Hadoop 3.4.1 ships predates the typed setter). The readiness probe
    * (ConditionalPutProbe) proves on each store that a second create is refused. */
  val IfNoneMatchAny: AwsRequestOverrideConfiguration =
    AwsRequestOverrideConfiguration.builder().putHeader("If-None-Match", "*").build()

  /** User metadata key (sent as `x-amz-meta-txcommit-create-id`) of an exclusive create's id. */
  val CreateIdKey = "txcommit-create-id"
  def newCreateId(): String = java.util.UUID.randomUUID().toString
  def createIdMetadata(id: String): java.util.Map[String, String] = java.util.Collections.singletonMap(CreateIdKey, id)
}

package io.txcommit.s3

import java.io.IOException
import java.util.concurrent.Executors

import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration.Duration
import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import org.apache.hadoop.fs.Path
import software.amazon.awssdk.services.s3.model._

import io.txcommit.log.DataFileName
import io.txcommit.store.{AdapterDeclaration, AtomicOutput, DataFileSystem, StagedFile, WrittenFiles}

/**
 * The `multipart-complete` store. Tasks write each data file as a multipart upload aimed at
 * its final key and left open ([[S3UploadFileSystem]], [[S3PendingUpload]]): the upload's id
 * and parts travel in the task's manifest, so no listing, of any tool, shows in-flight data,
 * and nothing but the upload is written. The job commit completes the uploads of the committed
 * attempts and only then creates the record; everything else of the transaction (losing
 * attempts, attempts of dead executors, aborted jobs) has its upload aborted, so nothing stays
 * billed.
 */
final class S3MultipartStore(declaration: AdapterDeclaration, loc: S3Bucket)
  extends S3Store(declaration, loc) {
  import loc.{bucket, client, key}
  private val mapper = new ObjectMapper()

  /** Where tasks of earlier versions (S3A magic paths) left markers and upload summaries. */
  private def stagingDir(table: Path, txn: String) = new Path(table, s"${S3MultipartStore.MagicPrefix}$txn")

  /** Always a multipart upload, completed on close (with If-None-Match: * unless overwriting). */
  override def openAtomic(target: Path, overwrite: Boolean): AtomicOutput =
    new S3AtomicOutput(this, target, overwrite, multipart = true)

  override def dataWritePath(table: Path, target: Path, txn: String, attempt: String): Path =
    DataFileSystem.pathFor(target, loc.jobConf, "txcommit-upload", classOf[S3UploadFileSystem])

  /** The upload its writer left open and named on close (`WrittenFiles`); a file whose writer
    * did not close it without error has no upload to complete. */
  override def stagedFile(table: Path, rel: String, written: Path): Option[StagedFile] =
    WrittenFiles.peek(written).flatMap(w => w.pending.map(p => StagedFile(rel, w.size, Some(p))))

  private case class Upload(key: String, uploadId: String, etags: Seq[String])
  private def upload(f: StagedFile): Upload = {
    val n = mapper.readTree(f.pending.getOrElse(throw new IOException(
          s"txcommit: ${f.path} has no pending upload to publish")))
    Upload(n.get("key").asText(), n.get("uploadId").asText(), n.get("etags").elements().asScala.map(_.asText()).toSeq)
  }

  override def publishData(table: Path, files: Seq[StagedFile]): Unit =
    inParallel(files) { f =>
      val u = upload(f)
      val parts = u.etags.zipWithIndex.map { case (e, i) => CompletedPart.builder().partNumber(i + 1).eTag(e).build() }
      try request("MULTIPART_COMPLETE", u.key)(client.completeMultipartUpload(
            CompleteMultipartUploadRequest.builder().bucket(bucket).key(u.key).uploadId(u.uploadId)
              .multipartUpload(CompletedMultipartUpload.builder().parts(parts.asJava).build()).build()))
      catch {
        // Completed by an earlier attempt of this commit: the object is there with its size.
        case e: IOException if isNoSuchUpload(e) && sizeOf(u.key).contains(f.size) => ()
        case e: IOException if isNoSuchUpload(e) =>
          throw new IOException(
            s"txcommit: the upload of ${loc.url(u.key)} no longer exists (aborted by a lifecycle " +
              "rule, VACUUM or another job?); the transaction cannot commit", e)
      }
    }

  /** Aborts each file's upload; an upload already gone was completed by this transaction's
    * `publishData` (a replacing commit that then lost), so its object is deleted: no record
    * names it, and it would otherwise stay in every raw listing until VACUUM. */
  override def discardData(table: Path, files: Seq[StagedFile]): Int = {
    val (aborted, gone) = files.filter(_.pending.isDefined).map(upload).partition(u => abort(u.key, u.uploadId))
    val completed = gone.map(_.key).filter(k => sizeOf(k).isDefined)
    deleteKeys(completed)
    if (completed.nonEmpty)
      log.info(s"txcommit: deleted ${completed.size} published data file(s) of an aborted transaction")
    aborted.size + completed.size
  }

  /**
   * Every open upload of `txn` goes: the committed files' uploads were completed before the
   * record was created, so an open upload of a committed path is a second one of it (a start
   * whose answer was lost and that S3A's client resent), never the one committed.
   */
  override def cleanupStaging(table: Path, txn: String, committed: Set[String]): Int = {
    val prefix = key(table).stripSuffix("/") + "/"
    val orphans = listUploads(prefix).filter { u =>
      val rel = u.key().substring(prefix.length)
      DataFileName.txnOf(rel.substring(rel.lastIndexOf('/') + 1)).contains(txn)
    }
    val aborted = orphans.count(u => abort(u.key(), u.uploadId()))
    val markers = listKeys(key(stagingDir(table, txn)) + "/", delimited = false).map(_.key())
    deleteKeys(markers)
    if (aborted > 0) log.info(s"txcommit: txn $txn: aborted $aborted upload(s) of failed or lost attempts")
    aborted
  }

  private def sizeOf(k: String): Option[Long] =
    try Some(request("HEAD", k)(
          client.headObject(HeadObjectRequest.builder().bucket(bucket).key(k).build())).contentLength())
    catch {
      case e: IOException
          if e.getCause.isInstanceOf[S3Exception] && e.getCause.asInstanceOf[S3Exception].statusCode() == 404 => None
    }

  private def inParallel(files: Seq[StagedFile])(f: StagedFile => Unit): Unit =
    if (files.size <= 1) files.foreach(f)
    else {
      val pool = Executors.newFixedThreadPool(math.min(S3MultipartStore.RequestThreads, files.size))
      implicit val ec: ExecutionContext = ExecutionContext.fromExecutor(pool)
      try Await.result(Future.traverse(files)(x => Future(f(x))), Duration.Inf)
      finally pool.shutdown()
    }
}

object S3MultipartStore {

  /** What publishes one data file: its final key, its upload, and its parts' etags in order. */
  def pendingJson(key: String, uploadId: String, etags: Seq[String]): String = {
    val mapper = new ObjectMapper()
    val n = mapper.createObjectNode()
    n.put("key", key).put("uploadId", uploadId)
    val arr = n.putArray("etags")
    etags.foreach(arr.add)
    mapper.writeValueAsString(n)
  }

  /** Completions (and aborts) in flight at once at job commit: each waits on S3 for tens of
    * milliseconds and costs the driver almost nothing, and S3A's pool holds hundreds of
    * connections (`fs.s3a.connection.maximum`, 500 by default). */
  val RequestThreads = 64
  val MagicPrefix = "__magic_job-"
}

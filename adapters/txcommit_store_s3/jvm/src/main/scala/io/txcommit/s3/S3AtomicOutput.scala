package io.txcommit.s3

import java.io.{ByteArrayOutputStream, IOException}

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.hadoop.fs.Path
import software.amazon.awssdk.core.sync.RequestBody
import software.amazon.awssdk.services.s3.model._

import io.txcommit.store.{AtomicFileExistsException, AtomicOutput, Uninterruptibly}

/**
 * An S3 object that becomes visible only when this stream is closed (CommitStore point 8).
 *
 * Bytes are buffered up to one part ([[S3AtomicOutput.PartSize]]); a file that outgrows it is
 * sent as a multipart upload, one part at a time as it fills, so memory stays bounded by one
 * part whatever the file's size. An S3 object appears only when its PUT or its multipart
 * upload completes, so a reader never sees part of it. Without `overwrite` the final request
 * (the PUT, or CompleteMultipartUpload) carries `If-None-Match: *`: S3 answers 412 if the key
 * exists, and the loser's upload is aborted. `multipart` forces a multipart upload even for a
 * small file (the `multipart-complete` primitive).
 */
final class S3AtomicOutput(store: S3Store, target: Path, overwrite: Boolean, multipart: Boolean)
  extends AtomicOutput(target) {
  import store.loc.{bucket, client, key}
  private val k = key(target)
  private val buffer = new ByteArrayOutputStream()
  private var uploadId: Option[String] = None
  private val etags = Seq.newBuilder[String]
  private var parts = 0
  private var done = false

  override def write(b: Int): Unit = { buffer.write(b); if (buffer.size >= S3AtomicOutput.PartSize) flushPart() }

  override def write(b: Array[Byte], off: Int, len: Int): Unit = S3AtomicOutput.fill(buffer, b, off, len)(flushPart())

  /** Tags the object of an exclusive upload, so a resent complete recognises it (S3Store.putIfAbsent). */
  private val createId = S3Store.newCreateId()

  private def upload(): String = uploadId.getOrElse {
    val init = CreateMultipartUploadRequest.builder().bucket(bucket).key(k)
    if (!overwrite) init.metadata(S3Store.createIdMetadata(createId))
    // An interrupt must not lose the answer: the upload would exist with no id to abort it by.
    val id = store.request("MULTIPART_INITIATE", k)(
      Uninterruptibly(s"starting the upload of ${store.loc.url(k)}")(client.createMultipartUpload(init.build())))
      .uploadId()
    uploadId = Some(id)
    id
  }

  private def flushPart(): Unit = {
    val id = upload()
    parts += 1
    val bytes = buffer.toByteArray
    buffer.reset()
    etags += store.request("MULTIPART_PART", k)(client.uploadPart(
        UploadPartRequest.builder()
          .bucket(bucket).key(k).uploadId(id).partNumber(parts).contentLength(bytes.length.toLong).build(),
        RequestBody.fromBytes(bytes))).eTag()
  }

  override def close(): Unit = synchronized {
    if (!done) {
      done = true
      try publish()
      catch { case e: Throwable => abortQuietly(); throw e }
    }
  }

  private def publish(): Unit =
    if (uploadId.isEmpty && !multipart) {
      val bytes = buffer.toByteArray
      if (overwrite) {
        store.request("PUT", k)(client.putObject(
            PutObjectRequest.builder().bucket(bucket).key(k).build(), RequestBody.fromBytes(bytes)))
      } else if (!store.putIfAbsent(k, bytes)) {
        throw new AtomicFileExistsException(target, "the store refused If-None-Match: *")
      }
    } else {
      if (buffer.size > 0 || parts == 0) flushPart()
      val id = upload()
      val completed = etags.result().zipWithIndex.map { case (e, i) =>
        CompletedPart.builder().partNumber(i + 1).eTag(e).build()
      }
      val req = CompleteMultipartUploadRequest.builder().bucket(bucket).key(k).uploadId(id)
        .multipartUpload(CompletedMultipartUpload.builder().parts(completed.asJava).build())
      if (!overwrite) req.overrideConfiguration(S3Store.IfNoneMatchAny)
      complete(req.build(), attempt = 0)
    }

  /**
   * 409: another conditional write of this key is in flight; retry, the winner then shows as 412.
   * A 412 (or, for a resent complete, 404: the upload is gone) is this stream's own object when
   * the answer to an earlier attempt was lost: the object then carries this stream's create id.
   */
  @scala.annotation.tailrec
  private def complete(req: CompleteMultipartUploadRequest, attempt: Int): Unit = {
    val retry =
      try { store.request("MULTIPART_COMPLETE", k)(client.completeMultipartUpload(req)); false }
      catch {
        case e: IOException if !overwrite && Set(404, 412)(store.status(e)) && store.createdBy(k, createId) =>
          uploadId = None // completed: nothing left to abort
          false
        case e: IOException if store.status(e) == 412 =>
          throw new AtomicFileExistsException(target, "the store refused If-None-Match: * on completing the upload")
        case e: IOException if store.status(e) == 409 && attempt < 6 => true
      }
    if (retry) { Thread.sleep(25L << attempt); complete(req, attempt + 1) }
  }

  override def cancel(): Unit = synchronized {
    if (!done) {
      done = true
      abortQuietly()
    }
  }

  /** Nothing stays billed: an upload this stream started is aborted (a completed one is not there). */
  private def abortQuietly(): Unit = uploadId.foreach { id =>
    uploadId = None
    try store.abortInterrupted(k, id)
    catch { case NonFatal(_) => () } // already completed or aborted; VACUUM reports any leftover
  }
}

object S3AtomicOutput {

  /** One part (S3's minimum part size is 5 MiB): the most a stream ever holds in memory. */
  val PartSize: Int = 8 * 1024 * 1024

  /** Adds `len` bytes of `b` to `buffer`, calling `flush` each time it holds a whole part. */
  def fill(buffer: java.io.ByteArrayOutputStream, b: Array[Byte], off: Int, len: Int)(flush: => Unit): Unit = {
    var at = off
    val end = off + len
    while (at < end) {
      val n = math.min(end - at, PartSize - buffer.size)
      buffer.write(b, at, n)
      at += n
      if (buffer.size >= PartSize) flush
    }
  }
}

package io.txcommit.s3

import java.io.{ByteArrayOutputStream, OutputStream}

import scala.collection.mutable.ArrayBuffer
import scala.util.control.NonFatal

import org.apache.hadoop.fs.{Abortable, Path}
import software.amazon.awssdk.core.sync.RequestBody

import io.txcommit.store.{DataFileSystem, Uninterruptibly}

/**
 * One data file of the `multipart-complete` adapter: a multipart upload aimed at the file's
 * final key, sent one part at a time as the writer fills it, and left open. Closing the
 * stream sends the last part; [[pending]] then names the upload and its parts, which the task's
 * manifest carries to the job commit, which completes it (`S3MultipartStore.publishData`).
 * Until then no listing shows the file. Memory stays bounded by one part
 * ([[S3AtomicOutput.PartSize]]); an aborted or failed stream aborts its upload.
 *
 * The upload is started with S3A's own request (its encryption, ACL and storage class
 * settings; [[S3Requests]]), through S3A's client.
 */
final class S3PendingUpload(store: S3Store, target: Path)
  extends OutputStream with Abortable with DataFileSystem.Staged {
  import store.loc.{client, key}
  private val k = key(target)
  private val buffer = new ByteArrayOutputStream()
  private var uploadId: Option[String] = None
  private val etags = ArrayBuffer.empty[String]
  private var done = false
  private var result: Option[String] = None

  override def write(b: Int): Unit = {
    buffer.write(b); if (buffer.size >= S3AtomicOutput.PartSize) flushPart(last = false)
  }

  override def write(b: Array[Byte], off: Int, len: Int): Unit =
    S3AtomicOutput.fill(buffer, b, off, len)(flushPart(last = false))

  private def upload(): String = uploadId.getOrElse {
    // An interrupt must not lose the answer: the upload would exist with no id to abort it by.
    val id = store.request("MULTIPART_INITIATE", k)(Uninterruptibly(s"starting the upload of ${store.loc.url(k)}")(
        client.createMultipartUpload(S3Requests.initiate(store.loc, k)))).uploadId()
    uploadId = Some(id)
    id
  }

  private def flushPart(last: Boolean): Unit = {
    val id = upload()
    val bytes = buffer.toByteArray
    buffer.reset()
    val n = etags.size + 1
    etags += store.request("MULTIPART_PART", k)(client.uploadPart(
        S3Requests.part(store.loc, k, id, n, last, bytes.length.toLong), RequestBody.fromBytes(bytes))).eTag()
  }

  override def close(): Unit = synchronized {
    if (!done) {
      done = true
      try {
        if (buffer.size > 0 || etags.isEmpty) flushPart(last = true)
        result = Some(S3MultipartStore.pendingJson(k, upload(), etags.toSeq))
      } catch { case e: Throwable => abortQuietly(); throw e }
    }
  }

  override def pending: String = result.getOrElse(throw new IllegalStateException(
      s"txcommit: the upload of ${store.loc.url(k)} was not closed"))

  override def abort(): Abortable.AbortableResult = synchronized {
    val wasDone = done
    done = true
    result = None
    abortQuietly()
    new Abortable.AbortableResult {
      override def alreadyClosed(): Boolean = wasDone
      override def anyCleanupException(): java.io.IOException = null
    }
  }

  /** Nothing stays billed: the upload this stream started is aborted. */
  private def abortQuietly(): Unit = uploadId.foreach { id =>
    uploadId = None
    try store.abortInterrupted(k, id)
    catch { case NonFatal(_) => () } // already aborted; VACUUM reports any leftover upload
  }
}

package io.txcommit.gcs

import java.io.{ByteArrayInputStream, FileNotFoundException, IOException, InputStream}
import java.nio.ByteBuffer
import java.nio.channels.{Channels, WritableByteChannel}
import java.nio.charset.StandardCharsets.UTF_8

import scala.annotation.tailrec
import scala.jdk.CollectionConverters._

import com.google.cloud.hadoop.repackaged.gcs.com.google.api.client.http.HttpResponseException
import com.google.cloud.hadoop.repackaged.gcs.com.google.cloud.hadoop.util.AbstractGoogleAsyncWriteChannel
import com.google.cloud.hadoop.repackaged.gcs.com.google.cloud.hadoop.gcsio.{
  CreateObjectOptions,
  ListObjectOptions,
  StorageResourceId
}
import org.apache.commons.io.IOUtils
import org.apache.hadoop.fs.{FileStatus, Path}
import org.slf4j.LoggerFactory

import io.txcommit.CommitConflictException
import io.txcommit.store.{AdapterDeclaration, AtomicOutput, CommitStore, StagedFile, StoreFailure, Uninterruptibly}

/**
 * The `conditional-put` store on Google Cloud Storage. Spark's writers write data files
 * through the `gs` connector straight to their final names (a GCS object appears only when its
 * upload completes, so a reader never sees part of one). The commit record, and every other
 * exclusive create (`replace/` records, `pending/` markers, streaming checkpoint files, the
 * fence), is ONE `uploadType=multipart` upload with `ifGenerationMatch=0`, which GCS refuses
 * with 412 when a live object has the name ([[GcsBucket.PublishSettings]] says why that path).
 */
final class GcsStore(val declaration: AdapterDeclaration, val loc: GcsBucket) extends CommitStore {
  private val log = LoggerFactory.getLogger(getClass)
  import loc.{bucket, url}
  private def gcs = loc.publisher

  /** Runs one request, counted as `kind`; errors become IOExceptions naming the object (the cause is kept for its status). */
  private[gcs] def request[T](kind: String, name: String)(f: => T): T = {
    requests.add(kind)
    try f
    catch {
      case e: FileNotFoundException => throw e
      case e: IOException => throw StoreFailure(
          s"txcommit: $kind ${url(name)} at ${loc.endpoint} failed: ${e.getMessage}", e)
    }
  }

  /** The HTTP status in `e`'s causes, -1 when the request got no answer. */
  private[gcs] def status(e: Throwable): Int =
    Iterator.iterate(e)(_.getCause).takeWhile(_ != null).take(12).collectFirst {
      case h: HttpResponseException => h.getStatusCode
    }.getOrElse(-1)

  /**
   * One upload of `name` in one request. Exclusive: `ifGenerationMatch=0` (an explicit generation
   * 0, so the connector sends no metadata lookup first) and the create id in the object's
   * metadata. Otherwise the connector looks up the live generation and replaces exactly it.
   *
   * The connector streams the bytes into its request through a pipe and completes the upload
   * with whatever the pipe held when the pipe closes. An interrupt of the writing thread closes
   * it (`ClosedByInterruptException`), which would publish a truncated object, so the bytes are
   * written from a thread that nobody interrupts ([[Uninterruptibly]]): an interrupted caller
   * sends nothing, and one interrupted while its upload runs waits for it to end (whole, or
   * refused).
   */
  private def upload(name: String, source: InputStream, exclusive: Boolean, createId: Option[String]): Unit = {
    val rid = if (exclusive) new StorageResourceId(bucket, name, 0L) else new StorageResourceId(bucket, name)
    val base = if (exclusive) CreateObjectOptions.DEFAULT_NO_OVERWRITE else CreateObjectOptions.DEFAULT_OVERWRITE
    val options = base.toBuilder
      .setContentType("application/octet-stream")
      .setMetadata(createId.map(id => Map(GcsStore.CreateIdKey -> id.getBytes(UTF_8)).asJava)
          .getOrElse(java.util.Collections.emptyMap[String, Array[Byte]]()))
      .build()
    request("PUT", name)(Uninterruptibly(s"the upload of ${url(name)}")(send(rid, options, source)))
  }

  /** Runs on an upload thread: the source's bytes into one upload, completed only if all were read. */
  private def send(rid: StorageResourceId, options: CreateObjectOptions, source: InputStream): Unit = {
    val channel = gcs.create(rid, options)
    val in = Channels.newChannel(source)
    val buf = ByteBuffer.allocate(1 << 16)
    var sourceFailed = false
    def fill(): Int =
      try in.read(buf)
      catch {
        case e: IOException => // never close the channel here: that completes the upload
          sourceFailed = true; GcsStore.abandon(channel); throw e
      }
    try {
      while (fill() >= 0) { buf.flip(); while (buf.hasRemaining) channel.write(buf); buf.clear() }
    } catch {
      // The upload failed on the connector's thread (a 412 answered early, say); its close
      // reports why, which a write into the broken pipe does not.
      case e: IOException if !sourceFailed => channel.close(); throw e
    }
    channel.close()
  }

  /**
   * Creates `name` only if absent: true if this call created it, false if it existed.
   *
   * A create whose answer was lost (a reset connection, a timeout, a 5xx) is sent again; the
   * precondition makes that safe, and the resend then meets the object the first attempt made:
   * 412, although this call created it. So each call tags its object with a random create id
   * (object metadata) and a 412 is a conflict only when the object in place carries another id
   * (protocol I17).
   */
  def createIfAbsent(name: String, bytes: Array[Byte]): Boolean =
    createIfAbsent(name, () => new ByteArrayInputStream(bytes))

  def createIfAbsent(name: String, source: () => InputStream): Boolean = {
    val id = java.util.UUID.randomUUID().toString
    @tailrec def attempt(n: Int): Boolean = {
      val outcome =
        try {
          val in = source();
          try upload(name, in, exclusive = true, Some(id))
          finally in.close(); Some(true)
        } catch {
          case e: IOException if status(e) == 412 => Some(createdBy(name, id))
          case e: IOException
              if GcsStore.retryable(status(e)) && n < GcsStore.Attempts - 1 &&
                !Thread.currentThread().isInterrupted =>
            log.warn(s"txcommit: ${url(name)}: exclusive create failed (${e.getMessage}); sending it again")
            None
        }
      outcome match {
        case Some(created) => created
        case None => Thread.sleep(100L << n); attempt(n + 1)
      }
    }
    attempt(0)
  }

  /** Whether the object at `name` is the one an exclusive create tagged `id` made (see createIfAbsent). */
  private[gcs] def createdBy(name: String, id: String): Boolean = {
    val info = request("HEAD", name)(gcs.getItemInfo(new StorageResourceId(bucket, name)))
    val mine = info.exists && Option(info.getMetadata).flatMap(m => Option(m.get(GcsStore.CreateIdKey)))
      .exists(v => new String(v, UTF_8) == id)
    if (mine) log.warn(s"txcommit: ${url(name)}: the store answered a resent create with 412, but the " +
      "object in place is this create's own (its first attempt landed and the answer was lost)")
    mine
  }

  override def createExclusive(target: Path, bytes: Array[Byte]): Unit = {
    val name = loc.name(target)
    if (!createIfAbsent(name, bytes)) throw new CommitConflictException(
      s"${url(name)} already exists, so it was not overwritten (the store refused ifGenerationMatch=0); " +
        "another writer published it first")
  }

  /** Replaces the live generation; a replacement racing this one (412) is retried, the last one wins. */
  override def writeReplacing(target: Path, bytes: Array[Byte]): Unit = {
    val name = loc.name(target)
    @tailrec def attempt(n: Int): Unit = {
      val done =
        try { upload(name, new ByteArrayInputStream(bytes), exclusive = false, None); true }
        catch { case e: IOException if status(e) == 412 && n < GcsStore.Attempts - 1 => false }
      if (!done) attempt(n + 1)
    }
    attempt(0)
  }

  override def openAtomic(target: Path, overwrite: Boolean): AtomicOutput = new GcsAtomicOutput(this, target, overwrite)

  private[gcs] def replace(name: String, source: () => InputStream): Unit = {
    val in = source()
    try upload(name, in, exclusive = false, None)
    finally in.close()
  }

  override def read(path: Path): Option[Array[Byte]] = {
    val name = loc.name(path)
    try Some(request("GET", name) {
        val ch = gcs.open(new StorageResourceId(bucket, name))
        try IOUtils.toByteArray(Channels.newInputStream(ch))
        finally ch.close()
      })
    catch { case _: FileNotFoundException => None }
  }

  override def exists(path: Path): Boolean = {
    val name = loc.name(path)
    request("HEAD", name)(gcs.getItemInfo(new StorageResourceId(bucket, name))).exists
  }

  /** The connector deletes the live generation (after looking it up) and ignores a missing object. */
  override def delete(path: Path): Boolean = {
    val name = loc.name(path)
    request("DELETE", name)(gcs.deleteObjects(java.util.List.of(new StorageResourceId(bucket, name))))
    true
  }

  override def list(dir: Path): Seq[FileStatus] = {
    val prefix = loc.name(dir).stripSuffix("/") + "/"
    request("LIST", prefix)(gcs.listObjectInfo(bucket, prefix, ListObjectOptions.DEFAULT)).asScala.toSeq
      .filter(i => i.exists && !i.isDirectory && !i.getObjectName.endsWith("/"))
      .map(i => new FileStatus(i.getSize, false, 1, 0, i.getModificationTime, loc.path(i.getObjectName)))
  }

  override def stagedFile(table: Path, rel: String, written: Path): Option[StagedFile] = {
    val name = loc.name(written)
    val info = request("HEAD", name)(gcs.getItemInfo(new StorageResourceId(bucket, name)))
    if (info.exists) Some(StagedFile(rel, info.getSize)) else None // never opened, or deleted under the task
  }

  override def checkReady(table: Path): Unit = verifyGenerationMatch(table)

  override def checkAtomicReady(root: Path): Unit = verifyGenerationMatch(root)

  private def verifyGenerationMatch(table: Path): Unit = GenerationMatchProbe.verify(this, table)
}

object GcsStore {

  /** Object metadata key holding an exclusive create's id (the connector stores its value base64-encoded). */
  val CreateIdKey = "txcommit-create-id"

  /** Prove, before the first commit to a bucket, that the endpoint refuses a second exclusive create. */
  val VerifyGenerationMatch = "spark.txcommit.gcs.verifyGenerationMatch"

  /** Sends of one exclusive create or one replacement, at most. */
  val Attempts = 4

  private val uploadOperation = {
    val f = classOf[AbstractGoogleAsyncWriteChannel[_]].getDeclaredField("uploadOperation")
    f.setAccessible(true)
    f
  }

  /**
   * Cancels the request of an upload whose source failed, so that it ends without completing:
   * the request's body stops before its multipart end, which the store refuses.
   */
  private[gcs] def abandon(channel: WritableByteChannel): Unit = channel match {
    case c: AbstractGoogleAsyncWriteChannel[_] =>
      Option(uploadOperation.get(c)).foreach(_.asInstanceOf[java.util.concurrent.Future[_]].cancel(true))
    case other => throw new IllegalStateException(
        s"txcommit: the gcs connector returned a ${other.getClass.getName}, which cannot be abandoned")
  }

  /** No answer (-1), throttling or a server error: the request may be sent again. */
  private[gcs] def retryable(status: Int): Boolean = status == -1 || status == 408 || status == 429 || status >= 500
}

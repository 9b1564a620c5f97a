package io.txcommit.azure

import java.io.{ByteArrayOutputStream, OutputStream}
import java.nio.file.{Files, StandardOpenOption}

import org.apache.hadoop.fs.Path

import io.txcommit.store.{AtomicFileExistsException, AtomicOutput}

/**
 * A blob that becomes visible only when this stream is closed (CommitStore point 8): the bytes
 * are kept until `close`, which sends them as ONE Put Blob (with `If-None-Match: *` unless
 * `overwrite`), so a reader sees no blob or the whole of it and a loser leaves nothing.
 *
 * Up to [[AzureAtomicOutput.InMemory]] bytes stay in memory; a larger file spills to a local
 * temporary file streamed by the request, so memory stays bounded whatever the size. Unlike
 * staged blocks (Put Block), nothing is stored or billed before `close`, and `cancel` only
 * deletes the local file.
 */
final class AzureAtomicOutput(store: AzureStore, target: Path, name: String, overwrite: Boolean)
  extends AtomicOutput(target) {
  private val memory = new ByteArrayOutputStream()
  private var spill: Option[(java.nio.file.Path, OutputStream)] = None
  private var done = false

  private def sink(extra: Int): OutputStream = spill.map(_._2).getOrElse {
    if (memory.size + extra <= AzureAtomicOutput.InMemory) memory
    else {
      val file = Files.createTempFile("txcommit-azure-", ".part")
      val out = new java.io.BufferedOutputStream(Files.newOutputStream(file, StandardOpenOption.WRITE))
      memory.writeTo(out)
      memory.reset()
      spill = Some(file -> out)
      out
    }
  }

  override def write(b: Int): Unit = sink(1).write(b)
  override def write(b: Array[Byte], off: Int, len: Int): Unit = sink(len).write(b, off, len)

  override def close(): Unit = synchronized {
    if (!done) {
      done = true
      try {
        val body = spill match {
          case Some((file, out)) => out.close(); BlobBody.File(file)
          case None => BlobBody.Bytes(memory.toByteArray)
        }
        if (overwrite) store.putReplacing(name, body)
        else if (!store.putIfAbsent(name, body))
          throw new AtomicFileExistsException(target, "Azure refused Put Blob with If-None-Match: *")
      } finally discardSpill()
    }
  }

  override def cancel(): Unit = synchronized {
    if (!done) {
      done = true
      discardSpill()
    }
  }

  private def discardSpill(): Unit = spill.foreach { case (file, out) =>
    spill = None
    try out.close()
    finally Files.deleteIfExists(file)
  }
}

object AzureAtomicOutput {

  /** The most a stream holds in memory before it spills to a local temporary file. */
  val InMemory: Int = 8 * 1024 * 1024
}

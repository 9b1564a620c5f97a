package io.txcommit.gcs

import java.io.{BufferedOutputStream, FileInputStream, OutputStream}
import java.nio.file.Files

import org.apache.hadoop.fs.Path

import io.txcommit.store.{AtomicFileExistsException, AtomicOutput}

/**
 * A GCS object that becomes visible only when this stream is closed (CommitStore point 8).
 *
 * The bytes go to a local temporary file as they are written (memory stays bounded whatever the
 * file's size), and [[close]] sends them in ONE upload: exclusive (`ifGenerationMatch=0`, see
 * [[GcsStore.createIfAbsent]]) unless `overwrite`. A one-request upload cannot be abandoned half
 * way through the connector (its channel completes whatever it was given when closed), so the
 * upload starts only once the whole file is known: [[cancel]] then leaves nothing on the store,
 * visible or billed. A GCS object appears only when its upload completes, so a reader never
 * sees part of it.
 */
final class GcsAtomicOutput(store: GcsStore, target: Path, overwrite: Boolean) extends AtomicOutput(target) {
  private val name = store.loc.name(target)
  private val spool = Files.createTempFile("txcommit-gcs-", ".part")
  private val out: OutputStream = new BufferedOutputStream(Files.newOutputStream(spool), 1 << 16)
  private var done = false

  override def write(b: Int): Unit = out.write(b)
  override def write(b: Array[Byte], off: Int, len: Int): Unit = out.write(b, off, len)
  override def flush(): Unit = out.flush()

  override def close(): Unit = synchronized {
    if (!done) {
      done = true
      try {
        out.close()
        val source = () => new FileInputStream(spool.toFile)
        if (overwrite) store.replace(name, source)
        else if (!store.createIfAbsent(name, source)) {
          throw new AtomicFileExistsException(target, "the store refused ifGenerationMatch=0")
        }
      } finally Files.deleteIfExists(spool)
    }
  }

  override def cancel(): Unit = synchronized {
    if (!done) {
      done = true
      try out.close()
      finally Files.deleteIfExists(spool)
    }
  }
}

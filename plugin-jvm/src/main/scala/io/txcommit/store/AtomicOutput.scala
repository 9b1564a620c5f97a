package io.txcommit.store

import java.io.OutputStream

import org.apache.hadoop.fs.Path

/**
 * A file being written that becomes visible, whole, only when [[close]] returns (see
 * [[CommitStore.openAtomic]]). Before that no reader sees any part of it; [[cancel]] makes sure
 * nothing of it is ever visible or stays billed. Both are idempotent and a `cancel` after a
 * `close` (successful or not) does nothing, so callers can always cancel in a `finally`.
 *
 * Written bytes stream to the store as they come (a temporary file, or parts of a multipart
 * upload); no implementation may hold a whole file in memory.
 */
abstract class AtomicOutput(val target: Path) extends OutputStream {

  /** Abandons the write: nothing becomes visible, temporary data and uploads are removed. */
  def cancel(): Unit
}

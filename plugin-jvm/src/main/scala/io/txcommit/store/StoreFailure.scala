package io.txcommit.store

import java.io.{IOException, InterruptedIOException}
import java.nio.channels.ClosedByInterruptException

/**
 * The IOException an adapter throws for a request that failed, naming what failed.
 *
 * A request cut short because its thread was interrupted (a streaming query being stopped, a
 * job being cancelled) becomes an `InterruptedIOException`: Spark takes that for the stop it
 * asked for, where any other IOException ends a query "with error" and hides the stop.
 */
object StoreFailure {
  def apply(message: String, cause: Throwable, interrupted: Boolean = false): IOException = {
    val e =
      if (interrupted || StoreFailure.interrupted(cause)) new InterruptedIOException(message)
      else new IOException(message)
    e.initCause(cause)
    e
  }

  /** Whether `e` or one of its causes says that its thread was interrupted. */
  def interrupted(e: Throwable): Boolean =
    Iterator.iterate(e)(_.getCause).takeWhile(_ != null).take(12).exists {
      case _: InterruptedException | _: InterruptedIOException | _: ClosedByInterruptException => true
      case _ => false
    }
}

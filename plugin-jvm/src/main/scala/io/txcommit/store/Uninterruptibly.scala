package io.txcommit.store

import java.io.InterruptedIOException
import java.util.concurrent.{ExecutionException, Executors, ThreadFactory}
import java.util.concurrent.atomic.AtomicInteger

/**
 * A store request whose outcome an interrupt must not cut in half. Spark interrupts a stopped
 * query's or a cancelled task's thread, and a client library then gives up at its next check:
 * S3's SDK drops the answer to a request the store already carried out (a multipart upload it
 * started and nobody will abort), the GCS connector closes the pipe its upload reads from
 * (which completes the upload with the bytes it holds so far). Such a request runs on a thread
 * of its own that nobody interrupts, and the caller waits for its outcome through interrupts,
 * keeping its interrupt flag for its next interruptible call. A caller already interrupted
 * sends nothing.
 */
object Uninterruptibly {

  /** Idle threads end after a minute (a cached pool). */
  private val threads = Executors.newCachedThreadPool(new ThreadFactory {
    private val count = new AtomicInteger()
    def newThread(r: Runnable): Thread = {
      val t = new Thread(r, s"txcommit-store-request-${count.incrementAndGet()}")
      t.setDaemon(true)
      t
    }
  })

  /** Runs `request` to its end, or throws InterruptedIOException naming `what` if the caller is interrupted before it starts. */
  def apply[T](what: String)(request: => T): T = {
    if (Thread.currentThread().isInterrupted)
      throw new InterruptedIOException(s"$what was not sent: its thread was interrupted before it began")
    val task = threads.submit[T](() => request)
    var interrupted = false
    var outcome: Option[Either[Throwable, T]] = None
    try {
      while (outcome.isEmpty) {
        try outcome = Some(Right(task.get()))
        catch {
          case _: InterruptedException => interrupted = true
          case e: ExecutionException => outcome = Some(Left(e.getCause))
        }
      }
    } finally if (interrupted) Thread.currentThread().interrupt()
    outcome.get.fold(e => throw e, identity)
  }
}

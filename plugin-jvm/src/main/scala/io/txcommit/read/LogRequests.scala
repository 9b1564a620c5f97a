package io.txcommit.read

import java.util.concurrent.{ExecutionException, Executors, ThreadFactory, ThreadPoolExecutor}
import java.util.concurrent.atomic.AtomicInteger

import scala.util.control.NonFatal

import org.apache.hadoop.fs.Path

import io.txcommit.Paths
import io.txcommit.log.{LogLayout, RecordCodec}
import io.txcommit.store.CommitStore

/**
 * Requests to a table's log that a read sends at once instead of one after another: on an
 * object store each is a round trip, and a read plan waits for all of them. No task of this
 * pool waits for another of its tasks (callers wait, on their own threads), so a bounded pool
 * cannot deadlock.
 */
private[read] object LogRequests {

  /** Requests in flight at once per JVM, across reads. */
  val Threads = 16

  private val pool = {
    val p = Executors.newFixedThreadPool(Threads,
      new ThreadFactory {
        private val count = new AtomicInteger()
        def newThread(r: Runnable): Thread = {
          val t = new Thread(r, s"txcommit-log-request-${count.incrementAndGet()}")
          t.setDaemon(true)
          t
        }
      }).asInstanceOf[ThreadPoolExecutor]
    p.setKeepAliveTime(60L, java.util.concurrent.TimeUnit.SECONDS)
    p.allowCoreThreadTimeOut(true) // idle threads end after a minute
    p
  }

  /** `a` and `b` at once: `a` on a pool thread, `b` on the caller's; the first failure is thrown. */
  def atOnce[A, B](a: => A, b: => B): (A, B) = {
    val first = pool.submit[A](() => a)
    val second =
      try b
      catch {
        case e: Throwable =>
          first.cancel(true)
          throw e
      }
    try (first.get(), second)
    catch { case e: ExecutionException => throw e.getCause }
  }

  /** Every one of `requests` at once (the last on the caller's thread); the first failure is thrown. */
  def all[A](requests: Seq[() => A]): Seq[A] =
    if (requests.size <= 1) requests.map(_())
    else {
      val others = requests.init.map(r => pool.submit[A](() => r()))
      val last =
        try requests.last()
        catch { case e: Throwable => others.foreach(_.cancel(true)); throw e }
      try others.map(_.get()) :+ last
      catch { case e: ExecutionException => throw e.getCause }
    }

  /**
   * Reads and decodes every `commits/` record of `txns` of the table at `root` this JVM has not
   * decoded yet, at once, and returns what each says (None: no such record). Unlike
   * [[prefetchRecords]] a store's failure is thrown: a read that must know whether a record is
   * a group's prepared one (docs/protocol.md, I33) cannot guess. A corrupt record is None: it is
   * left to the reader's own read of it, which reports it (or hides its files) if the read meets
   * a file of it; decoded, it could not commit anything.
   */
  def records(root: Path, store: CommitStore, txns: Seq[String]): Map[String, Option[TableLogReader.Commit]] = {
    val layout = LogLayout(root)
    val (known, missing) = txns.distinct.map(t =>
      (t, layout.commitRecord(t),
        TableLogReader.Records.get(
          layout.commitRecord(t).toString))).partition(_._3.isDefined)
    val read = all(missing.map { case (txn, path, _) =>
      () =>
        txn -> store.read(path).flatMap { b =>
          try {
            val c = TableLogReader.Commit.of(RecordCodec.decode(b, Paths.display(path), txn))
            TableLogReader.Records.put(path.toString, c)
            Some(c)
          } catch { case _: io.txcommit.CorruptCommitRecordException => None }
        }
    })
    known.map { case (t, _, c) => t -> c }.toMap ++ read
  }

  /**
   * Reads and decodes the `commits/` records of `txns` of the table at `root` that this JVM has
   * not decoded yet ([[TableLogReader.Records]]), at once: a cold read of a table with many
   * appends since its checkpoint then pays about one round trip for them, where judging its
   * files would read them one by one. Best effort: a record missing, corrupt or failing here is
   * left to the reader's own read of it, which reports it.
   */
  def prefetchRecords(root: Path, store: CommitStore, txns: Seq[String]): Unit = {
    val layout = LogLayout(root)
    val missing = txns.map(t => t -> layout.commitRecord(t))
      .filter { case (_, p) => TableLogReader.Records.get(p.toString).isEmpty }
    if (missing.size > 1) {
      val reads = missing.map { case (txn, path) =>
        pool.submit[Unit](() =>
          try store.read(path).foreach(b =>
              TableLogReader.Records.put(path.toString,
                TableLogReader.Commit.of(RecordCodec.decode(b, Paths.display(path), txn))))
          catch { case NonFatal(_) => () })
      }
      reads.foreach(_.get())
    }
  }
}

package io.txcommit.testing

import java.io.IOException
import java.util.concurrent.atomic.AtomicReference

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import io.txcommit.log.LogLayout
import io.txcommit.store.{CommitStore, LocalAdapter, StoreAdapter}

/**
 * The local store, except that while armed the next create of a commit point's record
 * (`_txcommit/commits/<txn>.json`, or a replacing commit's `_txcommit/replace/<n>.json`) times
 * out: the writer gets an IOException, nothing is on the store yet, and the create is held back
 * until [[DelayedRecordAdapter.land]] applies it. A
 * store may apply a request whose answer never came at any later time; this makes "later"
 * a point a test chooses. Set `spark.txcommit.adapter.file=local-delayed-record` to use it.
 */
final class DelayedRecordAdapter extends StoreAdapter {
  override val name = "local-delayed-record"
  override def open(table: Path, conf: Configuration): CommitStore =
    new ForwardingCommitStore(new LocalAdapter().open(table, conf)) {
      override def createExclusive(target: Path, bytes: Array[Byte]): Unit =
        if (DelayedRecordAdapter.isCommitRecord(target) &&
          DelayedRecordAdapter.state.compareAndSet(Armed, Held(() => inner.createExclusive(target, bytes)))) {
          throw new IOException(s"timed out creating $target (the request may still be applied)")
        } else inner.createExclusive(target, bytes)
    }
}

private[testing] sealed trait DelayState
private[testing] case object Disarmed extends DelayState
private[testing] case object Armed extends DelayState
private[testing] final case class Held(apply: () => Unit) extends DelayState

object DelayedRecordAdapter {
  private def isCommitRecord(p: Path): Boolean =
    Set("commits", "replace")(p.getParent.getName) && p.getParent.getParent.getName == LogLayout.LogDirName

  private[testing] val state = new AtomicReference[DelayState](Disarmed)

  def arm(): Unit = state.set(Armed)

  /** Applies the held create; false if none was held. */
  def land(): Boolean = state.getAndSet(Disarmed) match {
    case Held(apply) => apply(); true
    case _ => false
  }
}

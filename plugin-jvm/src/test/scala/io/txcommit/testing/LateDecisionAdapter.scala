package io.txcommit.testing

import java.util.concurrent.atomic.{AtomicBoolean, AtomicInteger, AtomicReference}

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import io.txcommit.log.LogLayout
import io.txcommit.store.{CommitStore, LocalAdapter, StoreAdapter}

/**
 * The local store with two hooks on the reads of a transaction's decision
 * (`_txcommit/groups/<group>.json`): while [[LateDecisionAdapter.hidden]] is set such a read
 * finds nothing (what a reader got that asked just before the decision was created, while what
 * it lists later, such as the checkpoint the committed transaction's derived work wrote, is
 * there); [[LateDecisionAdapter.afterRead]] runs an action once right after the n-th such read
 * (a COMMIT landing at that point of the reader's work). Set
 * `spark.txcommit.adapter.file=local-late-decision` to use it.
 */
final class LateDecisionAdapter extends StoreAdapter {
  override val name = "local-late-decision"
  override def open(table: Path, conf: Configuration): CommitStore =
    new ForwardingCommitStore(new LocalAdapter().open(table, conf)) {
      override def read(path: Path): Option[Array[Byte]] =
        if (!LateDecisionAdapter.isDecision(path)) inner.read(path)
        else {
          val out = if (LateDecisionAdapter.hidden.get) None else inner.read(path)
          LateDecisionAdapter.read()
          out
        }
    }
}

object LateDecisionAdapter {
  val hidden = new AtomicBoolean(false)
  private val reads = new AtomicInteger()
  private val action = new AtomicReference[Option[(Int, () => Unit)]](None)

  /** Runs `f` once, right after the `n`-th read of a decision from now. */
  def afterRead(n: Int)(f: => Unit): Unit = { reads.set(0); action.set(Some((n, () => f))) }

  /** Whether the action set by [[afterRead]] ran (and drops it if not). */
  def ran(): Boolean = action.getAndSet(None).isEmpty

  private def read(): Unit = {
    val n = reads.incrementAndGet()
    val current = action.get
    current.foreach { case (at, f) => if (at == n && action.compareAndSet(current, None)) f() }
  }

  private def isDecision(p: Path): Boolean =
    p.getParent.getName == "groups" && p.getParent.getParent.getName == LogLayout.LogDirName
}

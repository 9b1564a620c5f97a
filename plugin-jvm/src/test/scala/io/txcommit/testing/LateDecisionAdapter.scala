package io.txcommit.testing

import java.util.concurrent.atomic.AtomicBoolean

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import io.txcommit.log.LogLayout
import io.txcommit.store.{CommitStore, LocalAdapter, StoreAdapter}

/**
 * The local store, except that while [[LateDecisionAdapter.hidden]] is set a read of a
 * transaction's decision (`_txcommit/groups/<group>.json`) finds nothing: what a reader got that
 * asked just before the decision was created, while everything it lists later (the checkpoint
 * the committed transaction's derived work wrote) is there. Set
 * `spark.txcommit.adapter.file=local-late-decision` to use it.
 */
final class LateDecisionAdapter extends StoreAdapter {
  override val name = "local-late-decision"
  override def open(table: Path, conf: Configuration): CommitStore =
    new ForwardingCommitStore(new LocalAdapter().open(table, conf)) {
      override def read(path: Path): Option[Array[Byte]] =
        if (LateDecisionAdapter.hidden.get && LateDecisionAdapter.isDecision(path)) None else inner.read(path)
    }
}

object LateDecisionAdapter {
  val hidden = new AtomicBoolean(false)

  private def isDecision(p: Path): Boolean =
    p.getParent.getName == "groups" && p.getParent.getParent.getName == LogLayout.LogDirName
}

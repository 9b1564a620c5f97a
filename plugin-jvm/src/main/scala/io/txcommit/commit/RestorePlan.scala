package io.txcommit.commit

import io.txcommit.{Paths, RestoreFilesMissingException}
import io.txcommit.log.{Removals, RemovedFile, TableFile, TableState}

/**
 * What a restore changes to make the table show exactly `target` (docs/protocol.md, I31):
 * `removed`, every file visible now that the target does not hold (files of transactions
 * committed after the restore began excepted: they are serialized after it, as for any
 * overwrite), and `restored`, every target file not visible now. A target file is named as a
 * removal names one: by path, and, without a txn id, by its identity (size, modification time).
 */
final case class RestorePlan(removed: Seq[RemovedFile], restored: Seq[RemovedFile])

object RestorePlan {

  /**
   * The plan against `state`. A target file named with a txn id must be one its transaction's
   * record committed: a restore never shows a file no committed record names (I4).
   */
  def apply(state: TableState, target: Seq[RemovedFile], base: ReplaceBase): RestorePlan = {
    val visible = state.dataFiles().filter(state.isVisible)
    val wanted = target.groupBy(_.path)
    def inTarget(f: TableFile): Boolean = wanted.get(f.path).exists(_.exists(_.appliesTo(f.size, f.modifiedAt)))
    val removed = visible.filter(f => !inTarget(f) && f.txn.forall(base.precedes(_, state.replaceLog)))
      .map(RemovedFile.of)
    val shown = visible.groupBy(_.path)
    val restored = target.filterNot(t => shown.get(t.path).exists(_.exists(f => t.appliesTo(f.size, f.modifiedAt))))
    val uncommitted = restored.filter { t =>
      t.txn.exists(txn => !state.added(txn).exists(_.contains(t.path)))
    }
    if (uncommitted.nonEmpty) throw new RestoreFilesMissingException(
      s"txcommit: restore of ${Paths.display(state.table)}: ${uncommitted.size} file(s) of the target are " +
        s"no committed file of the table (${RemovedFile.names(uncommitted)}): no transaction's record names them, so no " +
        "version of the table showed them. Nothing was published.",
      uncommitted.map(_.path))
    RestorePlan(removed.sortBy(_.path), Removals.distinct(restored))
  }

}

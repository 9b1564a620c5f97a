package io.txcommit.commit

import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.testing.MemTable

/** The base class of every stage: names, timings, failures. */
class CommitStageSuite extends AnyFunSuite {
  private val stages: Seq[CommitStage[_, _]] = Seq(CollectManifests, CheckWriteId, SkipTransaction,
    CheckConflicts, PublishData, PublishCommitRecord, PublishReplaceRecord, CopyReplaceRecord,
    CleanupAttempts, CleanupStaging, WriteSuccessSummary, StartTransaction, AbortTransaction,
    RollForward, RollForwardReplacements)

  test("a stage's name is its class name in kebab case") {
    assert(SkipTransaction.name == "skip-transaction")
    assert(PublishCommitRecord.name == "publish-commit-record")
    assert(RollForwardReplacements.name == "roll-forward-replacements")
    for (s <- stages) {
      val cls = s.getClass.getSimpleName.stripSuffix("$")
      assert(s.name.split('-').map(_.capitalize).mkString == cls, s.name)
    }
    assert(stages.map(_.name).distinct.size == stages.size)
  }

  test("a stage that succeeds is timed under its name; one that fails is not, and its error passes") {
    val t = new MemTable
    val timings = new StageTimings
    StartTransaction.run(t.context(), false, timings)
    assert(timings.all.map(_._1) == Seq("start-transaction"))
    val ctx = t.context()
    StartTransaction.run(ctx, false, timings)
    intercept[io.txcommit.CommitConflictException](StartTransaction.run(ctx, false, timings))
    assert(timings.all.map(_._1) == Seq("start-transaction"))
  }
}

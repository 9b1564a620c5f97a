package io.txcommit.commit

import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.testing.MemTable

/** The base class of every stage: timings, failures (the names: `SharedNamesSuite`). */
class CommitStageSuite extends AnyFunSuite {
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

package io.txcommit.commit

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.log.TxnId
import io.txcommit.testing.InMemoryCommitStore.Op
import io.txcommit.testing.MemTable

class WriteSuccessSummarySuite extends AnyFunSuite {
  test("_SUCCESS summarises the commit: txn, files, stage durations by name, the store's requests") {
    val t = new MemTable
    val ctx = t.context()
    val record = t.record(ctx.txn, (0 until WriteSuccessSummary.MaxFilenames + 5).map(i => s"f$i"): _*)
    val timings = new StageTimings
    timings.record(PublishCommitRecord.name, 7L)
    t.store.list(t.table)
    WriteSuccessSummary.run(ctx, (record, timings), timings)
    val json = new ObjectMapper().readTree(t.store.read(t.layout.success).get)
    assert(json.get("txn").asText() == ctx.txn && json.get("files").asInt() == record.files)
    assert(json.get("stageDurationsMs").get("publish-commit-record").asLong() == 7L)
    assert(json.get("jobCommitRequests").get("adapter").asText() == "in-memory")
    assert(json.get("jobCommitRequests").get("LIST").asLong() == 1L)
    assert(json.get("filenames").elements().asScala.size == WriteSuccessSummary.MaxFilenames)
    assert(json.get("commitRecord").asText() == s"_txcommit/commits/${ctx.txn}.json")
  }

  test("a store failure fails the stage (DerivedWork is what keeps it from failing the job)") {
    val t = new MemTable
    t.store.failOn(Op.WriteReplacing)
    val ctx = t.context(TxnId.generate())
    intercept[java.io.IOException](WriteSuccessSummary.run(ctx, (t.record(ctx.txn), new StageTimings),
        new StageTimings))
  }
}

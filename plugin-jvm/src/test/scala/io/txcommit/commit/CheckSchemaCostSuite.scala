package io.txcommit.commit

import org.apache.spark.sql.types.StructType
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.log.{CheckpointCodec, CheckpointWriter, SchemaMark, TableState, TxnId}
import io.txcommit.testing.InMemoryCommitStore.Op
import io.txcommit.testing.MemTable

/**
 * The schema guard's reads are bounded like a read's (docs/protocol.md, I27): a committer that
 * has never seen the table (a new JVM: nothing of it cached) reads the newest checkpoint, which
 * carries the table's schema, and only the records after it, whatever the table's history.
 */
class CheckSchemaCostSuite extends AnyFunSuite {
  private def append(t: MemTable, at: Long, schema: String): String = {
    val txn = TxnId.generate()
    t.commit(t.record(txn, s"part-$txn").copy(committedAt = at, schema = Some(schema)))
    txn
  }

  private def check(t: MemTable, written: String): Option[String] =
    CheckSchema.run(t.context(),
      SchemaCheck(Some(StructType.fromDDL(written)), replacesTable = false,
        mergeSchema = false, new TableState(t.table, t.store, t.conf)), new StageTimings)

  /** The store's requests made by `body`: (reads of commits/, reads of checkpoints/, lists). */
  private def requests(t: MemTable)(body: => Unit): (Int, Int, Int) = {
    val before = t.store.calls.size
    body
    val calls = t.store.calls.drop(before)
    def reads(dir: String) = calls.count(c => c._1 == Op.Read && c._2.getParent.getName == dir)
    (reads("commits"), reads("checkpoints"), calls.count(_._1 == Op.List))
  }

  test("a new committer reads the checkpoint and the records after it, however long the history") {
    val costs = Seq(20, 400).map { n =>
      val t = new MemTable
      val marked = (1 to n).map { i =>
        // the schema of the record that committed last (by committedAt) lies inside the history
        append(t, if (i == n / 2) 10000L else 100L + i, if (i == n / 2) "id BIGINT, v STRING" else "id BIGINT")
      }(n / 2 - 1)
      val written = CheckpointWriter.write(t.table, t.store, None).written
      assert(written.flatMap(_.schema) == Some(Some(SchemaMark(marked, 10000L, "id BIGINT, v STRING"))))
      (1 to 3).foreach(i => append(t, 100L + i, "id BIGINT")) // after it, with older clocks
      var decided: Option[String] = None
      val cost = requests(t) { decided = check(t, "id BIGINT") }
      assert(decided == Some("id BIGINT, v STRING"), "the checkpoint's schema, committed last, is the table's")
      val again = requests(t)(check(t, "id BIGINT"))
      assert(again == ((0, 0, 2)), "the next commit from this JVM: the listings of commits/ and replace/ only")
      cost
    }
    assert(costs.forall(_ == ((3, 1, 3))), s"reads of commits/, reads of checkpoints/, lists: $costs")
  }

  test("a record after the checkpoint that committed last sets the schema; a replacing one after it counts") {
    val t = new MemTable
    (1 to 30).foreach(i => append(t, 100L + i, "id BIGINT"))
    assert(CheckpointWriter.write(t.table, t.store, None).written.nonEmpty)
    append(t, 5000L, "id INT")
    assert(intercept[io.txcommit.SchemaMismatchException](check(t, "id BIGINT")).getMessage.contains(
        "the table has INT"))
    val r = t.record(TxnId.generate()).copy(committedAt = 6000L, schema = Some("id STRING"),
      operation = io.txcommit.log.CommitRecord.Overwrite,
      replacement = Some(io.txcommit.log.Replacement(1, Seq(""), Nil)))
    t.store.createExclusive(t.layout.replaceRecord(1), io.txcommit.log.RecordCodec.encode(r))
    assert(check(t, "id STRING") == Some("id STRING"))
  }

  test(
    "a checkpoint written before checkpoints carried the schema: the guard reads the records it covers; the next checkpoint carries it") {
    val t = new MemTable
    val marked = (1 to 30).map(i => append(t, 100L + i, if (i == 30) "id BIGINT, v STRING" else "id BIGINT")).last
    val old = CheckpointWriter.write(t.table, t.store, None).written.get.copy(schema = None)
    t.store.delete(t.layout.checkpoint(old.number))
    t.store.createExclusive(t.layout.checkpoint(old.number), CheckpointCodec.encode(old))
    append(t, 50L, "id BIGINT")
    var decided: Option[String] = None
    val (records, _, _) = requests(t) { decided = check(t, "id BIGINT") }
    assert(decided == Some("id BIGINT, v STRING") && records == 31)
    val next = CheckpointWriter.write(t.table, t.store, None).written
    assert(next.flatMap(_.schema) == Some(Some(SchemaMark(marked, 130L, "id BIGINT, v STRING"))))
  }
}

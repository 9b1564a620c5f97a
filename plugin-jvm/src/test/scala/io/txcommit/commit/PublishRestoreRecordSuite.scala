package io.txcommit.commit

import java.nio.file.Files

import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.{CommitConflictException, RestoreFilesMissingException}
import io.txcommit.log.{CommitRecord, RecordCodec, RemovedFile, TableState, TxnId}
import io.txcommit.maintenance.Restore
import io.txcommit.testing.InMemoryCommitStore.Op
import io.txcommit.testing.MemLogTable

/**
 * A restore (docs/protocol.md, I31) against the in-memory log store, data on a local directory:
 * one replacing commit of the whole table that removes what the target lacks and re-adds what a
 * later replacing commit removed, conflicting like an overwrite of the whole table.
 */
class PublishRestoreRecordSuite extends AnyFunSuite {
  private def state(t: MemLogTable) = new TableState(t.table, t.store, t.conf)
  private def visible(t: MemLogTable): Seq[String] = {
    val s = state(t); s.dataFiles().filter(s.isVisible).map(_.path).sorted
  }
  private def version(t: MemLogTable): Seq[RemovedFile] = {
    val s = state(t); s.dataFiles().filter(s.isVisible).map(RemovedFile.of)
  }
  private def base(t: MemLogTable): ReplaceBase = {
    val s = state(t)
    ReplaceBase(s.replaceLog.highest, s.commitTxns ++ s.replaceLog.byTxn.keySet)
  }
  private def publish(t: MemLogTable, target: Seq[RemovedFile], b: ReplaceBase): CommitRecord = {
    val ctx = t.context()
    PublishRestoreRecord.run(ctx, RestoreRequest(ctx.record(Nil), target, b), new StageTimings)
  }

  /** An append in k=1 and k=2, then an overwrite of k=1 removing the append's file there. */
  private def overwritten(t: MemLogTable): (CommitRecord, CommitRecord, Seq[RemovedFile]) = {
    val a = t.append("k=1", "k=2")
    val before = version(t)
    val o = t.replace(1L, Seq("k=1"), Seq("k=1"), Seq(a.added.head.path))
    (a, o, before)
  }

  test("a restore re-adds what an overwrite removed and removes what it added, in one format 3 record") {
    val t = new MemLogTable
    val (a, o, before) = overwritten(t)
    val r = Restore.run(t.table, t.store, t.conf, before)
    assert(r.sequence.contains(2L) && r.operation == CommitRecord.Overwrite && r.replacement.get.scope == Seq(""))
    assert(r.removed.map(_.path) == o.added.map(_.path) && r.restored == Seq(RemovedFile(a.added.head.path, 3L)))
    assert(visible(t) == a.added.map(_.path).sorted)
    val bytes = t.store.read(t.layout.replaceRecord(2L)).get
    assert(new String(bytes, "UTF-8").contains("\"version\" : 3"))
    assert(RecordCodec.decodeReplacement(bytes, "r", 2L) == r)
    assert(t.store.exists(t.layout.commitRecord(r.txn)), "its commits/ copy, as any replacing commit's")
  }

  test("a restore that re-adds nothing is a version 2 record: older readers read it") {
    val t = new MemLogTable
    val first = t.append("k=1")
    val target = version(t)
    t.append("k=2")
    val r = Restore.run(t.table, t.store, t.conf, target)
    assert(r.restored.isEmpty && r.removed.size == 1)
    assert(new String(t.store.read(t.layout.replaceRecord(1L)).get, "UTF-8").contains("\"version\" : 2"))
    assert(visible(t) == first.added.map(_.path))
  }

  test("a replacing commit published after the restore began fails it, naming the winner; nothing is published") {
    val t = new MemLogTable
    val (_, _, before) = overwritten(t)
    val b = base(t)
    val winner = t.replace(2L, Seq("k=2"), Seq("k=2"), Nil)
    val e = intercept[CommitConflictException](publish(t, before, b))
    assert(e.getMessage.contains(winner.txn) && e.getMessage.contains("the whole table"))
    assert(!t.store.exists(t.layout.replaceRecord(3L)))
  }

  test("a replacing commit racing for the restore's sequence number wins; the restore fails on it") {
    val t = new MemLogTable
    val (_, _, before) = overwritten(t)
    val b = base(t)
    var rival: Option[CommitRecord] = None
    t.store.failOn(Op.CreateExclusive, p => p == t.layout.replaceRecord(2L),
      error = why => { rival = Some(t.replace(2L, Seq("k=2"), Seq("k=2"), Nil)); new CommitConflictException(why) })
    val e = intercept[CommitConflictException](publish(t, before, b))
    assert(rival.exists(r => e.getMessage.contains(r.txn)))
    assert(!t.store.exists(t.layout.replaceRecord(3L)))
  }

  test("an append committed after the restore began keeps its files: it is serialized after the restore") {
    val t = new MemLogTable
    val (a, _, before) = overwritten(t)
    val b = base(t)
    val late = t.append("k=3")
    val r = publish(t, before, b)
    assert(!r.removed.exists(f => late.added.exists(_.path == f.path)))
    assert(visible(t) == (a.added ++ late.added).map(_.path).sorted)
  }

  test("an overwrite after a restore removes the restored files again") {
    val t = new MemLogTable
    val (a, _, before) = overwritten(t)
    Restore.run(t.table, t.store, t.conf, before)
    val ctx = t.context()
    val file = t.dataFile("k=9", ctx.txn)
    val o = PublishReplaceRecord.run(ctx,
      ReplaceRequest(t.record(ctx.txn, Seq(file)), WriteIntent(staticScopes = Seq("")), base(t)), new StageTimings)
    assert(o.removed.map(_.path).sorted == a.added.map(_.path).sorted)
    assert(visible(t) == Seq(file))
  }

  /** An overwrite of the whole table adding nothing, removing what is visible as PublishReplaceRecord does. */
  private def clear(t: MemLogTable): CommitRecord = {
    val ctx = t.context()
    PublishReplaceRecord.run(ctx, ReplaceRequest(t.record(ctx.txn, Nil), WriteIntent(staticScopes = Seq("")), base(t)),
      new StageTimings)
  }

  test("a file written without txcommit is restored by its identity") {
    val t = new MemLogTable
    t.touch("k=1/part-0.parquet")
    val before = version(t)
    val plain = before.head
    assert(plain.modifiedAt.isDefined)
    assert(clear(t).removed == Seq(plain))
    assert(visible(t).isEmpty)
    val r = Restore.run(t.table, t.store, t.conf, before)
    assert(r.restored == Seq(plain))
    assert(visible(t) == Seq(plain.path))
  }

  test("a restore of files VACUUM deleted fails naming them and VACUUM; nothing is published") {
    val t = new MemLogTable
    val (a, _, before) = overwritten(t)
    val gone = a.added.head.path
    Files.delete(t.dir.resolve(gone)) // what VACUUM does once the overwrite is older than its horizon
    val e = intercept[RestoreFilesMissingException](Restore.run(t.table, t.store, t.conf, before))
    assert(e.missing == Seq(gone) && e.getMessage.contains(gone) && e.getMessage.contains("VACUUM"))
    assert(!t.store.exists(t.layout.replaceRecord(2L)))
  }

  test("a file without a txn id written anew under a restored name is not the file restored") {
    val t = new MemLogTable
    t.touch("part-0.parquet")
    val before = version(t)
    clear(t)
    Files.write(t.dir.resolve("part-0.parquet"), Array.fill[Byte](5)(2)) // another file, same name
    val e = intercept[RestoreFilesMissingException](Restore.run(t.table, t.store, t.conf, before))
    assert(e.missing == Seq("part-0.parquet"))
  }

  test("a target naming a file no committed record names is refused") {
    val t = new MemLogTable
    t.append("k=1")
    val stray = t.dataFile("k=1", TxnId.generate()) // never committed
    val e = intercept[RestoreFilesMissingException](
      Restore.run(t.table, t.store, t.conf, version(t) :+ RemovedFile(stray, 3L)))
    assert(e.missing == Seq(stray) && e.getMessage.contains("no committed file"))
  }
}

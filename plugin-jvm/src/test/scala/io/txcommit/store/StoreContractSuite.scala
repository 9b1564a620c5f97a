package io.txcommit.store

import java.nio.charset.StandardCharsets.UTF_8
import java.util.UUID
import java.util.concurrent.{CountDownLatch, Executors, TimeUnit}

import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration._
import scala.util.Try

import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.CommitConflictException
import io.txcommit.testing.{InMemoryCommitStore, TempTable}
import io.txcommit.store.CommitStore

/**
 * The store contract (CommitStore's doc comment) as tests. Every adapter binds to it in a few
 * lines: a fresh table directory and an opened store, on the real store.
 */
abstract class StoreContractSuite extends AnyFunSuite {

  /** A new, empty table directory on the store under test, and its store. */
  protected def freshTable(): (Path, CommitStore)

  private def text(s: String) = s.getBytes(UTF_8)

  test("contract: of 16 concurrent exclusive creates of one file exactly one wins; the rest conflict") {
    val (table, store) = freshTable()
    val target = new Path(table, "_txcommit/commits/race.json")
    val pool = Executors.newFixedThreadPool(16)
    implicit val ec: ExecutionContext = ExecutionContext.fromExecutor(pool)
    val go = new CountDownLatch(1)
    val results = (0 until 16).map { i =>
      Future { go.await(); Try(store.createExclusive(target, text(s"writer-$i"))).map(_ => i) }
    }
    go.countDown()
    val outcomes = Await.result(Future.sequence(results), 60.seconds)
    pool.shutdown(); pool.awaitTermination(5, TimeUnit.SECONDS)
    val winners = outcomes.flatMap(_.toOption)
    assert(winners.size == 1, s"winners: $winners, failures: ${outcomes.filter(_.isFailure)}")
    assert(outcomes.filter(_.isFailure).forall(_.failed.get.isInstanceOf[CommitConflictException]))
    assert(new String(store.read(target).get, UTF_8) == s"writer-${winners.head}")
    // no temporary file is left behind by winners or losers
    assert(store.list(target.getParent).map(_.getPath.getName) == Seq("race.json"))
  }

  test("contract: an existing file is never overwritten by an exclusive create") {
    val (table, store) = freshTable()
    val target = new Path(table, "x.json")
    store.createExclusive(target, text("first"))
    val e = intercept[CommitConflictException](store.createExclusive(target, text("second")))
    assert(e.getMessage.contains("x.json"))
    assert(new String(store.read(target).get, UTF_8) == "first")
  }

  test("contract: writeReplacing replaces; read, exists, list and delete see every completed change") {
    val (table, store) = freshTable()
    val dir = new Path(table, "d")
    val a = new Path(dir, "a")
    assert(store.read(a).isEmpty && !store.exists(a) && store.list(dir).isEmpty)
    store.writeReplacing(a, text("one"))
    store.writeReplacing(a, text("two"))
    assert(new String(store.read(a).get, UTF_8) == "two" && store.exists(a))
    store.createExclusive(new Path(dir, "b"), text("b"))
    assert(store.list(dir).map(_.getPath.getName).sorted == Seq("a", "b"))
    assert(store.list(dir).find(_.getPath.getName == "a").get.getLen == 3)
    assert(store.delete(a))
    assert(!store.exists(a) && store.read(a).isEmpty)
    assert(store.list(dir).map(_.getPath.getName) == Seq("b"))
    store.delete(new Path(dir, "missing-" + UUID.randomUUID())) // a missing file: no error
  }

  test("contract: a record larger than one upload part is read back whole") {
    val (table, store) = freshTable()
    val big = Array.tabulate[Byte](6 * 1024 * 1024 + 17)(i => (i % 251).toByte)
    val target = new Path(table, "_txcommit/commits/big.json")
    store.createExclusive(target, big)
    assert(java.util.Arrays.equals(store.read(target).get, big))
  }

  test("contract: a writer interrupted before or while it sends a file publishes all of its bytes or nothing") {
    // Spark interrupts a stopped query's thread, and the flag can still be set when the next
    // file is written: a store must never take the interrupt for the end of the bytes.
    val (table, store) = freshTable()
    val big = Array.tabulate[Byte](1536 * 1024 + 7)(i => (i % 241).toByte)
    for ((delayMs, i) <- Seq(None, Some(0L), Some(10L), Some(50L)).zipWithIndex) {
      val record = new Path(table, s"_txcommit/commits/interrupted-$i.json")
      val derived = new Path(table, s"derived-$i")
      StoreContractSuite.interruptedWhile(delayMs)(store.createExclusive(record, big))
      StoreContractSuite.interruptedWhile(delayMs)(store.writeReplacing(derived, big))
      for (p <- Seq(record, derived)) {
        val got = store.read(p)
        assert(got.forall(java.util.Arrays.equals(_, big)),
          s"interrupted ${delayMs.fold("before")(d => s"$d ms into")} the call: ${p.getName} holds " +
            s"${got.map(_.length).getOrElse(0)} of ${big.length} bytes")
      }
    }
  }

  test("contract: every request is counted") {
    val (table, store) = freshTable()
    val before = store.requests.total
    store.createExclusive(new Path(table, "c.json"), text("c"))
    store.list(table)
    assert(store.requests.total >= before + 2)
  }
}

object StoreContractSuite {

  /** Runs `op` on a thread of its own, interrupted before the call (`delayMs` empty) or that many
   * ms into it; returns whether `op` completed (false: it threw, as an interrupted call may). */
  def interruptedWhile(delayMs: Option[Long])(op: => Unit): Boolean = {
    @volatile var completed = false
    val t = new Thread(() => {
      if (delayMs.isEmpty) Thread.currentThread().interrupt()
      completed = Try(op).isSuccess
    })
    t.start()
    delayMs.foreach { d => Thread.sleep(d); t.interrupt() }
    t.join(120000)
    assert(!t.isAlive, "an interrupted store call returns")
    completed
  }
}

/** The local adapter (link(2)) bound to the contract. */
class LocalStoreContractSuite extends StoreContractSuite {
  override protected def freshTable(): (Path, CommitStore) = {
    val t = new TempTable
    (t.table, t.store)
  }
}

/** The in-memory test double bound to the same contract, so stage suites can trust it. */
class InMemoryStoreContractSuite extends StoreContractSuite {
  override protected def freshTable(): (Path, CommitStore) =
    (new Path(s"file:/in-memory/t-${UUID.randomUUID()}"), new InMemoryCommitStore)
}

package io.txcommit

import java.nio.charset.StandardCharsets.UTF_8
import java.util.concurrent.{CountDownLatch, Executors, TimeUnit}

import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration._
import scala.util.Try

import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

class RenameStoreSuite extends AnyFunSuite {
  test("of 16 concurrent exclusive creates of one file exactly one wins; the rest conflict") {
    val t = new TempTable
    val target = new Path(t.table, "_txcommit/commits/race.json")
    val pool = Executors.newFixedThreadPool(16)
    implicit val ec: ExecutionContext = ExecutionContext.fromExecutor(pool)
    val go = new CountDownLatch(1)
    val results = (0 until 16).map { i =>
      Future { go.await(); Try(t.store.createExclusive(target, s"writer-$i".getBytes(UTF_8))).map(_ => i) }
    }
    go.countDown()
    val outcomes = Await.result(Future.sequence(results), 30.seconds)
    pool.shutdown(); pool.awaitTermination(5, TimeUnit.SECONDS)
    val winners = outcomes.flatMap(_.toOption)
    assert(winners.size == 1)
    assert(outcomes.filter(_.isFailure).forall(_.failed.get.isInstanceOf[CommitConflictException]))
    assert(new String(t.store.read(target).get, UTF_8) == s"writer-${winners.head}")
    // no temporary file is left behind by winners or losers
    assert(t.store.list(target.getParent).map(_.getPath.getName) == Seq("race.json"))
  }

  test("an existing file is never overwritten by an exclusive create") {
    val t = new TempTable
    val target = new Path(t.table, "x.json")
    t.store.createExclusive(target, "first".getBytes(UTF_8))
    val e = intercept[CommitConflictException](t.store.createExclusive(target, "second".getBytes(UTF_8)))
    assert(e.getMessage.contains("x.json"))
    assert(new String(t.store.read(target).get, UTF_8) == "first")
  }

  test("an unknown scheme fails with the list of known adapters") {
    val e = intercept[UnsupportedStoreException] {
      io.txcommit.store.Stores.forPath(new Path("nosuch://b/t"), {
        val c = new org.apache.hadoop.conf.Configuration()
        c.set("fs.nosuch.impl", classOf[org.apache.hadoop.fs.RawLocalFileSystem].getName)
        c
      })
    }
    assert(e.getMessage.contains("nosuch") && e.getMessage.contains("file (rename)"))
  }
}

package io.txcommit.commit

import java.nio.file.Files

import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.{MaintenanceException, UnsupportedWriteException}
import io.txcommit.log.TxnId
import io.txcommit.maintenance.{Vacuum, VacuumOptions}
import io.txcommit.testing.TempTable

/** At most one `_txcommit/` on any path, on the local file system. */
class CheckTableNestingSuite extends AnyFunSuite {
  private def committedTable(): TempTable = {
    val t = new TempTable
    val txn = TxnId.generate()
    t.touch(s"k=1/part-00000-tid-$txn-1.csv")
    t.commit(t.record(txn, s"k=1/part-00000-tid-$txn-1.csv"))
    t
  }

  private def check(t: TempTable, dir: Path): Unit =
    CheckTableNesting.run(t.context().copy(table = dir), (), new StageTimings)

  test("a write into a partition directory of a table is refused, saying how to write the partition") {
    val t = committedTable()
    val e = intercept[UnsupportedWriteException](check(t, new Path(t.table, "k=1")))
    assert(e.getMessage.contains(s"inside the txcommit table ${t.table}"))
    assert(e.getMessage.contains("""df.withColumn("k", F.lit("1")).write.partitionBy("k")"""))
    assert(!Files.exists(t.dir.resolve("k=1/_txcommit")), "nothing was written")
  }

  test("a write into a directory of a table that is not a partition is refused, naming the table") {
    val t = committedTable()
    val e = intercept[UnsupportedWriteException](check(t, new Path(t.table, "extra/more")))
    assert(e.getMessage.contains(s"write to ${t.table} itself"))
  }

  test("a write to a directory holding a table below it is refused, naming that table") {
    val t = committedTable()
    val parentDir = Files.createTempDirectory("txcommit-parent")
    val inner = parentDir.resolve("events")
    Files.createDirectories(inner.resolve("_txcommit/commits"))
    Files.write(inner.resolve("_txcommit/commits/r.json"), Array[Byte](1))
    val parent = new Path(parentDir.toUri.toString.stripSuffix("/"))
    val e = intercept[UnsupportedWriteException](check(t, parent))
    assert(e.getMessage.contains(s"holds the txcommit table $parent/events below it"))
  }

  test("the table itself, a new directory beside it, and a plain directory with data pass") {
    val t = committedTable()
    check(t, t.table)
    check(t, new Path(t.table.getParent, s"new-${TxnId.generate()}"))
    val plain = new TempTable
    plain.touch("k=1/000000_0")
    check(plain, plain.table)
  }

  test("VACUUM refuses a tree that holds a second log, and deletes nothing") {
    val t = committedTable()
    val inner = TxnId.generate()
    t.touch(s"k=1/part-00000-tid-$inner-1.csv")
    t.writeRaw(s"k=1/_txcommit/commits/$inner.json", "{}")
    val e = intercept[MaintenanceException](Vacuum.run(t.table, t.conf,
      VacuumOptions(retainHours = 0, dryRun = false, force = true), now = Long.MaxValue / 2))
    assert(e.getMessage.contains("'k=1'") && e.getMessage.contains("nothing was deleted"))
    assert(Files.exists(t.dir.resolve(s"k=1/part-00000-tid-$inner-1.csv")))
  }
}

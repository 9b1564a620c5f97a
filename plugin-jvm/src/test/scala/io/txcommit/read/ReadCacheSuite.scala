package io.txcommit.read

import java.util.concurrent.ConcurrentLinkedQueue

import scala.jdk.CollectionConverters._

import org.apache.hadoop.fs.{FSDataInputStream, FileStatus, LocalFileSystem, LocatedFileStatus, Path, RemoteIterator}
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.CorruptCommitRecordException
import io.txcommit.testing.TempTable
import io.txcommit.conf.TxCommitConf
import io.txcommit.log.{BoundedCache, DataFileName, TxnId}
import io.txcommit.read.CommittedFilesFilter

/** The local file system, counting the requests the read filter makes (a static log). */
class CountingLocalFileSystem extends LocalFileSystem {
  override def open(f: Path, bufferSize: Int): FSDataInputStream = {
    CountingLocalFileSystem.calls.add(s"open ${makeQualified(f)}")
    super.open(f, bufferSize)
  }
  override def getFileStatus(f: Path): FileStatus = {
    CountingLocalFileSystem.calls.add(s"status ${makeQualified(f)}")
    super.getFileStatus(f)
  }
  override def listStatus(f: Path): Array[FileStatus] = {
    CountingLocalFileSystem.calls.add(s"list ${makeQualified(f)}")
    super.listStatus(f)
  }
  // listFiles (the read's tree listing) lists each directory through here
  override def listLocatedStatus(f: Path): RemoteIterator[LocatedFileStatus] = {
    CountingLocalFileSystem.calls.add(s"list ${makeQualified(f)}")
    super.listLocatedStatus(f)
  }
}

object CountingLocalFileSystem {
  val calls = new ConcurrentLinkedQueue[String]()

  /** The calls so far that touch `table` (suites run in parallel in one JVM). */
  def under(table: Path): Seq[String] = calls.asScala.toSeq.filter(_.contains(table.toUri.getPath))

  /** A new filter instance, as Spark makes for every listing, on the counting file system. */
  def listing(t: TempTable, settings: (String, String)*): CommittedFilesFilter = {
    val conf = new org.apache.hadoop.conf.Configuration(t.conf)
    conf.set("fs.file.impl", classOf[CountingLocalFileSystem].getName)
    conf.setBoolean("fs.file.impl.disable.cache", true)
    settings.foreach { case (k, v) => conf.set(k, v) }
    val f = new CommittedFilesFilter
    f.setConf(conf)
    f
  }
}

class ReadCacheSuite extends AnyFunSuite {
  private def listing(t: TempTable, settings: (String, String)*): CommittedFilesFilter =
    CountingLocalFileSystem.listing(t, settings: _*)

  private def dataFile(t: TempTable, txn: String, rel: String = ""): String = {
    val name = rel + DataFileName("", 0, txn, 1L, "-c000.parquet")
    t.touch(name)
    name
  }

  test("a second listing does not read a committed record or look up the table root again") {
    val t = new TempTable
    val a, b = TxnId.generate()
    val fa = dataFile(t, a, "k=1/")
    val fb = dataFile(t, b)
    t.commit(t.record(a, fa)); t.commit(t.record(b, fb))
    val first = listing(t)
    assert(first.accept(new Path(t.table, fa)) && first.accept(new Path(t.table, fb)))
    val before = CountingLocalFileSystem.under(t.table)
    assert(before.count(_.startsWith("open ")) == 2, before)
    val second = listing(t)
    assert(second.accept(new Path(t.table, fa)) && second.accept(new Path(t.table, fb)))
    val again = CountingLocalFileSystem.under(t.table).drop(before.size)
    assert(!again.exists(_.startsWith("open ")), s"records read again: $again")
    assert(!again.exists(c => c.startsWith("status ") && c.endsWith(s"${t.table.toUri.getPath}/_txcommit")),
      s"the table root looked up again: $again")
    // still asked every listing: replace/ (a replacing commit may come) and k=1 (may become a
    // table; the read's tree listing looks into it again)
    assert(again.exists(_.endsWith("/_txcommit/replace")), again)
    assert(again.exists(_.endsWith("/k=1")), again)
  }

  test("a second listing does not ask the store for a record's time again") {
    // Outside a Spark application every record is another application's: a read without a
    // log-first snapshot takes each at the time the store stamped it, asked once per record and JVM.
    val t = new TempTable
    val txns = Seq.fill(3)(TxnId.generate())
    val files = txns.map(dataFile(t, _))
    txns.zip(files).foreach { case (txn, f) => t.commit(t.record(txn, f)) }
    def recordTimes(calls: Seq[String]): Seq[String] =
      calls.filter(c => c.startsWith("status ") && c.contains("/_txcommit/commits/"))
    val first = listing(t)
    assert(files.forall(f => first.accept(new Path(t.table, f))))
    val before = CountingLocalFileSystem.under(t.table)
    assert(txns.forall(txn => recordTimes(before).exists(_.endsWith(s"/$txn.json"))), before)
    val second = listing(t)
    assert(files.forall(f => second.accept(new Path(t.table, f))))
    val again = CountingLocalFileSystem.under(t.table).drop(before.size)
    assert(recordTimes(again).isEmpty, s"the store asked again for the time of: ${recordTimes(again)}")
  }

  test("a txn committed after a listing is visible in the next one") {
    val t = new TempTable
    val txn = TxnId.generate()
    val f = dataFile(t, txn)
    t.touch(s"_txcommit/pending/$txn.json")
    assert(!listing(t).accept(new Path(t.table, f)))
    t.commit(t.record(txn, f))
    assert(listing(t).accept(new Path(t.table, f)))
  }

  test("a directory that becomes a table after a listing is a table in the next one") {
    val t = new TempTable
    val f = dataFile(t, TxnId.generate())
    assert(listing(t).accept(new Path(t.table, f)), "no _txcommit/ yet: not a txcommit table")
    t.touch("_txcommit/pending/x.json")
    assert(!listing(t).accept(new Path(t.table, f)), "now a table, and the txn did not commit")
  }

  test("a corrupt record is never cached, hidden or failing alike") {
    val t = new TempTable
    val txn = TxnId.generate()
    val f = dataFile(t, txn)
    t.writeRaw(s"_txcommit/commits/$txn.json", "{\"format\" : \"txcommit-commit-rec")
    assert(!listing(t, TxCommitConf.IgnoreCorruptRecords -> "true").accept(new Path(t.table, f)))
    intercept[CorruptCommitRecordException](listing(t).accept(new Path(t.table, f)))
    java.nio.file.Files.delete(t.dir.resolve(s"_txcommit/commits/$txn.json"))
    t.commit(t.record(txn, f)) // a repaired record (by hand): read again, not a cached verdict
    assert(listing(t, TxCommitConf.IgnoreCorruptRecords -> "true").accept(new Path(t.table, f)))
  }

  test("the bounded cache keeps its weight under the cap, dropping the least recently used") {
    val c = new BoundedCache[String, Int](10, v => v.toLong)
    c.put("a", 4); c.put("b", 4)
    assert(c.get("a").contains(4)) // a is now more recent than b
    c.put("c", 4)
    assert(c.get("b").isEmpty && c.get("a").contains(4) && c.get("c").contains(4))
    assert(c.totalWeight == 8)
    c.put("huge", 11)
    assert(c.get("huge").isEmpty && c.size == 2)
    c.put("a", 1)
    assert(c.totalWeight == 5)
  }
}

package io.txcommit.read

import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.conf.TxCommitConf
import io.txcommit.log.{DataFileName, LogLayout, TxnId}
import io.txcommit.testing.TempTable

/**
 * How the read filter finds the logs of a partitioned tree: one tree listing per read instead of
 * one question per partition directory, without ever showing a file a log hides.
 */
class TreeListingSuite extends AnyFunSuite {
  private def listing(t: TempTable, settings: (String, String)*): CommittedFilesFilter =
    CountingLocalFileSystem.listing(t, settings: _*)

  /** A plain Hive-style tree: `parts` partition directories of one file each, no log. */
  private def plainTree(t: TempTable, parts: Int): Seq[Path] =
    (0 until parts).map(i => t.touch(s"k=$i/part-00000-plain-c000.parquet"))

  private def probes(t: TempTable, from: Int = 0): Seq[String] =
    CountingLocalFileSystem.under(t.table).drop(from)
      .filter(c => c.startsWith("status ") && c.endsWith("/" + LogLayout.LogDirName))

  private def txnFile(rel: String, txn: String): String = rel + DataFileName("", 0, txn, 1L, "-c000.parquet")

  test("a plain partitioned tree costs one listing, not a question per partition directory") {
    val t = new TempTable
    val files = plainTree(t, 40)
    val f = listing(t)
    assert(files.forall(f.accept))
    val partitionProbes = probes(t).filter(_.contains("/k="))
    assert(partitionProbes.isEmpty, s"partition directories asked one by one: $partitionProbes")
    // the tree's own directory is known from the listing too; only what is above it is asked
    assert(!probes(t).exists(_.endsWith(s"${t.table.toUri.getPath}/_txcommit")), probes(t))

    // Without the tree listing every partition directory is asked: what the listing saves.
    val before = CountingLocalFileSystem.under(t.table).size
    val perDir = listing(t, TxCommitConf.TreeListingMaxFiles -> "0")
    assert(files.forall(perDir.accept))
    assert(probes(t, before).count(_.contains("/k=")) == 40)
  }

  test("copies of one read's filter (listing tasks on an executor) share one tree listing") {
    val t = new TempTable
    val files = plainTree(t, 10)
    val driver = listing(t)
    val copies = Seq.fill(3)(roundTrip(driver))
    files.zipWithIndex.foreach { case (p, i) => assert(copies(i % 3).accept(p)) }
    val treeListings = CountingLocalFileSystem.under(t.table).count(_ == s"list ${t.table}")
    assert(treeListings == 1, CountingLocalFileSystem.under(t.table))
  }

  test("a log the tree listing finds below the top still hides what it did not commit") {
    val t = new TempTable
    plainTree(t, 5)
    // A tree nested by an older version: a log in one partition directory of a plain tree.
    val nested = new Path(t.table, "k=1")
    val won, lost = TxnId.generate()
    val wonFile = txnFile("k=1/", won)
    val lostFile = txnFile("k=1/", lost)
    Seq(wonFile, lostFile).foreach(t.touch(_))
    t.publishRecord(LogLayout(nested).commitRecord(won), t.record(won, wonFile.stripPrefix("k=1/")))
    val f = listing(t)
    assert(f.accept(new Path(t.table, "k=0/part-00000-plain-c000.parquet")))
    assert(f.accept(new Path(t.table, wonFile)))
    assert(!f.accept(new Path(t.table, lostFile)), "a transaction the nested log never committed")
  }

  test("a file named with a txn id is judged by a log created after the tree listing began") {
    val t = new TempTable
    val files = plainTree(t, 5)
    val f = listing(t)
    assert(f.accept(files.head)) // the read's tree listing is made here: no log yet
    // A writer creates a log at the top and writes a file of a transaction that is not committed.
    val txn = TxnId.generate()
    t.writeRaw(s"_txcommit/pending/$txn.json", "{}")
    val pending = t.touch(txnFile("k=3/", txn))
    assert(!f.accept(pending), "an uncommitted transaction's file shown: the listing was taken as the truth")
    assert(f.accept(files(3)), "a plain file of the same read keeps the answer of the listing")
  }

  test("a partitioned txcommit table costs one listing too, and keeps its rule") {
    val t = new TempTable
    val committed = (0 until 20).map { i =>
      val txn = TxnId.generate()
      val rel = txnFile(s"k=$i/", txn)
      t.touch(rel)
      t.commit(t.record(txn, rel))
      rel
    }
    val pending = (0 until 20).map(i => t.touch(txnFile(s"k=$i/", TxnId.generate())))
    val f = listing(t)
    assert(committed.forall(rel => f.accept(new Path(t.table, rel))))
    assert(!pending.exists(f.accept), "a transaction that never committed")
    assert(probes(t).isEmpty, s"directories of the table asked one by one: ${probes(t)}")
  }

  test("a tree larger than the limit is asked directory by directory, with the same answers") {
    val t = new TempTable
    val files = plainTree(t, 12)
    val committed, pending = TxnId.generate()
    val ok = txnFile("k=2/", committed)
    val hidden = txnFile("k=2/", pending)
    Seq(ok, hidden).foreach(t.touch(_))
    t.commit(t.record(committed, ok))
    val f = listing(t, TxCommitConf.TreeListingMaxFiles -> "5")
    assert(files.forall(f.accept))
    assert(f.accept(new Path(t.table, ok)) && !f.accept(new Path(t.table, hidden)))
    assert(probes(t).count(_.contains("/k=")) == 12, probes(t))
  }

  test("a bad limit is refused with an error naming the conf") {
    val t = new TempTable
    val f = listing(t, TxCommitConf.TreeListingMaxFiles -> "many")
    val e = intercept[io.txcommit.InvalidConfException](f.accept(t.touch("k=1/part-0.parquet")))
    assert(e.getMessage.contains(TxCommitConf.TreeListingMaxFiles) && e.getMessage.contains("many"))
  }

  private def roundTrip(f: CommittedFilesFilter): CommittedFilesFilter = {
    val bytes = new java.io.ByteArrayOutputStream()
    val out = new java.io.ObjectOutputStream(bytes)
    out.writeObject(f)
    out.close()
    new java.io.ObjectInputStream(new java.io.ByteArrayInputStream(bytes.toByteArray))
      .readObject().asInstanceOf[CommittedFilesFilter]
  }
}

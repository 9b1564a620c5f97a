package io.txcommit.read

import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.{CorruptCommitRecordException, InvalidConfException}
import io.txcommit.testing.TempTable
import io.txcommit.conf.TxCommitConf
import io.txcommit.log.{DataFileName, TxnId}
import io.txcommit.read.CommittedFilesFilter

class ReadFilterSuite extends AnyFunSuite {
  private def filterFor(t: TempTable, settings: (String, String)*): CommittedFilesFilter = {
    val conf = new org.apache.hadoop.conf.Configuration(t.conf)
    settings.foreach { case (k, v) => conf.set(k, v) }
    val f = new CommittedFilesFilter
    f.setConf(conf)
    f
  }

  /** A table with one committed txn (one winning and one losing attempt) and one pending txn. */
  private final class Layout(t: TempTable) {
    val committed: String = TxnId.generate()
    val pending: String = TxnId.generate()
    val won: String = "k=1/" + DataFileName("", 0, committed, 11L, "-c000.parquet")
    val lost: String = "k=1/" + DataFileName("", 0, committed, 12L, "-c000.parquet")
    val inFlight: String = "k=2/" + DataFileName("", 0, pending, 13L, "-c000.parquet")
    val plain = "k=1/part-00000-plain-c000.parquet"
    Seq(won, lost, inFlight, plain).foreach(t.touch(_))
    t.touch(s"_txcommit/pending/$pending.json")
    t.commit(t.record(committed, won))
  }
  private def layout(t: TempTable) = new Layout(t)

  test("only files named by a commit record, and files not written by txcommit, are visible") {
    val t = new TempTable
    val l = layout(t)
    val f = filterFor(t)
    assert(f.accept(new Path(t.table, l.won)))
    assert(!f.accept(new Path(t.table, l.lost)), "a losing attempt of a committed txn")
    assert(!f.accept(new Path(t.table, l.inFlight)), "an uncommitted txn")
    assert(f.accept(new Path(t.table, l.plain)), "a file written without txcommit")
  }

  test("a session that switches the filter off sees every file") {
    val t = new TempTable
    val l = layout(t)
    assert(filterFor(t, TxCommitConf.ReadFilter -> "false").accept(new Path(t.table, l.inFlight)))
  }

  test("a nonsense filter setting is an error naming the key") {
    val t = new TempTable
    val l = layout(t)
    val e = intercept[InvalidConfException](
      filterFor(t, TxCommitConf.ReadFilter -> "maybe").accept(new Path(t.table, l.won)))
    assert(e.getMessage.contains(TxCommitConf.ReadFilter) && e.getMessage.contains("maybe"))
  }

  test("a corrupt record fails the read naming the file, unless told to hide it") {
    val t = new TempTable
    val txn = TxnId.generate()
    val file = DataFileName("", 0, txn, 1L, "-c000.parquet")
    t.touch(file)
    t.writeRaw(s"_txcommit/commits/$txn.json", "{\"format\" : \"txcommit-commit-rec")
    val e = intercept[CorruptCommitRecordException](filterFor(t).accept(new Path(t.table, file)))
    assert(e.getMessage.contains(s"_txcommit/commits/$txn.json"))
    assert(!filterFor(t, TxCommitConf.IgnoreCorruptRecords -> "true").accept(new Path(t.table, file)))
  }

  test("files outside any txcommit table stay visible even with a txcommit-like name") {
    val t = new TempTable
    val file = DataFileName("", 0, TxnId.generate(), 1L, "-c000.parquet")
    t.touch(s"elsewhere/$file")
    assert(filterFor(t).accept(new Path(t.table, s"elsewhere/$file")))
  }

  test("the filter survives Java serialisation (Spark lists on executors past 32 paths)") {
    val t = new TempTable
    val l = layout(t)
    val bytes = new java.io.ByteArrayOutputStream()
    val out = new java.io.ObjectOutputStream(bytes)
    out.writeObject(filterFor(t)); out.close()
    val copy = new java.io.ObjectInputStream(new java.io.ByteArrayInputStream(bytes.toByteArray))
      .readObject().asInstanceOf[CommittedFilesFilter]
    assert(copy.accept(new Path(t.table, l.won)) && !copy.accept(new Path(t.table, l.inFlight)))
  }
}

/** Reads with credentials scoped to a prefix: the filter may not look above it (S3 answers 403). */
class ScopedCredentialsReadSuite extends AnyFunSuite {
  private def scopedFilter(t: TempTable, allowed: Path): CommittedFilesFilter = {
    val conf = new org.apache.hadoop.conf.Configuration(t.conf)
    conf.set("fs.file.impl", classOf[io.txcommit.testing.PrefixScopedFileSystem].getName)
    conf.set("fs.file.impl.disable.cache", "true")
    conf.set(io.txcommit.testing.PrefixScopedFileSystem.Allowed, allowed.toUri.getPath)
    val f = new CommittedFilesFilter
    f.setConf(conf)
    f
  }

  test("a table not written by txcommit reads normally when the directories above it answer 403") {
    val t = new TempTable
    val plain = t.touch("plain/k=1/part-00000-plain-c000.parquet")
    val f = scopedFilter(t, new Path(t.table, "plain"))
    assert(f.accept(plain))
    assert(f.accept(t.touch("plain/k=2/part-00001-plain-c000.parquet")))
  }

  test("a txcommit table inside the allowed prefix keeps its rule when the directories above it answer 403") {
    val t = new TempTable
    val committed = TxnId.generate()
    val won = "k=1/" + DataFileName("", 0, committed, 1L, "-c000.parquet")
    val other = "k=1/" + DataFileName("", 0, TxnId.generate(), 2L, "-c000.parquet")
    Seq(won, other).foreach(t.touch(_))
    t.commit(t.record(committed, won))
    val f = scopedFilter(t, t.table)
    assert(f.accept(new Path(t.table, won)))
    assert(!f.accept(new Path(t.table, other)), "a transaction that never committed")
  }
}

package io.txcommit.log

import java.nio.charset.StandardCharsets.UTF_8

import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.CorruptCommitRecordException
import io.txcommit.log.{AddedFile, CommitRecord, RecordCodec, TxnId}

class RecordCodecSuite extends AnyFunSuite {
  private val txn = TxnId.generate()
  private val record = CommitRecord(txn, "tok", "job-1", 10L, 20L,
    Seq(AddedFile("k=1/part-00000-tid-x.parquet", 42L), AddedFile("a.parquet", 7L)), Some("app"), "w")

  test("a record survives encode and decode unchanged") {
    assert(RecordCodec.decode(RecordCodec.encode(record), "r.json", txn) == record)
  }

  test("a truncated record is rejected with an error naming the file") {
    val bytes = RecordCodec.encode(record)
    val e = intercept[CorruptCommitRecordException] {
      RecordCodec.decode(bytes.take(bytes.length / 2), "/t/_txcommit/commits/x.json", txn)
    }
    assert(e.getMessage.contains("/t/_txcommit/commits/x.json"))
    assert(e.getMessage.contains("truncated"))
  }

  test("a record naming a file outside its table is rejected, whatever the disguise") {
    for (bad <- Seq("../../x", "/etc/passwd", "k=1/../../x", "s3a://other/x", "a//b", "./a", "a\\..\\b")) {
      val json = new String(RecordCodec.encode(record), UTF_8).replace("a.parquet", bad.replace("\\", "\\\\"))
      val e = intercept[CorruptCommitRecordException](RecordCodec.decode(json.getBytes(UTF_8), "r.json", txn))
      assert(e.getMessage.contains("outside its table directory"), bad)
    }
  }

  test("a record that names another transaction, or an unknown version, is rejected") {
    val other = TxnId.generate()
    assert(intercept[CorruptCommitRecordException](
      RecordCodec.decode(RecordCodec.encode(record), "r.json", other)).getMessage.contains(other))
    val v3 = new String(RecordCodec.encode(record), UTF_8).replace("\"version\" : 2", "\"version\" : 3")
    assert(intercept[CorruptCommitRecordException](
      RecordCodec.decode(v3.getBytes(UTF_8), "r.json", txn)).getMessage.contains("upgrade"))
  }

  test("a file count that disagrees with the list is rejected") {
    val json = new String(RecordCodec.encode(record), UTF_8).replace("\"files\" : 2", "\"files\" : 3")
    assert(intercept[CorruptCommitRecordException](
      RecordCodec.decode(json.getBytes(UTF_8), "r.json", txn)).getMessage.contains("declares 3"))
  }
}

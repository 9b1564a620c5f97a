package io.txcommit.log

import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.Paths
import io.txcommit.log.{DataFileName, TxnId}

class NamesSuite extends AnyFunSuite {
  test("transaction ids are valid, distinct and ordered by start time") {
    val ids = (0 until 1000).map(i => TxnId.generate(1700000000000L + i))
    assert(ids.forall(TxnId.isValid))
    assert(ids.distinct.size == ids.size)
    assert(ids == ids.sorted)
  }

  test("a data file name carries its transaction, whatever Spark puts around it") {
    val txn = TxnId.generate()
    for (suffix <- Seq("-c000.snappy.parquet", ".c001.json", "", ".csv")) {
      val name = DataFileName("bucket-3_", 7, txn, 12345L, suffix)
      assert(DataFileName.txnOf(name).contains(txn), name)
    }
    assert(DataFileName.txnOf("part-00000-5f1c2a3b-c000.snappy.parquet").isEmpty)
  }

  test("paths relativise only below their root") {
    val root = new Path("file:/data/t")
    assert(Paths.relativize(root, new Path("file:/data/t/k=1/f")).contains("k=1/f"))
    assert(Paths.relativize(root, new Path("file:/data/t2/f")).isEmpty)
  }

  test("credentials never appear in displayed paths") {
    assert(!Paths.display(new Path("s3a://AKIDEXAMPLE:secret@bucket/t")).contains("secret"))
  }
}

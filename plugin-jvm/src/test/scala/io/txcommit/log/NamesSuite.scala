package io.txcommit.log

import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.testing.Vectors

/** Transaction ids and data file names, against `conformance/vectors/` (txn-ids, file-names). */
class NamesSuite extends AnyFunSuite {
  private val txnIds = Vectors.json("txn-ids.json")
  private val fileNames = Vectors.json("file-names.json")

  test("transaction ids are valid, distinct and ordered by start time") {
    val ids = (0 until 1000).map(i => TxnId.generate(1700000000000L + i))
    assert(ids.forall(TxnId.isValid))
    assert(ids.distinct.size == ids.size)
    assert(ids == ids.sorted)
  }

  test("txn-ids.json: generated ids start with the vector's time prefix") {
    for (v <- Vectors.elements(txnIds.get("generatedPrefix"))) {
      val millis = v.get("millis").asLong()
      assert(TxnId.generate(millis).take(8) == v.get("prefix").asText(), millis)
      assert(TxnId.startedAt(TxnId.generate(millis)).contains(millis))
    }
  }

  test("txn-ids.json: valid and invalid ids") {
    for (id <- Vectors.elements(txnIds.get("valid")).map(_.asText())) assert(TxnId.isValid(id), id)
    for (id <- Vectors.elements(txnIds.get("invalid")).map(_.asText())) assert(!TxnId.isValid(id), id)
  }

  test("file-names.json: data file names are built as the vectors say") {
    for (v <- Vectors.elements(fileNames.get("build"))) {
      val name = DataFileName(v.get("prefix").asText(), v.get("split").asInt(), v.get("txn").asText(),
        v.get("attempt").asLong(), v.get("suffix").asText())
      assert(name == v.get("name").asText())
    }
  }

  test("file-names.json: the transaction of a file name, or none") {
    for (v <- Vectors.elements(fileNames.get("txnOf"))) {
      val name = v.get("name").asText()
      assert(DataFileName.txnOf(name) == Vectors.text(v, "txn"), name)
    }
  }
}

package io.txcommit.log

import java.nio.charset.StandardCharsets.UTF_8

import org.scalatest.funsuite.AnyFunSuite

class RowCountSuite extends AnyFunSuite {
  private val txn = TxnId.generate()

  test("a count reads back as written") {
    assert(RowCount.decode(RowCount.encode(RowCount(txn, 1234L)), txn).contains(RowCount(txn, 1234L)))
  }

  test("a count of another txn, a negative one or a damaged file counts nothing") {
    val other = TxnId.generate()
    assert(RowCount.decode(RowCount.encode(RowCount(other, 5L)), txn).isEmpty)
    val negative = s"""{"format": "txcommit-rows", "version": 1, "txn": "$txn", "rows": -1}"""
    assert(RowCount.decode(negative.getBytes(UTF_8), txn).isEmpty)
    assert(RowCount.decode(RowCount.encode(RowCount(txn, 5L)).take(20), txn).isEmpty)
  }
}

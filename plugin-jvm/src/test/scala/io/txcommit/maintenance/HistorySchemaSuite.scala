package io.txcommit.maintenance

import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.log.CommitRecord

class HistorySchemaSuite extends AnyFunSuite {
  private def rec(txn: String, at: Long, schema: Option[String]) =
    CommitRecord(txn, "t", "j", 1L, at, Nil, None, "w", schema = schema)

  test("history marks the commits that changed the table's schema, in commit order (as txcommit log)") {
    val records = Seq(
      rec("mwrb6d3zh3ckkd3e", 10L, None), // written before the guard: changes nothing
      rec("mwrb6d3zh3ckkd3d", 20L, Some("id BIGINT")),
      rec("mwrb6d3zh3ckkd3c", 30L, Some("id BIGINT")),
      rec("mwrb6d3zh3ckkd3b", 40L, Some("id BIGINT, extra STRING")),
      rec("mwrb6d3zh3ckkd3a", 50L, Some("id BIGINT, extra STRING")))
    assert(History.schemaChanges(records) ==
      Map("mwrb6d3zh3ckkd3d" -> "id BIGINT", "mwrb6d3zh3ckkd3b" -> "id BIGINT, extra STRING"))
  }
}

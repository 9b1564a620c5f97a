package io.txcommit.log

import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.log.TableVersions.{AsOfTime, AsOfTxn}
import io.txcommit.testing.Vectors

/**
 * What a version is (docs/protocol.md, I30) and what `txcommit.asOf` names, by the golden
 * vectors Python's test_time_travel.py loads too (conformance/vectors/versions.json).
 */
class TableVersionsSuite extends AnyFunSuite {
  private val vectors = Vectors.json("versions.json")

  for (c <- Vectors.elements(vectors.get("cases"))) {
    test(s"order: ${c.get("about").asText()}") {
      val versions = TableVersions.order(
        Vectors.elements(c.get("appends")).map(a => a.get("txn").asText() -> a.get("storeTime").asLong()),
        Vectors.elements(c.get("replaces")).map(r =>
          (r.get("sequence").asLong(), r.get("txn").asText(), r.get("storeTime").asLong())),
        Option(c.get("decided")).toSeq.flatMap(Vectors.elements).map(r =>
          (r.get("txn").asText(), r.get("storeTime").asLong(), Vectors.long(r, "sequence"))))
      assert(versions.versions.map(_.txn) == Vectors.elements(c.get("order")).map(_.asText()))
      assert(versions.versions.map(_.number) == (1L to versions.versions.size.toLong))
      val groupOf = Option(c.get("decided")).toSeq.flatMap(Vectors.elements)
        .flatMap(r => Vectors.text(r, "group").map(r.get("txn").asText() -> _)).toMap
      for (q <- Vectors.elements(c.get("asOf"))) {
        val value = q.get("value").asText()
        val named = TableVersions.parseAsOf(value) match {
          case Some(AsOfTxn(t)) => versions.ofTxn(t)
          case Some(AsOfTime(_, ms)) => versions.atTime(ms)
          case None => fail(s"$value does not parse")
        }
        assert(named.map(versions.whole(_, groupOf.get).number) == Vectors.long(q, "version"), value)
      }
    }
  }

  test("asOf values: transaction ids, ISO-8601 times, and what is neither") {
    for (p <- Vectors.elements(vectors.get("parse"))) {
      val value = p.get("value").asText()
      val expected =
        if (p.has("invalid")) None
        else Vectors.text(p, "txn").map(AsOfTxn(_)).orElse(Vectors.long(p, "epochMs").map(AsOfTime(value.trim, _)))
      assert(TableVersions.parseAsOf(value) == expected, value)
    }
  }
}

package io.txcommit.log

import java.nio.charset.StandardCharsets.UTF_8

import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.CorruptDecisionException
import io.txcommit.testing.Vectors

/**
 * The decision codec of multi-table transactions against `conformance/vectors/decisions.json`,
 * which the Python decoder is tested against as well.
 */
class DecisionVectorsSuite extends AnyFunSuite {
  private val vectors = Vectors.json("decisions.json")

  private def logical(n: com.fasterxml.jackson.databind.JsonNode): Decision = Vectors.decision(n)

  for (c <- Vectors.elements(vectors.get("cases"))) {
    val file = c.get("file").asText()
    test(s"golden decision $file decodes to its logical decision and is what the encoder writes") {
      val bytes = Vectors.bytes(file)
      val expected = logical(c.get("decision"))
      assert(Decision.decode(bytes, file, c.get("group").asText()) == expected)
      assert(new String(Decision.encode(expected), UTF_8) == new String(bytes, UTF_8))
    }
  }

  for (c <- Vectors.elements(vectors.get("corrupt"))) {
    val message = c.get("message").asText()
    test(s"corrupt decision '${c.get("name").asText()}' is refused: $message") {
      val mutated = Vectors.mutate(Vectors.bytes(c.get("base").asText()), c.get("mutation"))
      val where = "/t/_txcommit/groups/g.json"
      val e = intercept[CorruptDecisionException](Decision.decode(mutated, where, c.get("group").asText()))
      assert(e.getMessage.contains(message) && e.getMessage.contains(where), e.getMessage)
    }
  }

  test("a committed decision commits exactly the txns it names") {
    val d = logical(Vectors.elements(vectors.get("cases")).head.get("decision"))
    assert(d.commits("mwrb6d3zh3ckkd3t") && d.commits("mwrb6d3zh3ckkd3u") && !d.commits("mwrb6d3zh3ckkd3q"))
    assert(!d.copy(outcome = Decision.Aborted).commits("mwrb6d3zh3ckkd3t"))
  }
}

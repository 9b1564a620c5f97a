package io.txcommit.log

import java.nio.charset.StandardCharsets.UTF_8

import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.CorruptCheckpointException
import io.txcommit.testing.Vectors

/**
 * The checkpoint codec against the golden vectors (`conformance/vectors/checkpoints.json`),
 * which the Python decoder is held to as well: golden bytes decode to their logical checkpoint
 * and re-encode byte for byte; every corrupt case is refused with the shared reason.
 */
class CheckpointVectorsSuite extends AnyFunSuite {
  private val vectors = Vectors.json("checkpoints.json")

  for (c <- Vectors.elements(vectors.get("cases"))) {
    val file = c.get("file").asText()
    test(s"golden checkpoint $file decodes to its logical checkpoint and re-encodes byte for byte") {
      val number = c.get("number").asLong()
      val expected = Vectors.checkpoint(c.get("checkpoint"), number)
      assert(CheckpointCodec.decode(Vectors.bytes(file), file, number) == expected)
      assert(new String(CheckpointCodec.encode(expected), UTF_8) == new String(Vectors.bytes(file), UTF_8))
    }
  }

  for (c <- Vectors.elements(vectors.get("corrupt"))) {
    val message = c.get("message").asText()
    test(s"corrupt checkpoint (${c.get("about").asText()}) is refused: $message") {
      val m = Option(c.get("mutation")).getOrElse(c)
      val where = "/t/_txcommit/checkpoints/c.json"
      val e = intercept[CorruptCheckpointException](CheckpointCodec.decode(
          Vectors.mutate(Vectors.bytes(c.get("base").asText()), m), where, c.get("number").asLong()))
      assert(e.getMessage.contains(message) && e.getMessage.contains(s"checkpoint $where is corrupt"), e.getMessage)
    }
  }
}

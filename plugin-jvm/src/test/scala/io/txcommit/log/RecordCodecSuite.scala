package io.txcommit.log

import java.nio.charset.StandardCharsets.UTF_8

import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.CorruptCommitRecordException
import io.txcommit.testing.Vectors

/**
 * The record codec against the golden vectors of `conformance/vectors/` (records.json,
 * corrupt-records.json, paths.json), which the Python codec is tested against as well.
 */
class RecordCodecSuite extends AnyFunSuite {
  private val golden = Vectors.elements(Vectors.json("records.json").get("records"))

  for (entry <- golden) {
    val file = entry.get("file").asText()
    val expected = Vectors.record(entry.get("record"))
    val txn = entry.get("txn").asText()

    test(s"golden $file decodes to its logical record") {
      val bytes = Vectors.bytes(file)
      assert(RecordCodec.decode(bytes, file, txn) == expected)
      Vectors.long(entry, "sequence").foreach { seq =>
        assert(RecordCodec.decodeReplacement(bytes, file, seq) == expected, "as replace/<sequence>.json")
      }
    }

    test(s"golden $file is what the encoder writes, byte for byte") {
      val golden = Vectors.text(entry, "encodesAs").getOrElse {
        assert(entry.get("reencodes").asBoolean(), s"$file: neither reencodes nor encodesAs")
        file
      }
      val written = RecordCodec.encode(expected)
      assert(new String(written, UTF_8) == new String(Vectors.bytes(golden), UTF_8))
      assert(java.util.Arrays.equals(written, Vectors.bytes(golden)))
    }
  }

  for (c <- Vectors.elements(Vectors.json("corrupt-records.json").get("cases"))) {
    val message = c.get("message").asText()
    test(s"corrupt record '${c.get("name").asText()}' is refused: $message") {
      val base = new String(Vectors.bytes(c.get("base").asText()), UTF_8)
      val m = c.get("mutation")
      val mutated =
        if (m.has("keepBytes")) Vectors.bytes(c.get("base").asText()).take(m.get("keepBytes").asInt())
        else if (m.has("content")) m.get("content").asText().getBytes(UTF_8)
        else if (m.has("replace")) {
          val from = m.get("replace").get(0).asText()
          val to = m.get("replace").get(1).asText()
          assert(base.contains(from))
          base.replace(from, to).getBytes(UTF_8)
        } else base.getBytes(UTF_8)
      val where = "/t/_txcommit/r.json"
      val e = intercept[CorruptCommitRecordException](Vectors.long(c, "sequence") match {
        case Some(seq) => RecordCodec.decodeReplacement(mutated, where, seq)
        case None => RecordCodec.decode(mutated, where, Vectors.text(c, "txn").get)
      })
      assert(e.getMessage.contains(message) && e.getMessage.contains(where), e.getMessage)
    }
  }

  test("a record naming any unsafe path of paths.json is refused, in added and in removed") {
    val unsafe = Vectors.elements(Vectors.json("paths.json").get("cases")).filterNot(_.get("unsafe").isNull)
      .map(_.get("path").asText())
    assert(unsafe.size >= 10)
    val append = new String(Vectors.bytes("records/append-v2.json"), UTF_8)
    val overwrite = new String(Vectors.bytes("records/overwrite-partitions-v2.json"), UTF_8)
    for (bad <- unsafe) {
      val inAdded = append.replace("part-00001-tid-mwrb6d3zh3ckkd3q-118.c000.snappy.parquet", Vectors.jsonEscaped(bad))
      val e = intercept[CorruptCommitRecordException](
        RecordCodec.decode(inAdded.getBytes(UTF_8), "r.json", "mwrb6d3zh3ckkd3q"))
      assert(e.getMessage.contains("outside its table directory"), bad)
      val inRemoved = overwrite.replace("k=2/old.parquet", Vectors.jsonEscaped(bad))
      intercept[CorruptCommitRecordException](RecordCodec.decodeReplacement(inRemoved.getBytes(UTF_8), "r.json", 3L))
    }
  }

  test("a truncated record is rejected with an error naming the file") {
    val bytes = Vectors.bytes("records/append-v2.json")
    val e = intercept[CorruptCommitRecordException] {
      RecordCodec.decode(bytes.take(bytes.length / 2), "/t/_txcommit/commits/x.json", "mwrb6d3zh3ckkd3q")
    }
    assert(e.getMessage.contains("/t/_txcommit/commits/x.json") && e.getMessage.contains("truncated"))
  }
}

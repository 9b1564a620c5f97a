package io.txcommit.log

import java.nio.charset.StandardCharsets.UTF_8

import scala.jdk.CollectionConverters._

import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.{CommitConflictException, CorruptTablePropertiesException, MaintenanceException}
import io.txcommit.testing.{ForwardingCommitStore, InMemoryCommitStore, Vectors}

/**
 * The table's properties (`_txcommit/properties/<n>.json`): the codec against the golden vectors
 * (`conformance/vectors/properties.json`, which the Python decoder is held to as well), and
 * changes against the in-memory store, racing ones included.
 */
class TablePropertiesSuite extends AnyFunSuite {
  private val vectors = Vectors.json("properties.json")
  private val layout = LogLayout(new Path("file:/t"))
  private def manifests(on: Boolean) = Map(TableProperties.Manifests -> on.toString)

  for (c <- Vectors.elements(vectors.get("cases"))) {
    val file = c.get("file").asText()
    test(s"golden table properties $file decode to their logical properties and re-encode byte for byte") {
      val p = c.get("properties")
      val expected = TableProperties(p.get("number").asLong(),
        p.get("values").properties().asScala.map(e => e.getKey -> e.getValue.asText()).toMap,
        p.get("setAt").asLong(), Vectors.text(p, "appId"), p.get("writer").asText())
      assert(TableProperties.decode(Vectors.bytes(file), file, c.get("number").asLong()) == expected)
      assert(new String(TableProperties.encode(expected), UTF_8) == new String(Vectors.bytes(file), UTF_8))
    }
  }

  for (c <- Vectors.elements(vectors.get("corrupt"))) {
    val message = c.get("message").asText()
    test(s"corrupt table properties (${c.get("about").asText()}) are refused: $message") {
      val where = "/t/_txcommit/properties/p.json"
      val e = intercept[CorruptTablePropertiesException](TableProperties.decode(
          Vectors.mutate(Vectors.bytes(c.get("base").asText()), c), where, c.get("number").asLong()))
      assert(e.getMessage.contains(message) && e.getMessage.contains(s"table properties $where are corrupt"),
        e.getMessage)
    }
  }

  test("a change creates the next number holding every property; one already in force writes nothing") {
    val store = new InMemoryCommitStore
    assert(TableProperties.read(store, layout).isEmpty)
    val first = TableProperties.set(store, layout, manifests(on = true), Some("app-1"))
    assert(first.number == 1 && first.manifests.contains(true) && first.appId.contains("app-1"))
    assert(TableProperties.set(store, layout, manifests(on = true), None) == first)
    assert(store.list(layout.propertiesDir).size == 1)
    val second = TableProperties.set(store, layout, manifests(on = false), None)
    assert(second.number == 2 && TableProperties.read(store, layout).contains(second))
  }

  test("a key a later version set is kept by a change made by this one") {
    val store = new InMemoryCommitStore
    store.createExclusive(layout.properties(2), Vectors.bytes("properties/properties-v1.json"))
    val next = TableProperties.set(store, layout, manifests(on = false), None)
    assert(next.number == 3 && next.values == Map("manifests" -> "false", "zz.later" -> "kept as written"))
  }

  test("two racing changes both apply, in number order: the loser applies its change on top of the winner's") {
    val store = new InMemoryCommitStore
    TableProperties.set(store, layout, manifests(on = false), None)
    // Another writer creates number 2 (a key of its own) between this change's read and its create.
    val racing = new ForwardingCommitStore(store) {
      private var raced = false
      override def createExclusive(target: Path, bytes: Array[Byte]): Unit = {
        if (!raced && target == layout.properties(2)) {
          raced = true
          TableProperties.set(store, layout, Map("zz.other" -> "x"), None)
        }
        super.createExclusive(target, bytes)
      }
    }
    val mine = TableProperties.set(racing, layout, manifests(on = true), None)
    assert(mine.number == 3 && mine.values == Map("manifests" -> "true", "zz.other" -> "x"))
    assert(TableProperties.read(store, layout).contains(mine))
    assert(TableProperties.decode(store.read(layout.properties(2)).get, "2", 2).values ==
        Map("manifests" -> "false", "zz.other" -> "x"), "the winner's change stands as it was made")
  }

  test("a change that keeps losing the number gives up with a conflict naming the table, recording nothing") {
    val store = new InMemoryCommitStore
    val busy = new ForwardingCommitStore(store) {
      private var n = 0
      override def createExclusive(target: Path, bytes: Array[Byte]): Unit = {
        n += 1
        TableProperties.set(store, layout, Map("zz.other" -> n.toString), None)
        super.createExclusive(target, bytes)
      }
    }
    val e = intercept[CommitConflictException](TableProperties.set(busy, layout, manifests(on = true), None))
    assert(e.getMessage.contains("file:/t") && e.getMessage.contains("not recorded"), e.getMessage)
    assert(!TableProperties.read(store, layout).exists(_.manifests.isDefined))
  }

  test("the newest object corrupt: an error naming it, never an older number's answer") {
    val store = new InMemoryCommitStore
    TableProperties.set(store, layout, manifests(on = true), None)
    store.createExclusive(layout.properties(2), "not json".getBytes(UTF_8))
    val e = intercept[CorruptTablePropertiesException](TableProperties.read(store, layout))
    assert(e.getMessage.contains("/t/_txcommit/properties/00000000000000000002.json"), e.getMessage)
    intercept[CorruptTablePropertiesException](TableProperties.set(store, layout, manifests(on = false), None))
  }

  test("ALTER's validation: an unknown key or a value the key does not take is an error naming both") {
    assert(TableProperties.validated("/t", " Manifests ", "TRUE") == ("manifests" -> "true"))
    val unknown = intercept[MaintenanceException](TableProperties.validated("/t", "manifest", "true"))
    assert(unknown.getMessage.contains("unknown table property 'manifest'") && unknown.getMessage.contains("/t"))
    val bad = intercept[MaintenanceException](TableProperties.validated("/t", "manifests", "on"))
    assert(bad.getMessage.contains("'manifests' cannot be 'on'") && bad.getMessage.contains("false or true"))
  }
}

package io.txcommit.commit

import org.apache.spark.internal.io.FileCommitProtocol.TaskCommitMessage
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.UnsupportedWriteException
import io.txcommit.store.StagedFile
import io.txcommit.testing.{MemTable, Vectors}

class CollectManifestsSuite extends AnyFunSuite {
  private def msg(files: String*) = new TaskCommitMessage(TaskManifest("a", files.map(StagedFile(_, 1L))))

  test("gathers the files of every committed attempt, sorted, without touching the store") {
    val t = new MemTable
    val out = CollectManifests.run(t.context(), Seq(msg("k=2/b", "a"), msg("k=1/c")), new StageTimings)
    assert(out.map(_.path) == Seq("a", "k=1/c", "k=2/b"))
    assert(t.store.calls.isEmpty)
  }

  test("refuses every unsafe path of paths.json, naming it and why") {
    val t = new MemTable
    val unsafe = Vectors.elements(Vectors.json("paths.json").get("cases")).filterNot(_.get("unsafe").isNull)
    for (c <- unsafe) {
      val bad = c.get("path").asText()
      val e = intercept[UnsupportedWriteException](
        CollectManifests.run(t.context(), Seq(msg("ok", bad)), new StageTimings))
      assert(e.getMessage.contains(s"'$bad'") && e.getMessage.contains(c.get("unsafe").asText()), bad)
    }
  }

  test("refuses two attempts naming the same file, and a message that is not a manifest") {
    val t = new MemTable
    val dup =
      intercept[IllegalStateException](CollectManifests.run(t.context(), Seq(msg("x"), msg("x")), new StageTimings))
    assert(dup.getMessage.contains("same file x"))
    val other = intercept[IllegalStateException](
      CollectManifests.run(t.context(), Seq(new TaskCommitMessage("nope")), new StageTimings))
    assert(other.getMessage.contains("java.lang.String"))
  }
}

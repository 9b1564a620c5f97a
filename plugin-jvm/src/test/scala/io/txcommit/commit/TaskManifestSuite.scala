package io.txcommit.commit

import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.TaskFileMissingException
import io.txcommit.store.StagedFile
import io.txcommit.testing.MemTable

class TaskManifestSuite extends AnyFunSuite {
  test("names every file the attempt wrote, with its size") {
    val t = new MemTable
    val written = Seq("k=1/a" -> t.put("k=1/a", 5), "b" -> t.put("b", 7))
    assert(TaskManifest.of(t.store, t.table, "attempt_1", written) ==
      TaskManifest("attempt_1", Seq(StagedFile("k=1/a", 5L), StagedFile("b", 7L))))
  }

  test("a file deleted under the task fails the attempt, naming the file, never a smaller manifest") {
    val t = new MemTable
    val written = Seq("a" -> t.put("a"), "b" -> t.put("b"))
    t.store.delete(t.path("b"))
    val e = intercept[TaskFileMissingException](TaskManifest.of(t.store, t.table, "attempt_2", written))
    assert(e.getMessage.contains("attempt_2") && e.getMessage.contains(t.path("b").toString.stripPrefix("file:")))
    assert(e.getMessage.contains("Spark retries it"))
  }
}

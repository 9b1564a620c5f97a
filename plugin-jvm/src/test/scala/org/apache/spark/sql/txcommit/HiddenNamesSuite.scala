package org.apache.spark.sql.txcommit

import java.nio.file.Files

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.execution.datasources.InMemoryFileIndex
import org.apache.spark.util.HadoopFSUtils
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.log.TableState
import io.txcommit.testing.Vectors

/**
 * `conformance/vectors/hidden-names.json` states Spark's rule: every case is checked against
 * Spark's own name filter and against a real Spark listing of a directory holding every case,
 * so the Python readers (which check the same vectors) hide exactly what Spark hides. In this
 * package because Spark's listing classes are private[spark].
 */
class HiddenNamesSuite extends AnyFunSuite with BeforeAndAfterAll {
  private val cases: Seq[(String, Boolean)] =
    Vectors.elements(Vectors.json("hidden-names.json").get("cases"))
      .map(c => c.get("path").asText() -> c.get("hidden").asBoolean())

  private lazy val spark = SparkSession.builder().master("local[1]").appName("txcommit-hidden")
    .config("spark.ui.enabled", "false").getOrCreate()

  override protected def afterAll(): Unit =
    try spark.stop()
    finally super.afterAll()

  test("every directory named by a vector is listed by Spark's name filter unless the path is hidden") {
    for ((path, hidden) <- cases) {
      val dirs = path.split("/").dropRight(1)
      if (!hidden) assert(!dirs.exists(d => HadoopFSUtils.shouldFilterOutPathName(d)), path)
    }
  }

  test("Spark's listing of a directory holding every case reads exactly the cases not hidden") {
    val root = Files.createTempDirectory("txcommit-hidden")
    cases.foreach { case (path, _) =>
      val f = root.resolve(path)
      Files.createDirectories(f.getParent)
      Files.write(f, Array[Byte](1, 2, 3)) // Spark skips empty files
    }
    val base = new Path(root.toUri.toString.stripSuffix("/"))
    // recursiveFileLookup: no partition discovery (the cases' directories would conflict)
    val index = new InMemoryFileIndex(spark, Seq(base), Map("recursiveFileLookup" -> "true"), None)
    val read = index.listFiles(Nil, Nil).flatMap(_.files).map(f =>
      base.toUri.relativize(f.getPath.toUri).getPath).toSet
    assert(read == cases.filterNot(_._2).map(_._1).toSet)
  }

  test("TableState.isData (VACUUM's data files) is the same rule") {
    for ((path, hidden) <- cases) assert(TableState.isData(path) == !hidden, path)
  }
}

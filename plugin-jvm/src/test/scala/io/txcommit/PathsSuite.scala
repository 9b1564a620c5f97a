package io.txcommit

import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.testing.Vectors

/** Path rules; the safe and unsafe relative paths are those of `conformance/vectors/paths.json`. */
class PathsSuite extends AnyFunSuite {
  private val cases = Vectors.elements(Vectors.json("paths.json").get("cases"))

  test("paths.json: every unsafe path is refused with the vector's reason, every safe one accepted") {
    assert(cases.exists(c => !c.get("unsafe").isNull) && cases.exists(_.get("unsafe").isNull))
    for (c <- cases) {
      val path = c.get("path").asText()
      assert(Paths.unsafeRelativePath(path) == Vectors.text(c, "unsafe"), s"'$path'")
    }
  }

  test("paths relativise only below their root") {
    val root = new Path("file:/data/t")
    assert(Paths.relativize(root, new Path("file:/data/t/k=1/f")).contains("k=1/f"))
    assert(Paths.relativize(root, new Path("file:/data/t2/f")).isEmpty)
  }

  test("credentials never appear in displayed paths") {
    assert(!Paths.display(new Path("s3a://AKIDEXAMPLE:secret@bucket/t")).contains("secret"))
    assert(!Paths.display(new Path("abfss://c:secret@acct.dfs.core.windows.net/t")).contains("secret"))
  }

  test("an Azure container is shown: it names the place, it is no credential") {
    val p = "abfss://lake@acct.dfs.core.windows.net/t"
    assert(Paths.display(new Path(p)) == p)
  }
}

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

  test("a path below a directory is the one new Path(dir, rel) makes, whatever the characters") {
    val dirs = Seq("s3a://bucket/t", "s3a://bucket/t/", "s3a://bucket/a table", "s3a://bucket/t%25x", "file:/tmp/x",
      "file:///tmp/x", "hdfs://nn:8020/a/b", "gs://b", "abfss://c@acct.dfs.core.windows.net/t", "/local/t")
    val rels = Seq("f.parquet", "p=1/part-00000-abc.c000.snappy.parquet", "a/b=2/c", "p=a b/f", "p=a%3Ab/f",
      "p=x:y/f", "a//b", "./a", "a/../b", "a/./b", "p=\u00e9/f", "_SUCCESS", ".hidden/f", "a+b,c;d/f", "a/b/")
    for (d <- dirs; r <- rels) {
      val dir = new Path(d)
      val expected = scala.util.Try(new Path(dir, r))
      val got = scala.util.Try(Paths.below(dir)(r))
      assert(got.isSuccess == expected.isSuccess, s"'$d' + '$r'")
      for (e <- expected; g <- got) {
        assert(g == e && g.hashCode == e.hashCode && g.toString == e.toString && g.toUri == e.toUri, s"'$d' + '$r'")
        assert(g.getParent == e.getParent && g.getName == e.getName, s"'$d' + '$r'")
      }
    }
  }
}

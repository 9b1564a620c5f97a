package io.txcommit.store

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{Path, RawLocalFileSystem}
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.UnsupportedStoreException
import io.txcommit.store.{AdapterDeclaration, Adapters, Primitive}

class AdaptersSuite extends AnyFunSuite {
  private def conf(pairs: (String, String)*): Configuration = {
    val c = new Configuration()
    c.set("fs.nosuch.impl", classOf[RawLocalFileSystem].getName)
    pairs.foreach { case (k, v) => c.set(k, v) }
    c
  }

  test("built-in adapters are found by ServiceLoader with their packaged declarations") {
    val byName = Adapters.all.map(a => a.name -> a.declaration).toMap
    assert(byName("local").primitive == Primitive.Rename && byName("local").schemes == Seq("file"))
    assert(byName("hdfs").schemes.contains("hdfs") && byName("hdfs").exclusiveCreate)
    assert(Adapters.forPath(new Path("file:/tmp/t"), conf()).name == "local")
  }

  test("an unknown scheme fails with the list of known adapters") {
    val e = intercept[UnsupportedStoreException](Adapters.forPath(new Path("nosuch://b/t"), conf()))
    assert(e.getMessage.contains("'nosuch'") && e.getMessage.contains("local (rename; schemes file)"))
    assert(e.getMessage.contains("spark.txcommit.adapter.nosuch"))
  }

  test("a per-scheme conf picks the adapter; unknown or mismatched names fail clearly") {
    val table = new Path("file:/tmp/t")
    assert(Adapters.forPath(table, conf("spark.txcommit.adapter.file" -> "local")).name == "local")
    val unknown = intercept[UnsupportedStoreException](
      Adapters.forPath(table, conf("spark.txcommit.adapter.file" -> "ftp-magic")))
    assert(unknown.getMessage.contains("spark.txcommit.adapter.file") &&
      unknown.getMessage.contains("'ftp-magic'") && unknown.getMessage.contains("hdfs (rename"))
    val mismatch = intercept[UnsupportedStoreException](
      Adapters.forPath(table, conf("spark.txcommit.adapter.file" -> "hdfs")))
    assert(mismatch.getMessage.contains("does not serve scheme 'file'"))
  }

  test("a declaration with an unknown primitive or a bad field is refused, naming the file") {
    def parse(json: String) = AdapterDeclaration.parse(json.getBytes("UTF-8"), "adapters/x/adapter.json")
    val ok = """{"format":"txcommit-adapter","formatVersion":1,"name":"x","title":"X",
      "primitive":"rename","exclusiveCreate":true,"listing":"consistent","schemes":["x"],"defaultFor":[]}"""
    assert(parse(ok).name == "x")
    val badPrimitive = intercept[UnsupportedStoreException](parse(ok.replace("\"rename\"", "\"teleport\"")))
    assert(badPrimitive.getMessage.contains("adapters/x/adapter.json") &&
      badPrimitive.getMessage.contains("unknown primitive 'teleport'"))
    val badDefault =
      intercept[UnsupportedStoreException](parse(ok.replace("\"defaultFor\":[]", "\"defaultFor\":[\"y\"]")))
    assert(badDefault.getMessage.contains("'defaultFor' names scheme 'y'"))
    intercept[UnsupportedStoreException](parse(ok.take(40)))
  }

  test("on the local file system a published record's directory entry is synced to disk") {
    val t = new io.txcommit.testing.TempTable
    val store = Adapters.open(t.table, t.conf)
    store.createExclusive(new Path(t.table, "_txcommit/commits/r.json"), Array[Byte](1))
    store.writeReplacing(new Path(t.table, "_SUCCESS"), Array[Byte](2))
    val out = store.openAtomic(new Path(t.table, "offsets/0"), overwrite = false)
    out.write(3); out.close()
    assert(store.requests.snapshot.get("FSYNC_DIR").contains(3L), "after the link, the rename and the checkpoint file")
  }
}

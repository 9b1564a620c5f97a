package io.txcommit.manifest

import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.log.{LogLayout, TxnId}
import io.txcommit.manifest.ManifestScope.Partitions
import io.txcommit.testing.{ForwardingCommitStore, MemLogTable}
import io.txcommit.testing.InMemoryCommitStore.Op

/** Manifests from a table's committed state: data on a local disk, the log in memory. */
class ManifestWriterSuite extends AnyFunSuite {
  private def generate(t: MemLogTable) = ManifestWriter.generate(t.table, t.store, t.conf)

  test("each partition's manifest lists exactly its visible files, fully qualified, one a line") {
    val t = new MemLogTable
    val a = t.append("k=1", "k=2")
    val failedAttempt = t.dataFile("k=2", a.txn, split = 1, attempt = 9L)
    val uncommitted = t.dataFile("k=1", TxnId.generate())
    val plain = t.touch("k=2/part-0.parquet") // written without txcommit: visible
    t.touch("k=2/_temporary/0/part-1.parquet") // hidden names are not data
    val out = generate(t)
    val (k1, k2) = (a.added(0).path, a.added(1).path)
    assert(t.manifest("k=1").contains(Seq(t.qualified(k1))))
    assert(t.manifest("k=2").contains(Seq(t.qualified(k2), t.qualified(plain)).sorted))
    assert(!Seq(failedAttempt, uncommitted).map(t.qualified).exists(f =>
        t.manifest("k=2").get.contains(f) ||
          t.manifest("k=1").get.contains(f)))
    assert(t.qualified(k1).startsWith("file:/"))
    assert(out.whole && out.manifests.map(m => (m.partition, m.files, m.deleted)) ==
      Seq(("k=1", 1, false), ("k=2", 2, false)))
    assert(out.manifests.head.manifest == new Path(t.table, "_symlink_format_manifest/k=1/manifest"))
    assert(t.store.exists(t.layout.manifestState), "a pass over every partition records the log it used")
  }

  test("an unpartitioned table has one manifest, _symlink_format_manifest/manifest") {
    val t = new MemLogTable
    val a = t.append("", "")
    generate(t)
    assert(t.manifest("").contains(a.added.map(f => t.qualified(f.path)).sorted))
    assert(t.store.paths.count(_.toString.endsWith("/manifest")) == 1)
    assert(LogLayout.partitionOfManifest("_symlink_format_manifest/manifest").contains(""))
    assert(LogLayout.partitionOfManifest("_symlink_format_manifest/k=1/j=2/manifest").contains("k=1/j=2"))
    assert(LogLayout.partitionOfManifest("k=1/manifest").isEmpty)
  }

  test("an overwrite's removed files leave the manifests; a partition left with none loses its manifest") {
    val t = new MemLogTable
    val a = t.append("k=1", "k=2")
    generate(t)
    val o = t.replace(1L, Seq(""), Seq("k=1"), removed = a.added.map(_.path))
    val out = generate(t)
    assert(t.manifest("k=1").contains(o.added.map(f => t.qualified(f.path))))
    assert(t.manifest("k=2").isEmpty, "no file of k=2 is visible: its manifest is deleted, as Delta does")
    assert(out.manifests.map(m => (m.partition, m.files, m.deleted)) == Seq(("k=1", 1, false), ("k=2", 0, true)))
  }

  test("a pass over some partitions rewrites only those and leaves the recorded state alone") {
    val t = new MemLogTable
    t.append("k=1", "k=2")
    val out = ManifestWriter.generate(t.table, t.store, t.conf, Partitions(Set("k=2")))
    assert(out.manifests.map(_.partition) == Seq("k=2") && !out.whole)
    assert(t.manifest("k=1").isEmpty && t.manifest("k=2").isDefined)
    assert(!t.store.exists(t.layout.manifestState))
  }

  test("after a commit, only its partitions are rewritten when the manifests were whole before it") {
    val t = new MemLogTable
    t.append("k=1", "k=2")
    generate(t)
    val b = t.append("k=3")
    val before = t.store.calls.size
    val out = ManifestWriter.afterCommit(t.table, t.store, t.conf, b)
    assert(out.whole && out.manifests.map(_.partition) == Seq("k=3"))
    val written = t.store.calls.drop(before).collect { case (Op.WriteReplacing, p) => p }
    assert(written == Seq(t.layout.manifest("k=3"), t.layout.manifestState))
  }

  test("after a commit whose predecessor's pass never ran (crash, manifests off), every partition is rewritten") {
    val t = new MemLogTable
    t.append("k=1")
    generate(t)
    val skipped = t.append("k=1", "k=2") // committed; its driver died before its manifests
    val c = t.append("k=3")
    val out = ManifestWriter.afterCommit(t.table, t.store, t.conf, c)
    assert(out.manifests.map(_.partition) == Seq("k=1", "k=2", "k=3"))
    assert(skipped.added.map(f => t.qualified(f.path)).forall(f =>
        t.manifest("k=1").get.contains(f) || t.manifest("k=2").get.contains(f)))
    // and the pass after it is incremental again
    val d = t.append("k=4")
    assert(ManifestWriter.afterCommit(t.table, t.store, t.conf, d).manifests.map(_.partition) == Seq("k=4"))
  }

  test("a replacing commit rewrites the partitions it removed files from") {
    val t = new MemLogTable
    val a = t.append("k=1", "k=2")
    generate(t)
    val o = t.replace(1L, Seq("k=2"), Seq("k=3"), removed = a.added.filter(_.path.startsWith("k=2/")).map(_.path))
    val out = ManifestWriter.afterCommit(t.table, t.store, t.conf, o)
    assert(out.manifests.map(m => (m.partition, m.deleted)) == Seq(("k=2", true), ("k=3", false)))
    assert(t.manifest("k=1").isDefined && t.manifest("k=2").isEmpty)
  }

  test("a commit that lands while the manifests are written is in them when the pass ends") {
    val t = new MemLogTable
    t.append("k=1")
    generate(t)
    val b = t.append("k=2")
    var late = Option.empty[io.txcommit.log.CommitRecord]
    // Another writer commits to k=3 just after this pass wrote its first manifest.
    val racing = new ForwardingCommitStore(t.store) {
      override def writeReplacing(target: Path, bytes: Array[Byte]): Unit = {
        super.writeReplacing(target, bytes)
        if (late.isEmpty && target.getName == LogLayout.ManifestName) late = Some(t.append("k=3"))
      }
    }
    val out = ManifestWriter.afterCommit(t.table, racing, t.conf, b)
    assert(out.whole && out.manifests.map(_.partition) == Seq("k=2", "k=3"))
    assert(t.manifest("k=3").contains(late.get.added.map(f => t.qualified(f.path))))
    val d = t.append("k=4") // the recorded state includes the late commit: incremental again
    assert(ManifestWriter.afterCommit(t.table, t.store, t.conf, d).manifests.map(_.partition) == Seq("k=4"))
  }

  test("a log that keeps changing leaves the recorded state, so the next pass rewrites every partition") {
    val t = new MemLogTable
    t.append("k=1")
    generate(t)
    val b = t.append("k=2")
    val busy = new ForwardingCommitStore(t.store) {
      override def writeReplacing(target: Path, bytes: Array[Byte]): Unit = {
        super.writeReplacing(target, bytes)
        if (target.getName == LogLayout.ManifestName) t.append("k=9")
      }
    }
    val out = ManifestWriter.afterCommit(t.table, busy, t.conf, b)
    assert(!out.whole)
    val c = t.append("k=5")
    assert(ManifestWriter.afterCommit(t.table, t.store, t.conf, c).manifests.map(_.partition).toSet ==
      Set("k=1", "k=2", "k=5", "k=9"))
  }

  test("a store failure fails the pass and leaves the recorded state as it was") {
    val t = new MemLogTable
    t.append("k=1")
    generate(t)
    val state = t.store.read(t.layout.manifestState).map(_.toSeq)
    val b = t.append("k=2")
    t.store.failOn(Op.WriteReplacing, _ == t.layout.manifest("k=2"))
    intercept[java.io.IOException](ManifestWriter.afterCommit(t.table, t.store, t.conf, b))
    assert(t.store.read(t.layout.manifestState).map(_.toSeq) == state)
  }
}

package io.txcommit.commit

import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.InvalidConfException
import io.txcommit.conf.TxCommitConf
import io.txcommit.fault.HaltPoint
import io.txcommit.log.TableProperties
import io.txcommit.manifest.ManifestSwitch
import io.txcommit.testing.InMemoryCommitStore.Op
import io.txcommit.testing.MemLogTable

/** The manifest stage alone, and where DerivedWork runs it, against the in-memory store. */
class WriteManifestsSuite extends AnyFunSuite {
  private def on(t: MemLogTable): MemLogTable = { t.conf.set(TxCommitConf.Manifests, "true"); t }

  test("the stage writes the manifests of the commit's partitions, timed under its name") {
    val t = new MemLogTable
    val a = t.append("k=1", "k=2")
    val timings = new StageTimings
    val out = WriteManifests.run(t.context(a.txn), a, timings)
    assert(out.whole && out.manifests.map(_.partition) == Seq("k=1", "k=2"))
    assert(t.manifest("k=1").contains(Seq(t.qualified(a.added.head.path))))
    assert(timings.all.map(_._1) == Seq("write-manifests"))
  }

  test("a store failure fails the stage (DerivedWork is what keeps it from failing the job)") {
    val t = new MemLogTable
    val a = t.append("k=1")
    t.store.failOn(Op.WriteReplacing)
    intercept[java.io.IOException](WriteManifests.run(t.context(a.txn), a, new StageTimings))
  }

  test("derived work writes no manifest unless they are switched on") {
    val t = new MemLogTable
    val a = t.append("k=1")
    val timings = new StageTimings
    DerivedWork(t.context(a.txn), a, timings, DerivedWork.Inline)
    assert(!timings.all.map(_._1).contains(WriteManifests.name))
    assert(t.manifest("k=1").isEmpty)
  }

  test("switched on, derived work writes them after _SUCCESS and the checkpoint, before the clean-up") {
    val t = on(new MemLogTable)
    val a = t.append("k=1")
    val timings = new StageTimings
    DerivedWork(t.context(a.txn), a, timings, DerivedWork.Inline)
    assert(timings.all.map(_._1) == Seq("copy-replace-record", "write-success-summary", "write-checkpoint",
      "write-manifests", "cleanup-attempts", "cleanup-staging"))
    assert(t.manifest("k=1").contains(Seq(t.qualified(a.added.head.path))))
  }

  test("a write's txcommit.manifests option wins over the session's switch, both ways") {
    val t = on(new MemLogTable)
    t.conf.set(TxCommitConf.ManifestsOption, "false")
    val a = t.append("k=1")
    DerivedWork(t.context(a.txn), a, new StageTimings, DerivedWork.Inline)
    assert(t.manifest("k=1").isEmpty)
    t.conf.unset(TxCommitConf.Manifests)
    t.conf.set(TxCommitConf.ManifestsOption, "true")
    DerivedWork(t.context(a.txn), a, new StageTimings, DerivedWork.Inline)
    assert(t.manifest("k=1").isDefined)
    t.conf.set(TxCommitConf.ManifestsOption, "yes")
    assert(intercept[InvalidConfException](ManifestSwitch.option(t.conf)).key == TxCommitConf.ManifestsOption)
  }

  test("a failure writing manifests never fails the commit; the next commit's pass repairs them") {
    val t = on(new MemLogTable)
    val a = t.append("k=1")
    t.store.failOn(Op.WriteReplacing, _ == t.layout.manifest("k=1"))
    DerivedWork(t.context(a.txn), a, new StageTimings, DerivedWork.Inline) // must not throw
    assert(t.manifest("k=1").isEmpty && t.store.exists(t.layout.commitRecord(a.txn)))
    val b = t.append("k=2")
    DerivedWork(t.context(b.txn), b, new StageTimings, DerivedWork.Inline)
    assert(t.manifest("k=1").contains(Seq(t.qualified(a.added.head.path))))
    assert(t.manifest("k=2").contains(Seq(t.qualified(b.added.head.path))))
  }

  test("a driver halted before _SUCCESS leaves no manifest; the next commit rewrites every partition") {
    val t = on(new MemLogTable)
    val a = t.append("k=1")
    t.conf.set(TxCommitConf.HaltAt, HaltPoint.JobBeforeSuccess.name)
    val halted = HaltPoint.simulated(DerivedWork(t.context(a.txn), a, new StageTimings, DerivedWork.Inline))
    assert(halted == Left(HaltPoint.JobBeforeSuccess) && t.manifest("k=1").isEmpty)
    t.conf.unset(TxCommitConf.HaltAt)
    val b = t.append("k=2")
    DerivedWork(t.context(b.txn), b, new StageTimings, DerivedWork.Inline)
    assert(t.manifest("k=1").contains(Seq(t.qualified(a.added.head.path))))
    assert(t.manifest("k=2").isDefined)
  }

  test("rolling the newest commit forward at the next write's setup writes its manifests") {
    val t = on(new MemLogTable)
    val a = t.append("k=1") // its driver died after the record: no _SUCCESS, no manifest
    assert(RollForward.run(t.context(), (), new StageTimings).contains(a.txn))
    assert(t.manifest("k=1").contains(Seq(t.qualified(a.added.head.path))))
  }

  private def setProperty(t: MemLogTable, on: Boolean): Unit =
    TableProperties.set(t.store, t.layout, Map(TableProperties.Manifests -> on.toString), None)

  test("the table's property on: a commit with neither the option nor the session's switch writes them") {
    val t = new MemLogTable
    setProperty(t, on = true)
    val a = t.append("k=1")
    val timings = new StageTimings
    DerivedWork(t.context(a.txn), a, timings, DerivedWork.Inline)
    assert(timings.all.map(_._1).contains(WriteManifests.name))
    assert(t.manifest("k=1").contains(Seq(t.qualified(a.added.head.path))))
  }

  test("precedence: the write's option, then the table's property, then the session's switch") {
    val t = on(new MemLogTable) // the session says on
    setProperty(t, on = false)
    val a = t.append("k=1")
    DerivedWork(t.context(a.txn), a, new StageTimings, DerivedWork.Inline)
    assert(t.manifest("k=1").isEmpty, "the table's property off wins over the session's switch on")
    t.conf.set(TxCommitConf.ManifestsOption, "true")
    DerivedWork(t.context(a.txn), a, new StageTimings, DerivedWork.Inline)
    assert(t.manifest("k=1").isDefined, "the write's option wins over the table's property")
    t.conf.unset(TxCommitConf.ManifestsOption)
    t.conf.unset(TxCommitConf.Manifests)
    setProperty(t, on = true)
    t.conf.set(TxCommitConf.ManifestsOption, "false")
    val b = t.append("k=2")
    DerivedWork(t.context(b.txn), b, new StageTimings, DerivedWork.Inline)
    assert(t.manifest("k=2").isEmpty, "the write's option off skips this write's manifests")
    assert(TableProperties.read(t.store, t.layout).flatMap(_.manifests).contains(true), "and leaves the property on")
  }

  test("job setup of a write with txcommit.manifests=true records the table's property; later writers follow it") {
    val t = new MemLogTable
    t.conf.set(TxCommitConf.ManifestsOption, "true")
    val timings = new StageTimings
    JobSetup.run(t.context(), WriteIntent(), streaming = true)
    assert(TableProperties.read(t.store, t.layout).flatMap(_.manifests).contains(true))
    JobSetup.run(t.context(), WriteIntent(), streaming = true)
    assert(t.store.list(t.layout.propertiesDir).size == 1, "a property already in force is not written again")
    t.conf.unset(TxCommitConf.ManifestsOption)
    val a = t.append("k=1")
    DerivedWork(t.context(a.txn), a, timings, DerivedWork.Inline)
    assert(t.manifest("k=1").contains(Seq(t.qualified(a.added.head.path))))
  }

  test("a write with txcommit.manifests=false records nothing, and one without the option reads no property at setup") {
    val t = new MemLogTable
    t.conf.set(TxCommitConf.ManifestsOption, "false")
    JobSetup.run(t.context(), WriteIntent(), streaming = true)
    t.conf.unset(TxCommitConf.ManifestsOption)
    JobSetup.run(t.context(), WriteIntent(), streaming = true)
    assert(!t.store.calls.exists(_._2.toString.contains("/properties")), t.store.calls)
    assert(t.store.list(t.layout.propertiesDir).isEmpty)
  }

  test("corrupt table properties: the commit stands, no manifest is guessed, the error names the file") {
    val t = new MemLogTable
    setProperty(t, on = true)
    t.store.writeReplacing(t.layout.properties(2), "{\"format\":".getBytes("UTF-8"))
    val a = t.append("k=1")
    DerivedWork(t.context(a.txn), a, new StageTimings, DerivedWork.Inline) // must not throw
    assert(t.manifest("k=1").isEmpty && t.store.exists(t.layout.commitRecord(a.txn)))
    val e = intercept[io.txcommit.CorruptTablePropertiesException](ManifestSwitch.enabled(t.conf, t.store, t.layout))
    assert(e.getMessage.contains("properties/00000000000000000002.json") && e.getMessage.contains("truncated"))
  }
}

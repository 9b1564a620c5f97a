package io.txcommit.hdfs

import java.nio.charset.StandardCharsets.UTF_8
import java.util.concurrent.atomic.{AtomicBoolean, AtomicInteger}

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.CommitConflictException
import io.txcommit.store.{Adapters, CommitStore, StoreContractSuite}
import io.txcommit.streaming.CheckpointManagerContractSuite
import io.txcommit.testing.MiniHdfs

/** The `hdfs` adapter on a real NameNode, bound to the shared store contract. */
class HdfsStoreContractSuite extends StoreContractSuite {
  override protected def freshTable(): (Path, CommitStore) = {
    val table = MiniHdfs.freshDir()
    (table, Adapters.open(table, MiniHdfs.conf))
  }
}

/** Streaming checkpoint files on a real NameNode. */
class HdfsCheckpointManagerSuite extends CheckpointManagerContractSuite {
  override protected def expectedAdapter = "hdfs"
  override protected def freshCheckpoint(): (Path, Configuration) = (MiniHdfs.freshDir(), MiniHdfs.conf)
}

/** What HDFS's own rename would get wrong, on a real NameNode. */
class HdfsRenameSuite extends AnyFunSuite {
  private def text(s: String) = s.getBytes(UTF_8)

  private def store(): (Path, CommitStore) = {
    val table = MiniHdfs.freshDir()
    val opened = Adapters.open(table, MiniHdfs.conf)
    assert(opened.declaration.name == "hdfs")
    (table, opened)
  }

  test("an exclusive create onto a directory of the same name conflicts; nothing moves into it") {
    val (table, s) = store()
    val target = new Path(table, "_txcommit/commits/t1.json")
    MiniHdfs.fs.mkdirs(target)
    val e = intercept[CommitConflictException](s.createExclusive(target, text("record")))
    assert(e.getMessage.contains("t1.json"))
    assert(MiniHdfs.fs.listStatus(target).isEmpty, "the record was moved inside the directory")
    assert(s.list(target.getParent).isEmpty, "no temporary file is left")
  }

  test("a replacement is never seen missing by a reader running beside it") {
    val (table, s) = store()
    val target = new Path(table, "_txcommit/_last_checkpoint")
    s.writeReplacing(target, text("0"))
    val done = new AtomicBoolean(false)
    val missing = new AtomicInteger(0)
    val seen = java.util.concurrent.ConcurrentHashMap.newKeySet[String]()
    val reader = new Thread(() => {
      while (!done.get()) s.read(target) match {
        case Some(b) => seen.add(new String(b, UTF_8))
        case None => missing.incrementAndGet()
      }
    })
    reader.start()
    try (1 to 40).foreach(i => s.writeReplacing(target, text(i.toString)))
    finally { done.set(true); reader.join() }
    assert(missing.get() == 0, s"the file was missing for ${missing.get()} reads")
    // The reader ran while the replacements happened (else it proved nothing): it saw several.
    assert(seen.size >= 3, s"the reader saw only ${seen.asScala.toSeq.sorted} of 41 versions")
    assert(new String(s.read(target).get, UTF_8) == "40")
    assert(s.list(target.getParent).map(_.getPath.getName) == Seq("_last_checkpoint"))
  }

  test("an exclusive create whose rename landed unanswered publishes once; the next create conflicts") {
    val table = MiniHdfs.freshDir()
    val s = Adapters.open(table, org.apache.hadoop.fs.AnswerLosingHdfs.conf(MiniHdfs.conf))
    val record = new Path(table, "_txcommit/commits/t3.json")
    org.apache.hadoop.fs.AnswerLosingHdfs.renames.set(1)
    s.createExclusive(record, text("mine")) // the move landed: not a conflict, not an error
    assert(org.apache.hadoop.fs.AnswerLosingHdfs.renames.get == 0, "the fault was injected")
    assert(new String(s.read(record).get, UTF_8) == "mine")
    intercept[CommitConflictException](s.createExclusive(record, text("another driver")))
    // A checkpoint file, published through the atomic stream, alike.
    val batch = new Path(table, "checkpoint/offsets/1")
    org.apache.hadoop.fs.AnswerLosingHdfs.renames.set(1)
    val out = s.openAtomic(batch, overwrite = false)
    out.write(text("v1"))
    out.close()
    assert(org.apache.hadoop.fs.AnswerLosingHdfs.renames.get == 0, "the fault was injected")
    assert(new String(s.read(batch).get, UTF_8) == "v1")
    assert(s.list(record.getParent).map(_.getPath.getName) == Seq("t3.json"), "no temporary file is left")
    assert(s.list(batch.getParent).map(_.getPath.getName) == Seq("1"), "no temporary file is left")
  }

  test("a file another client is still writing is a conflict for an exclusive create") {
    val (table, s) = store()
    val target = new Path(table, "_txcommit/commits/t2.json")
    val other = MiniHdfs.fs.create(target, false) // open, not closed: the NameNode holds a lease
    try intercept[CommitConflictException](s.createExclusive(target, text("mine")))
    finally other.close()
  }
}

/**
 * The links contract on a real NameNode. The NameNode makes links only where its JVM switched
 * them on (`FileSystem.enableSymlinks()`, which MiniDFSCluster calls, as Hadoop's own tests
 * do); the client in this JVM then follows them too. A client with them off (every other
 * process) fails any call through a link: see docs/protocol.md, I18.
 */
class HdfsTableLinksSuite extends io.txcommit.commit.TableLinksContract {
  override protected def conf: Configuration = MiniHdfs.conf
  override protected def freshDir(): Path = MiniHdfs.freshDir()
  override protected def link(at: Path, target: Path): Unit = MiniHdfs.fs.createSymlink(target, at, true)
}

/** viewfs over a real NameNode: its mount points report themselves as links, and are not. */
class ViewFsLinksSuite extends AnyFunSuite {
  test("a write and VACUUM through a viewfs mount point are the table's, as before") {
    val target = MiniHdfs.freshDir()
    val conf = MiniHdfs.conf
    conf.set("fs.viewfs.mounttable.links.link./data", target.toString)
    val table = new Path("viewfs://links/data/t")
    val ctx = io.txcommit.commit.TxnContext(table, io.txcommit.log.TxnId.generate(), "token", "job", 1L, conf,
      Adapters.open(table, conf))
    val seen = io.txcommit.commit.CheckTableNesting.run(ctx, (), new io.txcommit.commit.StageTimings)
    assert(seen.createsTable)
    io.txcommit.commit.StartTransaction.run(ctx, false, new io.txcommit.commit.StageTimings)
    assert(MiniHdfs.fs.exists(new Path(target, "t/_txcommit/pending")), "the log lies below the mount's target")
    io.txcommit.maintenance.Vacuum.run(table, conf, io.txcommit.maintenance.VacuumOptions(retainHours = 1))
  }
}

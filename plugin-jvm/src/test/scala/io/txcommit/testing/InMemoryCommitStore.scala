package io.txcommit.testing

import java.io.IOException

import scala.collection.mutable

import org.apache.hadoop.fs.{FileStatus, Path}

import io.txcommit.{CommitConflictException, Paths}
import io.txcommit.log.DataFileName
import io.txcommit.store.{AdapterDeclaration, CommitStore, Listing, OpenUpload, Primitive, StagedFile}

/**
 * A TEST DOUBLE: a [[CommitStore]] held in memory, for testing commit stages alone (as
 * Hadoop's manifest committer tests its stages against a stub store). Never shipped.
 *
 * It keeps the contract of `CommitStore` (and is bound to `StoreContractSuite` to prove it):
 * `createExclusive` is atomic and exclusive (one lock), listings show every completed write
 * (list-after-write), every request is counted. With `staging = true` it also stages data
 * like a multipart store: [[stage]] leaves an upload that is not listed until `publishData`.
 *
 * What it adds for tests: a log of the calls made ([[calls]]) and injected failures ([[failOn]]):
 * the n-th matching call of an operation throws, before or after taking effect (an "after"
 * failure is the ambiguous kind: the write happened, the caller saw an error).
 *
 * It holds no Hadoop FileSystem: code that lists data through one (`TableState.dataFiles`)
 * sees whatever the table path holds on its real file system.
 */
final class InMemoryCommitStore(
    val declaration: AdapterDeclaration = InMemoryCommitStore.Declaration,
    staging: Boolean = false) extends CommitStore {
  import InMemoryCommitStore._

  private final class Fault(val op: Op, val matches: Path => Boolean, val nth: Int, val times: Int,
      val afterEffect: Boolean, val error: String => Throwable) {
    var seen = 0
  }

  private val lock = new Object
  private val files = mutable.Map.empty[String, Entry]
  private val uploads = mutable.LinkedHashMap.empty[String, Upload]
  private val faults = mutable.ArrayBuffer.empty[Fault]
  private val callLog = mutable.ArrayBuffer.empty[(Op, Path)]
  private var clock = 0L
  private var uploadIds = 0

  // --- for tests ------------------------------------------------------------------------

  /**
   * From now on, the `nth` call (1-based) of `op` on a path that `matches` fails with `error`,
   * and so do the `times - 1` matching calls after it. With `afterEffect` the call takes
   * effect first (the store wrote, the caller sees an error).
   */
  def failOn(op: Op, matches: Path => Boolean = _ => true, nth: Int = 1, times: Int = 1,
      afterEffect: Boolean = false,
      error: String => Throwable = why => new IOException(s"injected failure: $why")): Unit =
    lock.synchronized { faults += new Fault(op, matches, nth, times, afterEffect, error) }

  /** Every matching call of `op` on `path` fails. */
  def failAlways(op: Op, path: Path): Unit = failOn(op, _ == path, times = Int.MaxValue)

  /** The calls made so far, in order. */
  def calls: Seq[(Op, Path)] = lock.synchronized(callLog.toSeq)

  /** The paths of every visible file, sorted. */
  def paths: Seq[Path] = lock.synchronized(files.keys.toSeq.sorted.map(new Path(_)))

  /** A task's data file as a staging store leaves it: invisible until `publishData`. */
  def stage(table: Path, rel: String, bytes: Array[Byte]): StagedFile = lock.synchronized {
    require(staging, "stage() needs an InMemoryCommitStore(staging = true)")
    uploadIds += 1
    val file = StagedFile(rel, bytes.length.toLong, Some(s"upload-$uploadIds"))
    uploads(key(new Path(table, rel)) + "#" + uploadIds) = Upload(table, file, bytes, tick())
    requests.add("MULTIPART_UPLOAD")
    file
  }

  // --- the contract -----------------------------------------------------------------------

  override def createExclusive(target: Path, bytes: Array[Byte]): Unit =
    call(Op.CreateExclusive, target) {
      requests.add("PUT")
      if (files.contains(key(target))) throw new CommitConflictException(s"${Paths.display(target)} " +
        "already exists, so it was not overwritten; another writer published it first")
      files(key(target)) = Entry(bytes.clone(), tick())
    }

  override def writeReplacing(target: Path, bytes: Array[Byte]): Unit =
    call(Op.WriteReplacing, target) {
      requests.add("PUT")
      files(key(target)) = Entry(bytes.clone(), tick())
    }

  override def read(path: Path): Option[Array[Byte]] =
    call(Op.Read, path) { requests.add("GET"); files.get(key(path)).map(_.bytes.clone()) }

  override def list(dir: Path): Seq[FileStatus] =
    call(Op.List, dir) {
      requests.add("LIST")
      val d = key(dir)
      files.toSeq.filter { case (k, _) => parentOf(k) == d }.sortBy(_._1).map { case (k, e) =>
        new FileStatus(e.bytes.length.toLong, false, 1, 0L, e.modifiedAt, new Path(k))
      }
    }

  override def exists(path: Path): Boolean =
    call(Op.Exists, path) {
      requests.add("HEAD")
      val k = key(path)
      files.contains(k) || files.keys.exists(_.startsWith(k + "/"))
    }

  override def delete(path: Path): Boolean =
    call(Op.Delete, path) { requests.add("DELETE"); files.remove(key(path)).isDefined }

  override def stagedFile(table: Path, rel: String, written: Path): Option[StagedFile] =
    lock.synchronized(files.get(key(written)).map(e => StagedFile(rel, e.bytes.length.toLong)))

  override def publishData(table: Path, staged: Seq[StagedFile]): Unit =
    staged.foreach { f =>
      val target = new Path(table, f.path)
      call(Op.PublishData, target) {
        uploadKey(target, f).foreach { k =>
          requests.add("MULTIPART_COMPLETE")
          files(key(target)) = Entry(uploads.remove(k).get.bytes, tick())
        }
      }
    }

  override def discardData(table: Path, staged: Seq[StagedFile]): Int =
    staged.count { f =>
      val target = new Path(table, f.path)
      call(Op.DiscardData, target) {
        uploadKey(target, f) match {
          case Some(k) => requests.add("MULTIPART_ABORT"); uploads.remove(k); true
          case None => requests.add("DELETE"); files.remove(key(target)).isDefined
        }
      }
    }

  override def cleanupStaging(table: Path, txn: String, committed: Set[String]): Int =
    call(Op.CleanupStaging, table) {
      val losers = uploads.collect {
        case (k, u)
            if key(u.table) == key(table) &&
              DataFileName.txnOf(u.file.path.split('/').last).contains(txn) && !committed(u.file.path) => k
      }.toSeq
      losers.foreach { k => requests.add("MULTIPART_ABORT"); uploads.remove(k) }
      losers.size
    }

  override def openUploads(table: Path): Seq[OpenUpload] = lock.synchronized {
    uploads.values.filter(u => key(u.table) == key(table)).map(u =>
      OpenUpload(u.file.path, u.file.pending.get, u.startedAt)).toSeq
  }

  override def abortUpload(table: Path, upload: OpenUpload): Boolean = lock.synchronized {
    val k = uploads.collectFirst { case (k, u) if u.file.pending.contains(upload.uploadId) => k }
    k.foreach(uploads.remove)
    k.isDefined
  }

  // --- internals --------------------------------------------------------------------------

  /** Runs one operation atomically, applying any injected fault before or after it. */
  private def call[T](op: Op, path: Path)(body: => T): T = lock.synchronized {
    callLog += (op -> path)
    val fault = faults.find { f =>
      f.op == op && f.matches(path) && { f.seen += 1; f.seen >= f.nth && f.seen - f.nth < f.times }
    }
    val why = s"${op.name} ${Paths.display(path)}"
    fault.filterNot(_.afterEffect).foreach(f => throw f.error(why))
    val out = body
    fault.filter(_.afterEffect).foreach(f => throw f.error(why))
    out
  }

  private def uploadKey(target: Path, f: StagedFile): Option[String] =
    f.pending.flatMap(id =>
      uploads.collectFirst {
        case (k, u)
            if u.file.pending.contains(id) &&
              key(new Path(u.table, u.file.path)) == key(target) => k
      })

  private def tick(): Long = { clock = math.max(clock + 1, System.currentTimeMillis()); clock }
}

object InMemoryCommitStore {

  /** The operations of [[CommitStore]] a test can watch or make fail. */
  sealed abstract class Op(val name: String)
  object Op {
    case object CreateExclusive extends Op("createExclusive")
    case object WriteReplacing extends Op("writeReplacing")
    case object Read extends Op("read")
    case object List extends Op("list")
    case object Exists extends Op("exists")
    case object Delete extends Op("delete")
    case object PublishData extends Op("publishData")
    case object DiscardData extends Op("discardData")
    case object CleanupStaging extends Op("cleanupStaging")
  }

  val Declaration: AdapterDeclaration = AdapterDeclaration("in-memory", "in-memory test double",
    Primitive.ConditionalPut, exclusiveCreate = true, Listing.Consistent, Seq("mem"), Nil)

  private final case class Entry(bytes: Array[Byte], modifiedAt: Long)
  private final case class Upload(table: Path, file: StagedFile, bytes: Array[Byte], startedAt: Long)

  private def key(p: Path): String = p.toString.stripSuffix("/")
  private def parentOf(k: String): String = k.lastIndexOf('/') match {
    case -1 => ""
    case i => k.substring(0, i)
  }
}

package io.txcommit.commit

import java.net.InetAddress
import java.time.Instant

import scala.util.Try

import io.txcommit.Version
import io.txcommit.log.{CommitRecord, LogLayout, RecordCodec}

/**
 * Derived work: `_SUCCESS` as a JSON summary (in the spirit of Hadoop's manifest committer), so
 * tools that wait for `_SUCCESS` keep working and a person can see what the last commit did.
 */
object WriteSuccessSummary extends CommitStage[(CommitRecord, StageTimings), Unit]("write-success-summary") {
  val MaxFilenames = 100

  override protected def execute(ctx: TxnContext, in: (CommitRecord, StageTimings)): Unit = {
    val (record, timings) = in
    val bytes = render(record, timings, ctx.store.declaration.name, ctx.store.requests.snapshot)
    exclusively(ctx.layout.success)(ctx.store.writeReplacing(ctx.layout.success, bytes))
  }

  private val locks = new java.util.concurrent.ConcurrentHashMap[String, Object]()

  /**
   * Runs `f` holding this JVM's lock on one table's `_SUCCESS`: what writes it (a commit's
   * summary, a row count added to it later from Spark's listener thread) takes turns, so a
   * read-then-write of it never overwrites a summary written in between.
   */
  def exclusively[A](success: org.apache.hadoop.fs.Path)(f: => A): A =
    locks.computeIfAbsent(success.toString, _ => new Object).synchronized(f)

  def render(record: CommitRecord, timings: StageTimings, adapterName: String,
      storeRequests: Map[String, Long]): Array[Byte] = {
    val n = RecordCodec.objectNode()
    n.put("name", "txcommit")
    n.put("success", true)
    n.put("committer", io.txcommit.conf.TxCommitConf.ProtocolClass)
    n.put("version", Version.current)
    n.put("txn", record.txn)
    n.put("jobId", record.jobId)
    n.put("timestamp", record.committedAt)
    n.put("date", Instant.ofEpochMilli(record.committedAt).toString)
    n.put("hostname", Try(InetAddress.getLocalHost.getHostName).getOrElse("unknown"))
    n.put("files", record.files)
    n.put("bytes", record.bytes)
    n.putNull("rows") // Spark counts rows after the commit: RowCounts adds them then
    n.put("durationMs", record.committedAt - record.startedAt)
    val stages = n.putObject("stageDurationsMs")
    timings.all.foreach { case (k, v) => stages.put(k, v) }
    // Requests this job commit made to the store (measured by the adapter), up to this file.
    val requests = n.putObject("jobCommitRequests")
    requests.put("adapter", adapterName)
    storeRequests.toSeq.sortBy(_._1).foreach { case (k, v) => requests.put(k, v) }
    val names = n.putArray("filenames")
    record.added.take(MaxFilenames).foreach(f => names.add(f.path))
    n.put("commitRecord", LogLayout.commitRecordRelative(record.txn))
    RecordCodec.write(n)
  }
}

package io.txcommit.read

import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicBoolean

import org.apache.spark.SparkEnv
import org.apache.spark.api.plugin.PluginContext
import org.slf4j.LoggerFactory

/**
 * Makes every JVM of one read agree on its snapshot. Each decision that depends on WHEN a JVM
 * looked (which `replace/` records a listing found, whether a transaction's record existed yet)
 * is proposed by the first JVM that meets it and then fixed for the whole read: later
 * proposals get the first answer. The decisions live on the driver; executors reach it through
 * the txcommit plugin's RPC channel (`spark.plugins=io.txcommit.spark.TxCommitPlugin`).
 */
trait CutArbiter {

  /** The highest `replace/` sequence of `table` in the read's snapshot. */
  def agreeHighest(cut: ReadCut, table: String, proposed: Long): Long

  /** Whether transaction `txn` of `table` (an append) is committed in the read's snapshot. */
  def agreeCommitted(cut: ReadCut, table: String, txn: String, proposed: Boolean): Boolean
}

/** A question an executor asks the driver (through the plugin's RPC channel). */
sealed trait CutQuestion extends Serializable { def readId: String }
final case class AgreeHighest(readId: String, table: String, proposed: Long) extends CutQuestion
final case class AgreeCommitted(readId: String, table: String, txn: String, proposed: Boolean)
  extends CutQuestion

object CutArbiter {
  private val log = LoggerFactory.getLogger(classOf[CutArbiter])

  /** The decisions of this JVM's reads (on the driver: every read of the application). */
  object Local extends CutArbiter {

    /** Reads remembered; a listing job is long over when its read is evicted. */
    val MaxReads = 10000
    private val reads = new java.util.LinkedHashMap[String, ConcurrentHashMap[(String, String), Any]](
      64, 0.75f, true) {
      override def removeEldestEntry(e: java.util.Map.Entry[String, ConcurrentHashMap[(String, String), Any]]) =
        this.size() > MaxReads
    }

    private def decisions(readId: String): ConcurrentHashMap[(String, String), Any] = reads.synchronized {
      var d = reads.get(readId)
      if (d == null) { d = new ConcurrentHashMap(); reads.put(readId, d) }
      d
    }

    /** Reads an executor has asked about (bounded like `reads`). */
    private val askedRemotely = new java.util.LinkedHashMap[String, java.lang.Boolean](64, 0.75f, true) {
      override def removeEldestEntry(e: java.util.Map.Entry[String, java.lang.Boolean]) = this.size() > MaxReads
    }

    /** Whether `q` is the first question an executor asked about its read. */
    def firstRemote(q: CutQuestion): Boolean = askedRemotely.synchronized {
      askedRemotely.put(q.readId, java.lang.Boolean.TRUE) == null
    }

    override def agreeHighest(cut: ReadCut, table: String, proposed: Long): Long =
      answer(AgreeHighest(cut.id, table, proposed)).asInstanceOf[Long]

    override def agreeCommitted(cut: ReadCut, table: String, txn: String, proposed: Boolean): Boolean =
      answer(AgreeCommitted(cut.id, table, txn, proposed)).asInstanceOf[Boolean]

    /** The fixed answer to `q`: its own proposal if it is the first. */
    def answer(q: CutQuestion): Any = q match {
      case AgreeHighest(read, table, p) => decisions(read).putIfAbsent((table, ""), p) match {
          case null => p
          case fixed => fixed
        }
      case AgreeCommitted(read, table, txn, p) => decisions(read).putIfAbsent((table, txn), p) match {
          case null => p
          case fixed => fixed
        }
    }
  }

  /** An executor's view: asks the driver; remembers the answers of its reads locally. */
  final class Remote(ctx: PluginContext) extends CutArbiter {
    private val answers = new ConcurrentHashMap[(String, String, String), Any]()

    private def ask(cut: ReadCut, key: (String, String), q: CutQuestion): Any = {
      if (answers.size > Remote.MaxAnswers) answers.clear() // answers of long-finished reads
      answers.computeIfAbsent((cut.id, key._1, key._2), _ => ctx.ask(q))
    }

    override def agreeHighest(cut: ReadCut, table: String, proposed: Long): Long =
      ask(cut, (table, ""), AgreeHighest(cut.id, table, proposed)).asInstanceOf[Long]

    override def agreeCommitted(cut: ReadCut, table: String, txn: String, proposed: Boolean): Boolean =
      ask(cut, (table, txn), AgreeCommitted(cut.id, table, txn, proposed)).asInstanceOf[Boolean]
  }

  object Remote {
    val MaxAnswers = 1000000
  }

  /** Set by the plugin: true in the driver's JVM; the executor plugin's context elsewhere. */
  @volatile private[txcommit] var isDriver: Boolean = false
  @volatile private var remote: Option[Remote] = None

  /** On an executor: ask this driver (the executor plugin calls it). */
  private[txcommit] def askDriverThrough(ctx: PluginContext): Unit = remote = Some(new Remote(ctx))
  private val warned = new AtomicBoolean(false)

  /** The arbiter of this JVM's listings. */
  def current: CutArbiter =
    if (isDriver) Local
    else remote match {
      case Some(r) => r
      case None =>
        val executor = Option(SparkEnv.get).map(_.executorId).exists(_ != "driver")
        if (executor && warned.compareAndSet(false, true)) {
          log.warn("txcommit: this executor lists files for a read without the txcommit plugin " +
            "(spark.plugins=io.txcommit.spark.TxCommitPlugin), so it cannot agree on the read's " +
            "snapshot with the driver: a transaction that commits while the read lists may be " +
            "seen in some partitions and not in others. Add the plugin to spark.plugins.")
        }
        Local
    }
}

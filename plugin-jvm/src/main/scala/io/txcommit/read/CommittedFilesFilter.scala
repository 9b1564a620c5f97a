package io.txcommit.read

import org.apache.hadoop.conf.{Configurable, Configuration}
import org.apache.hadoop.fs.{Path, PathFilter}
import org.apache.hadoop.util.ReflectionUtils
import org.apache.spark.util.SerializableConfiguration

import io.txcommit.conf.TxCommitConf

/**
 * The read side: a Hadoop input PathFilter (`mapreduce.input.pathFilter.class`) that Spark's
 * file listing applies to every file it finds. It hides a txcommit data file unless the commit
 * record of its transaction names it, hides any file of a txcommit table that a replacing
 * commit (overwrite, write id) removed, and shows every other file as before.
 *
 * A read the SQL extension reached carries a log-first snapshot of each table it reads (the
 * read option [[TxCommitConf.SnapshotOption]], see [[LogFirstSnapshot]]): its files are judged
 * against that ([[LogFirstReader]]), with no clock. Every other read (RDD APIs, Hive sessions on
 * Spark 4.0-4.2, catalog tables, roots the extension does not resolve) is judged by a clock cut:
 * Spark creates one filter per listing, on the driver, just before the listing begins: that
 * moment is the read's [[ReadCut]]. Spark may list on executors (past 32 paths), so the filter
 * is Serializable: it carries its configuration and its cut, and rebuilds its caches after
 * deserialisation; every copy judges against the snapshot the read agreed on ([[CutArbiter]]).
 */
class CommittedFilesFilter extends PathFilter with Configurable with Serializable {
  private var serializableConf: SerializableConfiguration = _
  private var cut: Option[ReadCut] = None

  @transient private lazy val settings: CommittedFilesFilter.Settings = {
    val conf = getConf
    val delegate = Option(conf.get(TxCommitConf.DelegateFilter)).map(_.trim)
      .filter(c => c.nonEmpty && c != getClass.getName)
      .map(c => ReflectionUtils.newInstance(conf.getClassByName(c), conf).asInstanceOf[PathFilter])
    val ignoreCorrupt = TxCommitConf.bool(conf, TxCommitConf.IgnoreCorruptRecords, default = false)
    lazy val byCut = new TableLogReader(conf, ignoreCorrupt, readCut, CutArbiter.current)
    val handle = Option(conf.get(TxCommitConf.SnapshotOption)).map(v =>
      SnapshotHandle.decode(v).fold(bad =>
          throw new io.txcommit.InvalidConfException(TxCommitConf.SnapshotOption, bad, "a snapshot set by txcommit"),
        identity)).flatten
    CommittedFilesFilter.Settings(
      enabled = TxCommitConf.bool(conf, TxCommitConf.ReadFilter, default = true),
      delegate = delegate,
      judge = handle match {
        case Some(h) =>
          val logFirst = new LogFirstReader(conf, ignoreCorrupt, h, () => byCut)
          logFirst.isVisible
        case None => byCut.isVisible
      })
  }

  /** This read's cut: fixed when the filter is configured (on the driver, as the listing begins). */
  def readCut: ReadCut = cut.getOrElse(synchronized {
    if (cut.isEmpty) cut = Some(ReadCut.begin(TxCommitConf.maxClockSkewMs(getConf)))
    cut.get
  })

  override def setConf(conf: Configuration): Unit = {
    serializableConf = new SerializableConfiguration(conf)
    if (cut.isEmpty) cut = Some(ReadCut.begin(TxCommitConf.maxClockSkewMs(conf)))
  }

  override def getConf: Configuration =
    Option(serializableConf).map(_.value).getOrElse(new Configuration())

  override def accept(path: Path): Boolean = {
    val s = settings
    if (s.delegate.exists(!_.accept(path))) false
    else if (!s.enabled) true
    else s.judge(path)
  }
}

object CommittedFilesFilter {
  private final case class Settings(enabled: Boolean, delegate: Option[PathFilter], judge: Path => Boolean)
}

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
 * against that ([[LogFirstReader]]), with no clock. So is a listing by a Hadoop input format (RDD
 * reads, Hive SerDe tables): the configuration it creates the filter with names its input
 * directories, and the filter lists their logs then, before the input format lists any data.
 * Every other read (Hive sessions on Spark 4.0.0-4.0.2, 4.1.0-4.1.1 and 4.2.0, the streaming file source, globs, roots
 * no snapshot found a table for) is judged by a clock cut:
 * Spark creates one filter per listing, on the driver, just before the listing begins: that
 * moment is the read's [[ReadCut]]. Spark may list on executors (past 32 paths), so the filter
 * is Serializable: it carries its configuration and its cut, and rebuilds its caches after
 * deserialisation; every copy judges against the snapshot the read agreed on ([[CutArbiter]]).
 * Whatever judges it, a file in a directory that a link leads inside a table at another place
 * than its path names fails the read ([[ReadLinks]]).
 */
class CommittedFilesFilter extends PathFilter with Configurable with Serializable {
  private var serializableConf: SerializableConfiguration = _
  private var cut: Option[ReadCut] = None
  // The log-first snapshot of an input format's listing (its input directories are in the
  // configuration it creates this filter with), taken then, before it lists anything.
  private var inputSnapshot: Option[SnapshotHandle] = None

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
        identity)).flatten.orElse(inputSnapshot)
    val links = new ReadLinks(conf)
    val judge: Path => Boolean = handle match {
      case Some(h) =>
        val logFirst = new LogFirstReader(conf, ignoreCorrupt, h, () => byCut)
        logFirst.isVisible
      case None => byCut.isVisible
    }
    CommittedFilesFilter.Settings(
      enabled = TxCommitConf.bool(conf, TxCommitConf.ReadFilter, default = true),
      delegate = delegate,
      judge = path => { links.check(path.getParent); judge(path) })
  }

  /** This read's cut: fixed when the filter is configured (on the driver, as the listing begins). */
  def readCut: ReadCut = cut.getOrElse(synchronized {
    if (cut.isEmpty) cut = Some(ReadCut.begin(TxCommitConf.maxClockSkewMs(getConf)))
    cut.get
  })

  override def setConf(conf: Configuration): Unit = {
    serializableConf = new SerializableConfiguration(conf)
    if (cut.isEmpty) cut = Some(ReadCut.begin(TxCommitConf.maxClockSkewMs(conf)))
    if (inputSnapshot.isEmpty) inputSnapshot = CommittedFilesFilter.inputSnapshot(conf)
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

  /** FileInputFormat's input directories: comma-separated, each escaped (`FileInputFormat.setInputPaths`). */
  private val InputDirs = "mapreduce.input.fileinputformat.inputdir"

  /**
   * The log-first snapshot of the read a Hadoop input format is about to list: Hadoop's
   * `FileInputFormat.listStatus` (RDD reads such as `textFile` and `hadoopFile`, Hive SerDe
   * tables) creates this filter with a configuration naming its input directories, before it
   * lists any of them. None for a listing that names none (Spark's own file index: its reads get
   * their snapshot from the SQL extension, or keep the clock cut), one the SQL extension already
   * gave a snapshot, or when log-first reads are off.
   */
  private def inputSnapshot(conf: Configuration): Option[SnapshotHandle] =
    Option(conf.get(InputDirs)).map(_.trim).filter(_.nonEmpty)
      .filter(_ => conf.get(TxCommitConf.SnapshotOption) == null)
      .filter(_ =>
        Seq(TxCommitConf.ReadFilter, TxCommitConf.LogFirst).forall(TxCommitConf.bool(conf, _, default = true)))
      .flatMap { dirs =>
        val roots = org.apache.hadoop.util.StringUtils.split(dirs).toSeq
          .map(d => new Path(org.apache.hadoop.util.StringUtils.unEscapeString(d)))
        LogFirstSnapshot.forRoots(roots, conf)
      }
}

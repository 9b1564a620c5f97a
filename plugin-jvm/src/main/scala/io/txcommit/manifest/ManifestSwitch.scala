package io.txcommit.manifest

import org.apache.hadoop.conf.Configuration

import io.txcommit.conf.TxCommitConf
import io.txcommit.log.{LogLayout, TableProperties}
import io.txcommit.store.CommitStore

/**
 * Whether a commit writes the symlink manifests: the write's option `txcommit.manifests` when
 * given, else the table's property `manifests` (its log, as it is at the commit), else the
 * session's `spark.txcommit.manifests.enabled` (default off).
 */
object ManifestSwitch {

  /** The write's option, when given; validated (a bad value names the key). */
  def option(conf: Configuration): Option[Boolean] =
    Option(conf.get(TxCommitConf.ManifestsOption)).filter(_.trim.nonEmpty)
      .map(_ => TxCommitConf.bool(conf, TxCommitConf.ManifestsOption, default = false))

  /** The session's switch (default off). */
  def session(conf: Configuration): Boolean = TxCommitConf.bool(conf, TxCommitConf.Manifests, default = false)

  /** The switch for a commit to `layout`'s table: reads the table's properties unless the option decides. */
  def enabled(conf: Configuration, store: CommitStore, layout: LogLayout): Boolean =
    option(conf).getOrElse(TableProperties.read(store, layout).flatMap(_.manifests).getOrElse(session(conf)))

  /** The table properties a write records: `manifests` on when its option says true. */
  def recorded(conf: Configuration): Map[String, String] =
    if (option(conf).contains(true)) Map(TableProperties.Manifests -> "true") else Map.empty
}

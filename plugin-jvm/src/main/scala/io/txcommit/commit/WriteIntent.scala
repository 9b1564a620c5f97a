package io.txcommit.commit

import org.apache.hadoop.conf.Configuration

import io.txcommit.InvalidConfException
import io.txcommit.log.{CommitRecord, WriteId}

/**
 * What a job replaces: the directories a static overwrite cleared (`deleteWithJob`, "" for
 * the whole table), whether it is a dynamic partition overwrite (its scope is the partition
 * directories it writes), and its write id. A job with none of them is a plain append.
 * `mergeSchema` lets it add columns to the table's schema; `enforceNotNull` keeps NOT NULL columns
 * (docs/protocol.md, I27).
 */
final case class WriteIntent(
    staticScopes: Seq[String] = Nil,
    dynamicPartitions: Boolean = false,
    writeId: Option[String] = None,
    policy: WriteIdPolicy = WriteIdPolicy.Replace,
    mergeSchema: Boolean = false,
    enforceNotNull: Boolean = false) {

  /** Whether the job replaces the whole table, so its schema may replace the table's. */
  def replacesTable: Boolean = staticScopes.contains("")

  def isReplacing: Boolean = staticScopes.nonEmpty || dynamicPartitions || writeId.isDefined

  def operation: String =
    if (staticScopes.nonEmpty) {
      if (staticScopes.contains("")) CommitRecord.Overwrite else CommitRecord.OverwritePartitions
    } else if (dynamicPartitions) CommitRecord.OverwritePartitions
    else if (writeId.isDefined) CommitRecord.WriteIdOp
    else CommitRecord.Append

  /** The directories this job replaces, given the directories it wrote files into. */
  def scope(writtenDirs: Seq[String]): Seq[String] =
    if (staticScopes.nonEmpty) {
      if (staticScopes.contains("")) Seq("") else staticScopes.distinct.sorted
    } else if (dynamicPartitions) writtenDirs.distinct.sorted
    else Nil
}

object WriteIntent {

  /** Writer options (`.option(...)`) reach the job's Hadoop conf; session confs as well. */
  val WriteIdOption = "txcommit.writeId"
  val WriteIdPolicyOption = "txcommit.writeIdPolicy"
  val WriteIdConf = "spark.txcommit.writeId"
  val WriteIdPolicyConf = "spark.txcommit.writeIdPolicy"
  val MergeSchemaOption = "mergeSchema"
  val EnforceNotNullOption = "txcommit.enforceNotNull"
  val EnforceNotNullConf = "spark.txcommit.enforceNotNull"

  /** A key as given, or lower-cased (Spark may lower-case writer option names). */
  private def lookup(conf: Configuration, key: String): Option[(String, String)] =
    Seq(key, key.toLowerCase(java.util.Locale.ROOT)).distinct.iterator
      .flatMap(k => Option(conf.get(k)).map(v => k -> v.trim)).find(_._2.nonEmpty)

  def writeId(conf: Configuration): Option[String] =
    lookup(conf, WriteIdOption).orElse(lookup(conf, WriteIdConf)).map { case (k, v) =>
      WriteId.problem(v).foreach(why =>
        throw new InvalidConfException(k, v,
          s"a write id of 1 to ${WriteId.MaxLength} characters of [A-Za-z0-9._:@=+-] (it $why)"))
      v
    }

  /**
   * Set by the SQL extension on a write into a catalog table (the table's name): Spark resolved
   * the write against the catalog's columns, so a column the catalog has (ALTER TABLE … ADD
   * COLUMNS) joins the table's schema as with `mergeSchema`.
   */
  val CatalogTableOption = "spark.txcommit.write.catalogTable"

  def mergeSchema(conf: Configuration): Boolean =
    flag(lookup(conf, MergeSchemaOption)) || lookup(conf, CatalogTableOption).isDefined

  def enforceNotNull(conf: Configuration): Boolean =
    flag(lookup(conf, EnforceNotNullOption).orElse(lookup(conf, EnforceNotNullConf)))

  private def flag(setting: Option[(String, String)]): Boolean = setting match {
    case None => false
    case Some((k, v)) => v.toLowerCase(java.util.Locale.ROOT) match {
        case "true" => true
        case "false" => false
        case _ => throw new InvalidConfException(k, v, "true or false")
      }
  }

  def policy(conf: Configuration): WriteIdPolicy =
    lookup(conf, WriteIdPolicyOption).orElse(lookup(conf, WriteIdPolicyConf)) match {
      case None => WriteIdPolicy.Replace
      case Some((k, v)) => WriteIdPolicy.all.find(_.name == v.toLowerCase(java.util.Locale.ROOT))
          .getOrElse(throw new InvalidConfException(k, v, "replace, skip or fail"))
    }
}

package io.txcommit.spark

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.{BooleanType, DataType, LongType, StringType}

import io.txcommit.{MaintenanceException, NotATableException, Paths, SparkApp}
import io.txcommit.log.{CheckpointWriter, LogLayout, TableProperties, TableReads, TableVersions}
import io.txcommit.maintenance.{History, ReadModeChange, Restore, Vacuum, VacuumOptions}
import io.txcommit.manifest.ManifestWriter
import io.txcommit.store.Adapters

/**
 * The maintenance commands of `TXCOMMIT VACUUM | CHECKPOINT | HISTORY | FILES | GENERATE MANIFEST
 * | ALTER | RESTORE '<path>'` (see [[TxCommitSqlParser]]). They are commands, not queries: Spark runs a command
 * once, when the statement executes (over Spark Connect, `spark.sql(...)` runs it eagerly and
 * returns its rows as a DataFrame), never during analysis or planning. They use the session's Hadoop conf, so
 * the session's S3 and txcommit settings apply.
 */
private[spark] object MaintenanceCommands {
  def attrs(cols: (String, DataType)*): Seq[Attribute] =
    cols.map { case (n, t) => AttributeReference(n, t, nullable = true)() }

  def qualified(spark: SparkSession, path: String): (Path, org.apache.hadoop.conf.Configuration) = {
    val conf = spark.sessionState.newHadoopConf()
    val p = new Path(path)
    (p.getFileSystem(conf).makeQualified(p), conf)
  }

  /** Fails, naming the path and writing nothing, unless `table` holds a transaction log. */
  def requireTable(statement: String, table: Path, conf: org.apache.hadoop.conf.Configuration): Unit =
    if (!table.getFileSystem(conf).exists(LogLayout(table).logDir)) {
      throw new NotATableException(s"$statement: ${Paths.display(table)} is not a txcommit " +
        "table (it has no _txcommit/ directory); nothing was written. Check the path.")
    }
}

final case class VacuumCommand(path: String, opts: VacuumOptions) extends LeafRunnableCommand {
  override val output: Seq[Attribute] = MaintenanceCommands.attrs(
    "path" -> StringType, "kind" -> StringType, "reason" -> StringType, "bytes" -> LongType,
    "deleted" -> BooleanType)

  override def run(spark: SparkSession): Seq[Row] = {
    val (table, conf) = MaintenanceCommands.qualified(spark, path)
    Vacuum.run(table, conf, opts, steps = SparkJobSteps.of(spark))
      .map(e => Row(e.path, e.kind, e.reason, e.bytes, e.deleted))
  }
}

final case class CheckpointCommand(path: String) extends LeafRunnableCommand {
  override val output: Seq[Attribute] = MaintenanceCommands.attrs(
    "checkpoint" -> LongType, "transactions" -> LongType, "files" -> LongType, "through" -> LongType,
    "written" -> BooleanType, "detail" -> StringType)

  override def run(spark: SparkSession): Seq[Row] = {
    val (table, conf) = MaintenanceCommands.qualified(spark, path)
    MaintenanceCommands.requireTable("TXCOMMIT CHECKPOINT", table, conf)
    val outcome = CheckpointWriter.write(table, Adapters.open(table, conf), SparkApp.id)
    Seq(outcome.written match {
      case Some(c) => Row(c.number, c.committed.size.toLong, c.files.toLong, c.through, true, outcome.why)
      case None => Row(null, null, null, null, false, outcome.why)
    })
  }
}

final case class HistoryCommand(path: String) extends LeafRunnableCommand {
  override val output: Seq[Attribute] = MaintenanceCommands.attrs(
    "txn" -> StringType, "state" -> StringType, "startedAt" -> LongType, "committedAt" -> LongType,
    "operation" -> StringType, "writeId" -> StringType, "files" -> LongType, "bytes" -> LongType,
    "rows" -> LongType, "removedFiles" -> LongType, "removedBytes" -> LongType, "sequence" -> LongType,
    "schema" -> StringType, "version" -> LongType, "storeTime" -> LongType, "restoredFiles" -> LongType)

  override def run(spark: SparkSession): Seq[Row] = {
    val (table, conf) = MaintenanceCommands.qualified(spark, path)
    MaintenanceCommands.requireTable("TXCOMMIT HISTORY", table, conf)
    org.apache.spark.sql.txcommit.RowCounts.awaitRecorded(table, conf) // a write just committed here shows its rows
    def n(o: Option[Long]): Any = o.map(Long.box).orNull
    History.rows(table, conf).map(r =>
      Row(r.txn, r.state, r.startedAt, n(r.committedAt),
        r.operation.orNull, r.writeId.orNull, n(r.files), n(r.bytes), n(r.rows), n(r.removedFiles),
        n(r.removedBytes), n(r.sequence), r.schema.orNull, n(r.version), n(r.storeTime), n(r.restoredFiles)))
  }
}

final case class FilesCommand(path: String) extends LeafRunnableCommand {
  override val output: Seq[Attribute] = MaintenanceCommands.attrs(
    "path" -> StringType, "size" -> LongType, "txn" -> StringType)

  override def run(spark: SparkSession): Seq[Row] = {
    val (table, conf) = MaintenanceCommands.qualified(spark, path)
    MaintenanceCommands.requireTable("TXCOMMIT FILES", table, conf)
    History.committedFiles(table, conf).map(f => Row(f.path, f.size, f.txn.orNull))
  }
}

/**
 * Rewrites every partition's symlink manifest from the log as it is now (docs/readers.md,
 * "Engines that read file lists: manifests"), whatever `spark.txcommit.manifests.enabled` says:
 * one row per manifest written or deleted.
 */
final case class GenerateManifestCommand(path: String) extends LeafRunnableCommand {
  override val output: Seq[Attribute] = MaintenanceCommands.attrs(
    "partition" -> StringType, "files" -> LongType, "manifest" -> StringType, "deleted" -> BooleanType)

  override def run(spark: SparkSession): Seq[Row] = {
    val (table, conf) = MaintenanceCommands.qualified(spark, path)
    MaintenanceCommands.requireTable("TXCOMMIT GENERATE MANIFEST", table, conf)
    ManifestWriter.generate(table, Adapters.open(table, conf), conf).manifests.map(m =>
      Row(m.partition, m.files.toLong, Paths.display(m.manifest), m.deleted))
  }
}

/**
 * Sets table properties, recorded in the table's log so every writer follows them
 * ([[TableProperties]]): one row per property in force afterwards, with the number of the
 * properties object that holds them. Setting `manifests` to true also writes every partition's
 * manifest once, as GENERATE MANIFEST does, so they are whole from then on.
 */
final case class AlterCommand(path: String, changes: Seq[(String, String)]) extends LeafRunnableCommand {
  override val output: Seq[Attribute] = MaintenanceCommands.attrs(
    "property" -> StringType, "value" -> StringType, "number" -> LongType)

  override def run(spark: SparkSession): Seq[Row] = {
    val (table, conf) = MaintenanceCommands.qualified(spark, path)
    val set = changes.map { case (k, v) => TableProperties.validated(Paths.display(table), k, v) }
    // `reads` lives in the table's checkpoints, which every read takes anyway (I32).
    val (reads, properties) = set.partition(_._1 == TableProperties.Reads)
    val repeated = set.groupBy(_._1).collect { case (k, vs) if vs.size > 1 => k }
    if (repeated.nonEmpty) throw new MaintenanceException(s"TXCOMMIT ALTER '${Paths.display(table)}': " +
      s"table property '${repeated.toSeq.sorted.head}' is set twice; set it once. Nothing was changed.")
    MaintenanceCommands.requireTable("TXCOMMIT ALTER", table, conf)
    val store = Adapters.open(table, conf)
    val mode = reads.headOption.map { case (_, v) =>
      ReadModeChange.set(table, store, conf, v, SparkApp.id, s"TXCOMMIT ALTER '${Paths.display(table)}'")
    }.getOrElse(TableReads.current(store, LogLayout(table)))
    val now =
      if (properties.isEmpty) TableProperties.read(store, LogLayout(table))
      else Some(TableProperties.set(store, LogLayout(table), properties.toMap, SparkApp.id))
    if (now.exists(_.manifests.contains(true)) && properties.toMap.get(TableProperties.Manifests).contains("true")) {
      ManifestWriter.generate(table, store, conf)
    }
    (now.toSeq.flatMap(p => p.values.toSeq.map { case (k, v) => (k, v, p.number) }) :+
      ((TableProperties.Reads, mode._1, mode._2))).sortBy(_._1).map { case (k, v, n) => Row(k, v, n) }
  }
}

/**
 * `TXCOMMIT RESTORE '<path>' TO '<txn or time>'`: one replacing commit that makes the table what
 * it was at that version, re-adding the files later commits removed, with no data copied
 * (docs/protocol.md, I31). One row: the restore's transaction, its sequence, the version restored
 * to, the files it removed and re-added.
 */
final case class RestoreCommand(path: String, to: String) extends LeafRunnableCommand {
  override val output: Seq[Attribute] = MaintenanceCommands.attrs(
    "txn" -> StringType, "sequence" -> LongType, "version" -> LongType, "versionTxn" -> StringType,
    "removedFiles" -> LongType, "restoredFiles" -> LongType)

  override def run(spark: SparkSession): Seq[Row] = {
    val statement = "TXCOMMIT RESTORE ... TO"
    val (table, conf) = MaintenanceCommands.qualified(spark, path)
    MaintenanceCommands.requireTable("TXCOMMIT RESTORE", table, conf)
    val asOf = TableVersions.parseAsOf(to).getOrElse(throw new MaintenanceException(s"TXCOMMIT RESTORE " +
        s"'$path' TO '$to': '$to' is neither a transaction id (as TXCOMMIT HISTORY shows) nor an ISO-8601 time " +
        "(such as 2026-11-27T20:00:00Z); nothing was written"))
    val (version, record) = Restore.toVersion(table, conf, asOf, statement, SparkJobSteps.of(spark))
    // Derived: the restore is committed whatever the catalog says; a catalog table at the path
    // gets back the partitions the restore re-filled (Spark dropped those an overwrite emptied).
    try CatalogPartitions.syncWith(spark, table)
    catch {
      case scala.util.control.NonFatal(e) => org.slf4j.LoggerFactory.getLogger(getClass).warn(
          s"txcommit: ${Paths.display(table)} was restored, but the partitions of catalog tables located " +
            s"there were not brought in step (${e.getMessage}); run MSCK REPAIR TABLE on them", e)
    }
    Seq(Row(record.txn, record.sequence.getOrElse(0L), version.number, version.txn, record.removed.size.toLong,
        record.restored.size.toLong))
  }
}

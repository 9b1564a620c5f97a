package io.txcommit.conf

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

import io.txcommit._
import io.txcommit.commit._
import io.txcommit.fault.HaltPoint
import io.txcommit.spark.{TxCommitExtensions, TxCommitPlugin, TxCommitProtocol}
import io.txcommit.streaming.{ClaimStreamingBatch, TxCommitCheckpointFileManager}
import io.txcommit.testing.Vectors

/**
 * The names the Python package spells again (`txcommit._names`) are the JVM's: both sides are
 * checked against `conformance/vectors/names.json`, so a rename on either side fails a test.
 */
class SharedNamesSuite extends AnyFunSuite {
  private val names = Vectors.json("names.json")

  private def entries(field: String): Map[String, String] =
    names.get(field).properties().asScala.map(e => e.getKey -> e.getValue.asText()).toMap

  test("conf keys") {
    assert(entries("confs") == Map(
      "ReadFilter" -> TxCommitConf.ReadFilter,
      "IgnoreCorruptRecords" -> TxCommitConf.IgnoreCorruptRecords,
      "NewTableReads" -> TxCommitConf.NewTableReads,
      "CleanupAttempts" -> TxCommitConf.CleanupAttempts,
      "HaltAt" -> TxCommitConf.HaltAt,
      "KeepAbortedFiles" -> TxCommitConf.KeepAbortedFiles,
      "AllowFaultInjection" -> TxCommitConf.AllowFaultInjection))
  }

  test("class names are the classes') names") {
    assert(entries("classes") == Map(
      "ProtocolClass" -> classOf[TxCommitProtocol].getName,
      "PluginClass" -> classOf[TxCommitPlugin].getName,
      "ExtensionsClass" -> classOf[TxCommitExtensions].getName,
      "CheckpointFileManagerClass" -> classOf[TxCommitCheckpointFileManager].getName))
    assert(TxCommitConf.ProtocolClass == classOf[TxCommitProtocol].getName)
  }

  test("fault points, in order") {
    assert(Vectors.elements(names.get("haltPoints")).map(_.asText()) == HaltPoint.all.map(_.name))
  }

  test("commit stages: every stage's name, keyed by its object's name") {
    val stages: Seq[CommitStage[_, _]] = Seq(StartTransaction, CheckTableNesting, RecheckTableNesting,
      CheckReplaceScope, RemoveCreatedLog, RollForward, RollForwardReplacements, RecordTableProperties, RecordReadMode,
      CollectManifests, CheckWriteId,
      SkipTransaction, CheckConflicts, CheckSchema, PublishData, PublishCommitRecord, PublishReplaceRecord,
      PublishRestoreRecord, CopyReplaceRecord, WriteSuccessSummary, WriteCheckpoint, WriteManifests, CleanupAttempts,
      CleanupStaging,
      AbortTransaction,
      ClaimStreamingBatch)
    assert(entries("stages") == stages.map(s => s.getClass.getSimpleName.stripSuffix("$") -> s.name).toMap)
    assert(io.txcommit.metrics.TxCommitMetrics.stages.toSet == stages.toSet, "every stage has its metric")
    assert(stages.map(_.name).distinct.size == stages.size, "two stages share a name")
  }

  test("error conditions: every exception's condition and SQLSTATE, keyed by its simple name") {
    val errors = names.get("errors").properties().asScala.map { e =>
      e.getKey -> ErrorCondition(e.getValue.get("condition").asText(), e.getValue.get("sqlState").asText())
    }.toMap
    assert(errors == ErrorCondition.byException.toMap)
    assert(ErrorCondition.byException.map(_._2.name).distinct.size == errors.size, "two exceptions share a condition")
    ErrorCondition.byException.foreach { case (_, c) => assert(c.sqlState.matches("[0-9A-Z]{5}"), c) }
    // Each exception raises its own condition.
    val cause = new java.io.IOException("x")
    val raised: Seq[io.txcommit.TxCommitException] = Seq(new CommitConflictException("x"), new FencedException("x"),
      new CommitOutcomeUnknownException("x", cause), new CorruptCommitRecordException("x"),
      new CorruptCheckpointException("x"), new CorruptTablePropertiesException("x"), new TaskFileMissingException("x"),
      new InvalidConfException("k", "v", "x"), new UnsupportedStoreException("x"), new UnsupportedWriteException("x"),
      new UnsupportedReadException("x"),
      new UnsupportedSparkLineException("x"),
      new WriteIdCommittedException("x"), new MaintenanceException("x"), new NotATableException("x"),
      new ListingChangedException("x", cause), new StorePermissionException("x", cause),
      new SchemaMismatchException("x", Seq("c")), new TimeTravelException("x"),
      new RestoreFilesMissingException("x", Nil))
    assert(raised.map(e => e.getClass.getSimpleName -> e.getCondition).toMap == errors.map { case (k, c) =>
      k -> c.name
    })
    assert(raised.forall(e => e.getSqlState == errors(e.getClass.getSimpleName).sqlState))
    assert(raised.forall(e => e.getMessageParameters.get("message") == e.getMessage))
  }
}

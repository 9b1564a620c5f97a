package io.txcommit.streaming

import scala.annotation.tailrec

import org.apache.hadoop.fs.Path

import io.txcommit.{CommitConflictException, Paths}
import io.txcommit.commit.{CommitStage, TxnContext}
import io.txcommit.log.{CommitRecord, Fence, LogLayout, RecordCodec}

/**
 * Batch commit of the streaming sink, before the record: makes this driver's txn the one owner
 * of the batch, so that of two drivers running one batch (a stalled one and its replacement),
 * exactly one commits it (invariant I15).
 *
 * Owners form a chain of claims `_txcommit/streaming/<batch>/<k>.json`, each created
 * exclusively and naming a txn; the owner is the highest `k`. A driver whose txn is not the
 * owner adopts the owner's commit if it committed (a replay after a crash); otherwise it fences
 * the owner's txn (a commit record that commits nothing, created exclusively at the owner's
 * commit point) before claiming `k + 1`. A fenced owner's late commit loses, so however many
 * drivers take over, one record commits the batch. Returns the earlier commit to adopt, if any.
 */
object ClaimStreamingBatch extends CommitStage[Long, Option[CommitRecord]]("claim-streaming-batch") {
  override protected def execute(ctx: TxnContext, batch: Long): Option[CommitRecord] =
    legacyCommit(ctx, batch).orElse(claim(ctx, batch, 0))

  def claimsDir(table: Path, batch: Long): Path = LogLayout(table).batchClaims(batch)

  @tailrec
  private def claim(ctx: TxnContext, batch: Long, tries: Int): Option[CommitRecord] = {
    val dir = claimsDir(ctx.table, batch)
    val claims = ctx.store.list(dir).flatMap(st =>
      st.getPath.getName.stripSuffix(".json").toLongOption
        .map(_ -> st.getPath)).sortBy(_._1)
    val outcome: Either[Unit, Option[CommitRecord]] = claims.lastOption match {
      case None => create(ctx, dir, 0L, batch)
      case Some((k, path)) =>
        val owner = ctx.store.read(path).flatMap(TxCommitSinkProtocol.markerTxn).getOrElse(
          throw new java.io.IOException(s"txcommit: the claim ${Paths.display(path)} of streaming batch " +
            s"$batch names no transaction; move it out of the way to let the batch commit"))
        if (owner == ctx.txn) Right(None)
        else Fence.fenceAppend(ctx.layout, ctx.store,
          Fence.record(owner, s"streaming-batch-$batch-takeover",
            System.currentTimeMillis())) match {
          case Left(committed) => Right(Some(committed)) // the owner committed it: adopt
          case Right(()) =>
            log.warn(s"txcommit: streaming batch $batch of ${Paths.display(ctx.table)} was claimed by txn " +
              s"$owner, which did not commit it; fenced it and taking the batch over as txn ${ctx.txn}")
            create(ctx, dir, k + 1, batch)
        }
    }
    outcome match {
      case Right(adopt) => adopt
      case Left(()) if tries < 100 => claim(ctx, batch, tries + 1)
      case Left(()) => throw new CommitConflictException(s"${ctx.describe}: could not claim streaming " +
          s"batch $batch after $tries tries; other drivers keep taking it over. Run one driver per query.")
    }
  }

  /** Right(None) when this driver created claim `k`; Left when another claim `k` came first. */
  private def create(ctx: TxnContext, dir: Path, k: Long, batch: Long): Either[Unit, Option[CommitRecord]] =
    try {
      ctx.store.createExclusive(new Path(dir, s"$k.json"), TxCommitSinkProtocol.markerBytes(batch, ctx.txn))
      Right(None)
    } catch { case _: CommitConflictException => Left(()) }

  /** A batch committed by a version that wrote one marker per batch, `streaming/<batch>.json`. */
  private def legacyCommit(ctx: TxnContext, batch: Long): Option[CommitRecord] =
    ctx.store.read(TxCommitSinkProtocol.markerPath(ctx.table, batch)).flatMap(TxCommitSinkProtocol.markerTxn)
      .filter(_ != ctx.txn).flatMap { earlier =>
        val rec = ctx.layout.commitRecord(earlier)
        ctx.store.read(rec).map(b => RecordCodec.decode(b, Paths.display(rec), earlier)).filterNot(_.isFence)
      }
}

package io.txcommit.commit

/** Durations of the stages that ran, in order, for `_SUCCESS` and logs. */
final class StageTimings {
  private val entries = scala.collection.mutable.LinkedHashMap.empty[String, Long]
  def record(stage: String, ms: Long): Unit = synchronized { entries(stage) = ms }
  def all: Seq[(String, Long)] = synchronized { entries.toSeq }
}

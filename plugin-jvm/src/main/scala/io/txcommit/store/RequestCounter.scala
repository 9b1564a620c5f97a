package io.txcommit.store

import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.LongAdder

import scala.jdk.CollectionConverters._

/**
 * Store requests a [[CommitStore]] made, by type (PUT, GET, HEAD, LIST, COPY, DELETE, RENAME,
 * MULTIPART_COMPLETE, MULTIPART_ABORT, ...), reported in `_SUCCESS` so that what a commit cost
 * is measured, not assumed.
 */
final class RequestCounter {
  private val counts = new ConcurrentHashMap[String, LongAdder]()

  def add(kind: String, n: Long = 1): Unit =
    if (n > 0) counts.computeIfAbsent(kind, _ => new LongAdder).add(n)

  def snapshot: Map[String, Long] = counts.asScala.map { case (k, v) => k -> v.sum() }.toMap

  def total: Long = counts.values().asScala.map(_.sum()).sum
}

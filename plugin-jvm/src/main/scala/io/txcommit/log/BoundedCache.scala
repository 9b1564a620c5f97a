package io.txcommit.log

/**
 * A thread-safe map that keeps at most `maxWeight` (the sum of its values' weights), evicting
 * the least recently used entries first: the JVM-wide caches of decoded log records, which
 * are immutable, and per-read answers keyed by the read. A value heavier than `maxWeight` is not kept. Only positive, decoded results
 * go in; nothing that may still change (an absent record, a corrupt one) is ever cached.
 */
final class BoundedCache[K, V](val maxWeight: Long, weigh: V => Long) {
  private val map = new java.util.LinkedHashMap[K, (V, Long)](64, 0.75f, true)
  private var weight = 0L

  def get(key: K): Option[V] = synchronized(Option(map.get(key)).map(_._1))

  def put(key: K, value: V): Unit = {
    val w = math.max(1L, weigh(value))
    if (w <= maxWeight) synchronized {
      Option(map.put(key, (value, w))).foreach(old => weight -= old._2)
      weight += w
      val it = map.values().iterator()
      while (weight > maxWeight && it.hasNext) {
        weight -= it.next()._2
        it.remove()
      }
    }
  }

  /** The value for `key`, made (cheaply: under the lock) and kept if absent. */
  def getOrElseUpdate(key: K, make: => V): V = synchronized {
    get(key).getOrElse { val v = make; put(key, v); v }
  }

  def remove(key: K): Unit = synchronized(Option(map.remove(key)).foreach(old => weight -= old._2))

  def size: Int = synchronized(map.size)
  def totalWeight: Long = synchronized(weight)
  def clear(): Unit = synchronized { map.clear(); weight = 0L }
}

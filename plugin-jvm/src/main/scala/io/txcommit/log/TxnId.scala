package io.txcommit.log

import java.security.SecureRandom

/**
 * A transaction id: 16 characters of [0-9a-z], time-ordered (8 chars of base-36 epoch
 * milliseconds, good until the year 5188) followed by 8 random base-36 characters, so two
 * drivers starting in the same millisecond still differ.
 */
object TxnId {
  val Length = 16
  private val Pattern = "^[0-9a-z]{16}$".r
  private val random = new SecureRandom()

  def generate(nowMillis: Long = System.currentTimeMillis()): String = {
    val time = java.lang.Long.toString(nowMillis, 36).reverse.padTo(8, '0').reverse
    val rand = (0 until 8).map(_ => Character.forDigit(random.nextInt(36), 36)).mkString
    time + rand
  }

  def isValid(id: String): Boolean = Pattern.matches(id)

  /** When the transaction started (epoch ms), read from its id; None for an invalid id. */
  def startedAt(id: String): Option[Long] =
    if (!isValid(id)) None else scala.util.Try(java.lang.Long.parseLong(id.substring(0, 8), 36)).toOption
}

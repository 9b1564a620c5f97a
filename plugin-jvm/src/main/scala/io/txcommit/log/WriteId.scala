package io.txcommit.log

/** A write id: names one logical write, so that a re-run replaces what the earlier run wrote. */
object WriteId {
  val MaxLength = 200
  private val Allowed = "^[A-Za-z0-9._:@=+-]+$".r

  /** Why `id` is not a valid write id, or None when it is. */
  def problem(id: String): Option[String] =
    if (id.isEmpty) Some("is empty")
    else if (id.length > MaxLength) Some(s"is ${id.length} characters long (at most $MaxLength)")
    else if (!Allowed.matches(id)) Some(s"'$id' has characters outside [A-Za-z0-9._:@=+-]")
    else None
}

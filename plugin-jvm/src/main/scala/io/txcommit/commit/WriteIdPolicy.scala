package io.txcommit.commit

/** What a write-id job does when a commit with its write id already exists. */
sealed abstract class WriteIdPolicy(val name: String)
object WriteIdPolicy {

  /** The new run replaces exactly what the earlier runs with that write id added. */
  case object Replace extends WriteIdPolicy("replace")

  /** The new run commits nothing (its files are discarded) and says so. */
  case object Skip extends WriteIdPolicy("skip")

  /** The new run fails with an error naming the earlier transaction. */
  case object Fail extends WriteIdPolicy("fail")
  val all: Seq[WriteIdPolicy] = Seq(Replace, Skip, Fail)
}

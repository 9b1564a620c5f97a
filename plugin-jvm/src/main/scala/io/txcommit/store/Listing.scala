package io.txcommit.store

/** How a store's listing relates to its writes. */
sealed abstract class Listing(val name: String)
object Listing {

  /** A listing shows every completed write and no completed delete (S3 since 2020, HDFS, POSIX). */
  case object Consistent extends Listing("consistent")

  /** A listing may lag writes or deletes: txcommit's readers cannot be used on such a store. */
  case object Eventual extends Listing("eventual")

  val all: Seq[Listing] = Seq(Consistent, Eventual)
  def byName(name: String): Option[Listing] = all.find(_.name == name)
}

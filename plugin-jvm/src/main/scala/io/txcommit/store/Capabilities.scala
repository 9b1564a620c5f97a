package io.txcommit.store

/** The atomicity primitive an adapter uses to make a file visible all at once. */
sealed abstract class Primitive(val name: String)
object Primitive {
  /** Write a temporary file, then rename it to the target without overwrite (POSIX, HDFS). */
  case object Rename extends Primitive("rename")
  /** Write straight to the final key; create the record with `If-None-Match: *` (S3). */
  case object ConditionalPut extends Primitive("conditional-put")
  /** Upload data as multipart uploads completed only at job commit (S3). */
  case object MultipartComplete extends Primitive("multipart-complete")

  val all: Seq[Primitive] = Seq(Rename, ConditionalPut, MultipartComplete)
  def byName(name: String): Option[Primitive] = all.find(_.name == name)
}

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

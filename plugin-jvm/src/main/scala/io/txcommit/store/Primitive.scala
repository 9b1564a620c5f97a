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

package io.txcommit.log

import org.apache.hadoop.fs.Path

/**
 * What a prepared record says about its group, a multi-table transaction (docs/protocol.md,
 * I33): the group's id, the URL of its decision (created exclusively, once: the commit point of
 * every table of the group) and the lease, the time after the group's last sign of life past
 * which anyone may decide it aborted.
 *
 * The decision is always `<dir>/_txcommit/groups/<id>.json` (the first table the group wrote, or
 * a directory its driver named), so a record can make a reader read, or an aborting writer
 * create, nothing but a group's decision in a txcommit log directory.
 */
final case class GroupRef(id: String, decision: String, leaseMs: Long) {
  def decisionPath: Path = new Path(decision)

  /** The group's lease: rewritten by its driver while it lives; its store time is its last sign of life. */
  def leasePath: Path = GroupRef.leaseOf(decisionPath, id)

  /** The directory holding `_txcommit/groups/` (a table, or the directory the driver named). */
  def root: Path = decisionPath.getParent.getParent.getParent
}

object GroupRef {

  /** The decision of group `id` kept under `root` (a table or a named directory). */
  def decisionUnder(root: Path, id: String): Path = new Path(LogLayout(root).groupsDir, s"$id.json")

  def leaseOf(decision: Path, id: String): Path = new Path(new Path(decision.getParent, id), "lease.json")

  /** Why `url` cannot be group `id`'s decision; None when it can. */
  def problem(id: String, url: String): Option[String] =
    if (!TxnId.isValid(id)) Some(s"its group id '$id' is not a transaction id")
    else {
      val p = scala.util.Try(new Path(url)).toOption
      p match {
        case None => Some(s"its decision '$url' is not a URL")
        case Some(d) if !d.isAbsolute || d.toUri.getScheme == null =>
          Some(s"its decision '$url' is not an absolute URL with a scheme")
        case Some(d)
            if d.getName != s"$id.json" || d.getParent == null || d.getParent.getName != "groups" ||
              d.getParent.getParent == null || d.getParent.getParent.getName != LogLayout.LogDirName ||
              d.getParent.getParent.getParent == null =>
          Some(s"its decision '$url' is not <directory>/${LogLayout.LogDirName}/groups/$id.json")
        case Some(d) if d.toString.split("/").exists(s => s == ".." || s == ".") =>
          Some(s"its decision '$url' has '.' or '..' segments")
        case Some(_) => None
      }
    }
}

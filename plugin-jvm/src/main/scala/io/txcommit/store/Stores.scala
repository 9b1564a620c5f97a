package io.txcommit.store

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import io.txcommit.UnsupportedStoreException

/** Picks the store adapter for a table path by its URI scheme. */
object Stores {
  /** Schemes served today, with the primitive each relies on. */
  val Known: Map[String, Primitive] = Map(
    "file" -> Primitive.Rename,
    "hdfs" -> Primitive.Rename,
    "viewfs" -> Primitive.Rename)

  def forPath(table: Path, conf: Configuration): CommitStore = {
    val fs = table.getFileSystem(conf)
    // The table's own scheme decides (a scheme may be served by another scheme's class).
    val scheme = Option(table.toUri.getScheme).orElse(Option(fs.getUri.getScheme)).getOrElse("file")
    scheme match {
      case "file" => new RenameStore(fs, local = true)
      case "hdfs" | "viewfs" => new RenameStore(fs, local = false)
      case other => throw new UnsupportedStoreException(
        s"no store adapter serves scheme '$other' (table ${io.txcommit.Paths.display(table)}); " +
          s"known adapters: ${Known.toSeq.sortBy(_._1).map { case (s, p) => s"$s (${p.name})" }.mkString(", ")}. " +
          "Write this table without txcommit (txcommit.disable(spark)) or use a supported store.")
    }
  }
}

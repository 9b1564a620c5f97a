package io.txcommit

import java.net.URI

import org.apache.hadoop.fs.Path

/** Path helpers shared by the writer and the reader. */
object Paths {
  private val SchemeLike = "^[A-Za-z][A-Za-z0-9+.-]*:".r

  /** Schemes whose user-info part is the container (`abfss://<container>@<account>...`). */
  private val ContainerSchemes = Set("abfs", "abfss", "wasb", "wasbs")

  /**
   * A path as text for logs and errors: the user-info part of the URI is never shown, except an
   * Azure container name (no `:`), which names the place and is no credential.
   */
  def display(path: Path): String = {
    val uri = path.toUri
    val info = Option(uri.getUserInfo)
    val container = Option(uri.getScheme).exists(s => ContainerSchemes(s.toLowerCase(java.util.Locale.ROOT))) &&
      info.exists(!_.contains(":"))
    if (info.isEmpty || container) path.toString
    else new URI(uri.getScheme, null, uri.getHost, uri.getPort, uri.getPath, null, null).toString
  }

  /**
   * Checks that `relative` names a file inside its table directory: relative, normalised, no
   * `..`, `.` or empty segment, no scheme, no backslash. Returns the reason it is unsafe.
   */
  def unsafeRelativePath(relative: String): Option[String] = {
    if (relative.isEmpty) Some("it is empty")
    else if (relative.startsWith("/")) Some("it is absolute")
    else if (relative.contains("\\")) Some("it contains a backslash")
    else if (SchemeLike.findPrefixOf(relative).isDefined) Some("it starts with a scheme")
    else {
      val segments = relative.split("/", -1)
      if (segments.exists(s => s == ".." || s == ".")) Some("it contains '.' or '..'")
      else if (segments.exists(_.isEmpty)) Some("it contains an empty segment")
      else None
    }
  }

  /** `child` relative to `root`, when `child` lies strictly below `root`. */
  def relativize(root: Path, child: Path): Option[String] = {
    val r = root.toUri.getPath.stripSuffix("/") + "/"
    val c = child.toUri.getPath
    if (c.startsWith(r) && c.length > r.length) Some(c.substring(r.length)) else None
  }
}

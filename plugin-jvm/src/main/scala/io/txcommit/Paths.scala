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
    if (plainRelative(relative)) None // no scheme, backslash, `.`, `..` or empty segment
    else if (relative.isEmpty) Some("it is empty")
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

  /**
   * The paths of files below `dir` from their paths relative to it, equal to `new Path(dir, rel)`:
   * a relative path of plain characters (letters, digits, `-`, `_`, `.`, `=`, `/`, no empty,
   * `.` or `..` segment, as Spark names partition directories and files) is appended to the
   * directory's URI and parsed once, where `new Path(dir, rel)` parses four URIs; any other path
   * goes through `new Path`. A plan of a million-file table builds a million of them.
   */
  def below(dir: Path): String => Path = {
    val uri = dir.toUri.toString
    val prefix = if (uri.endsWith("/")) uri else uri + "/"
    rel => if (plainRelative(rel)) new Path(new URI(prefix + rel)) else new Path(dir, rel)
  }

  private def plainRelative(rel: String): Boolean = {
    var i = 0
    var segmentStart = 0
    var ok = rel.nonEmpty
    while (ok && i <= rel.length) {
      if (i == rel.length || rel.charAt(i) == '/') {
        val segment = rel.substring(segmentStart, i)
        ok = segment.nonEmpty && segment != "." && segment != ".."
        segmentStart = i + 1
      } else {
        val c = rel.charAt(i)
        ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
          c == '.' || c == '='
      }
      i += 1
    }
    ok
  }

  /** `child` relative to `root`, when `child` lies strictly below `root`. */
  def relativize(root: Path, child: Path): Option[String] = {
    val r = root.toUri.getPath.stripSuffix("/") + "/"
    val c = child.toUri.getPath
    if (c.startsWith(r) && c.length > r.length) Some(c.substring(r.length)) else None
  }
}

package io.txcommit.store

import java.io.{FileNotFoundException, IOException}
import java.net.URI
import java.nio.file.{Files, FileSystemException, LinkOption, Paths => JPaths}
import java.nio.file.attribute.BasicFileAttributes

import scala.annotation.tailrec
import scala.util.Try

import org.apache.hadoop.fs.{FileStatus, FileSystem, Path}

import io.txcommit.Paths

/**
 * Symbolic links on a path, on the stores that have them: the local file system and HDFS (no
 * object store has links). A table is the directory a path leads to once every link on it is
 * followed, its resolved location (docs/protocol.md, I18): the checks that keep one log per
 * path, and VACUUM, judge that location, never only the path as written.
 *
 * Hadoop hides local links (its listings and statuses follow them and report no link), so the
 * local file system is asked through `java.nio` (`lstat`). HDFS reports them
 * (`getFileLinkStatus`), whether or not this client follows them: a client follows HDFS links
 * only where its JVM called `FileSystem.enableSymlinks()` (Hadoop's default is off, and then
 * every call through a link fails).
 */
object Links {

  /** At most this many links are followed on one path (Linux's own limit is 40). */
  val MaxHops = 40

  /** What one name on a path is: absent, present, or a link to `path` (relative to the link's
   *  directory, or absolute), or to `elsewhere`, a path on another file system. */
  private sealed trait Entry
  private case object Absent extends Entry
  private case object Present extends Entry
  private final case class Link(path: String, elsewhere: Option[Path]) extends Entry

  private def isLocal(fs: FileSystem): Boolean = fs.getUri.getScheme == "file"

  /** Whether a listing of `fs` may hold links: the local file system and HDFS. */
  def listed(fs: FileSystem): Boolean = isLocal(fs) || Try(fs.supportsSymlinks()).getOrElse(false)

  /** Whether this client follows links on `fs`: always locally; on HDFS where they are switched on. */
  def followed(fs: FileSystem): Boolean = isLocal(fs) || (listed(fs) && FileSystem.areSymlinksEnabled())

  /**
   * Where `path` leads once every link on it is followed (qualified); the part of it that does
   * not exist yet is kept as written. `path` itself (qualified) on a store without links. A link
   * to another file system ends the walk: the rest is kept below its target.
   */
  def resolve(fs: FileSystem, path: Path): Path = {
    val q = fs.makeQualified(path)
    if (!listed(fs)) q
    else {
      val uri = q.toUri
      def at(p: String): Path =
        new Path(new URI(uri.getScheme, uri.getAuthority, if (p.isEmpty) "/" else p, null, null))
      @tailrec def walk(done: String, todo: List[String], absent: Boolean, hops: Int): Path = todo match {
        case Nil => at(done)
        case ("" | ".") :: rest => walk(done, rest, absent, hops)
        case ".." :: rest => walk(done.substring(0, math.max(done.lastIndexOf('/'), 0)), rest, absent, hops)
        case name :: rest =>
          val next = s"$done/$name"
          if (absent) walk(next, rest, absent, hops)
          else entry(fs, at(next)) match {
            case Absent => walk(next, rest, absent = true, hops)
            case Present => walk(next, rest, absent, hops)
            case Link(target, elsewhere) =>
              if (hops >= MaxHops) throw new IOException(s"txcommit: ${Paths.display(q)} leads through more " +
                s"than $MaxHops links (a loop?); replace them with the directory they lead to")
              elsewhere match {
                case Some(other) => rest.foldLeft(other)((p, n) => new Path(p, n))
                case None => walk(if (target.startsWith("/")) "" else done, segments(target) ++ rest, absent, hops + 1)
              }
          }
      }
      walk("", segments(uri.getPath), absent = false, 0)
    }
  }

  /**
   * Where `name`, in the directory `realParent` (itself resolved: no link on it), leads: one
   * `lstat` (one `getFileLinkStatus` on HDFS), or a whole [[resolve]] when it is a link. What a
   * caller resolving many directories of one tree asks, its parents' answers kept.
   */
  def child(fs: FileSystem, realParent: Path, name: String): Path = {
    val uri = realParent.toUri
    val p = new Path(new URI(uri.getScheme, uri.getAuthority, s"${uri.getPath.stripSuffix("/")}/$name", null, null))
    entry(fs, p) match {
      case Link(_, _) => resolve(fs, p)
      case _ => p
    }
  }

  /** `lexical` and where it leads, as errors name them: "X is a link to Y" or "X leads through a link to Y". */
  def describe(fs: FileSystem, lexical: Path, real: Path): String = {
    val direct = Try(entry(fs, fs.makeQualified(lexical))).toOption.exists(_.isInstanceOf[Link])
    s"${Paths.display(lexical)} ${if (direct) "is a link" else "leads through a link"} to ${Paths.display(real)}"
  }

  /** Why a path that leads through a link cannot be used here: "X is a link to Y, and this client does not follow links". */
  def notFollowed(fs: FileSystem, lexical: Path, real: Path): String =
    s"${describe(fs, lexical, real)}, and this Hadoop client does not follow links on " +
      s"${fs.getUri.getScheme}:// (FileSystem.areSymlinksEnabled() is false, Hadoop's default)"

  /** Whether `e` is Hadoop refusing a call through a link this client does not follow. */
  def unfollowed(e: Throwable): Boolean =
    Iterator.iterate(e)(_.getCause).takeWhile(_ != null)
      .exists(c =>
        Option(c.getMessage).exists(_.toLowerCase(java.util.Locale.ROOT).contains("symlink resolution is disabled")))

  /** Whether the listed entry `st` is a link (a local listing follows links and never says so). */
  def isLink(fs: FileSystem, st: FileStatus): Boolean =
    if (isLocal(fs)) Files.isSymbolicLink(JPaths.get(st.getPath.toUri)) else st.isSymlink

  /**
   * The first directory of `rel` (a path relative to `dir`, one name after another) that is a
   * link, with where it leads; None when none is (names that do not exist yet are no links).
   */
  def linkBelow(fs: FileSystem, dir: Path, rel: String): Option[(Path, Path)] = {
    val names = segments(rel)
    names.indices.iterator.map(i => new Path(dir, names.take(i + 1).mkString("/")))
      .map(p => p -> entry(fs, fs.makeQualified(p)))
      .takeWhile(_._2 != Absent)
      .collectFirst { case (p, Link(_, _)) => p -> resolve(fs, p) }
  }

  private def segments(path: String): List[String] = path.split("/").toList.filter(_.nonEmpty)

  /** What the name at `p` (whose directories are no links) is, without following it. */
  private def entry(fs: FileSystem, p: Path): Entry =
    if (isLocal(fs)) {
      val jp = JPaths.get(p.toUri)
      try {
        val attrs = Files.readAttributes(jp, classOf[BasicFileAttributes], LinkOption.NOFOLLOW_LINKS)
        if (attrs.isSymbolicLink) Link(Files.readSymbolicLink(jp).toString, None) else Present
      } catch { case _: FileSystemException => Absent } // missing, or a file on the way: nothing below it
    } else
      try {
        val st = fs.getFileLinkStatus(p)
        if (!st.isSymlink) Present
        else {
          // HDFS qualifies a link's target (a relative one against the link's directory).
          val (t, own) = (st.getSymlink.toUri, fs.getUri)
          val same =
            Option(t.getScheme).forall(_ == own.getScheme) && Option(t.getAuthority).forall(_ == own.getAuthority)
          Link(t.getPath, if (same) None else Some(st.getSymlink))
        }
      } catch { case _: FileNotFoundException => Absent }
}

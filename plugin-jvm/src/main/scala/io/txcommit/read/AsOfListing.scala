package io.txcommit.read

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}

import io.txcommit.{Paths, TimeTravelException}
import io.txcommit.log.{BoundedCache, RemovedFile, TableFile}

/**
 * What a read of a past snapshot must find in its data listing (docs/protocol.md, I30): the
 * files of the snapshot that a later replacing commit removed (and no restore re-added), each
 * by path, size and, without a txn id, its modification second (I21's identity). They are the
 * only files of the snapshot VACUUM may delete, so a listing that holds every one of them (below
 * the directories it listed) read the snapshot whole, whatever VACUUM did before or during the
 * read, and whether or not it recorded a horizon; one that lacks some fails naming them.
 *
 * @param snapshot how errors name the read and the snapshot (`txcommit.asOf '…' of table …: the
 *                 snapshot (version n, transaction t)`)
 * @param files    the snapshot's files a later replacing commit removed, relative to the table
 */
final case class AsOfListing(snapshot: String, files: Vector[RemovedFile]) {

  /**
   * The files of this snapshot below one of `under` (directories relative to the table; "" is
   * the table) that are not on the store as the snapshot had them: not in `listed` (the read's
   * listing, paths relative to the table) and not as `stat` finds the file at its path now (size,
   * modification time; None: no file). `stat` is asked only about files the listing lacks: a
   * reader may list only the files it reads (Spark leaves empty files out).
   */
  def missing(under: Seq[String], listed: Iterable[TableFile], stat: String => Option[(Long, Long)])
      : Seq[RemovedFile] = {
    val wanted = files.filter(f => under.exists(d => d.isEmpty || f.path.startsWith(d.stripSuffix("/") + "/")))
    if (wanted.isEmpty) Nil
    else {
      val paths = wanted.iterator.map(_.path).toSet
      val byPath = listed.iterator.filter(f => paths(f.path)).toSeq.groupBy(_.path)
      wanted.filterNot(w => byPath.get(w.path).exists(_.exists(f => w.isFile(f.size, f.modifiedAt))))
        .filterNot(w => stat(w.path).exists { case (size, at) => w.isFile(size, at) })
    }
  }

  /** Fails, naming the files, when [[missing]] finds some. */
  def verify(under: Seq[String], listed: Iterable[TableFile], stat: String => Option[(Long, Long)]): Unit = {
    val gone = missing(under, listed, stat)
    if (gone.nonEmpty) throw new TimeTravelException(s"$snapshot held files that a later replacing commit removed " +
      s"and that are no longer on the store as it had them: ${RemovedFile.names(gone)}; it cannot be read whole " +
      "(VACUUM deletes such files, one that recorded no horizon too, and a writer without txcommit may have " +
      "written another file under one's name)")
  }

  /**
   * [[verify]] for a listing of `roots` (qualified paths, some perhaps outside `table`) by a reader
   * on the table's file system: `listed` holds qualified paths.
   */
  def verify(table: Path, roots: Seq[Path], listed: Iterable[FileStatus], conf: Configuration): Unit = {
    def same(a: Path, b: Path) = a.toUri.getPath.stripSuffix("/") == b.toUri.getPath.stripSuffix("/")
    val under = roots.flatMap(r => if (same(r, table)) Some("") else Paths.relativize(table, r))
    if (under.nonEmpty) {
      val rel = listed.iterator.flatMap(st =>
        Paths.relativize(table, st.getPath).map(TableFile(_, st.getLen, st.getModificationTime))).toSeq
      lazy val fs = table.getFileSystem(conf)
      verify(under, rel,
        p =>
          try {
            val st = fs.getFileStatus(new Path(table, p))
            if (st.isFile) Some((st.getLen, st.getModificationTime)) else None
          } catch { case _: java.io.FileNotFoundException => None })
    }
  }
}

object AsOfListing {

  /**
   * The listings reads of past snapshots must check, by (read, table root): taken on the driver
   * when the read's snapshot is (before any data is listed), checked there once the data is.
   * The newest reads' are kept, by count: their files are the cached records' own entries.
   */
  private val expected = new BoundedCache[(String, String), AsOfListing](10000L, _ => 1L)

  private[read] def expect(readId: String, root: String, listing: AsOfListing): Unit =
    if (listing.files.nonEmpty) expected.put((readId, root), listing)

  /** What a read's listing must hold, by table root (qualified), for the tables of `handle` that are past snapshots. */
  def of(handle: SnapshotHandle): Seq[(Path, AsOfListing)] =
    handle.tables.flatMap(t => expected.get((handle.readId, t.root)).map(new Path(t.root) -> _))

  /** [[of]] for a read option's encoded handle (none for a value that is not one). */
  def of(encodedHandle: String): Seq[(Path, AsOfListing)] =
    SnapshotHandle.decode(encodedHandle).toOption.flatten.toSeq.flatMap(of)
}

package io.txcommit.read

import java.nio.file.Files

import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.conf.TxCommitConf
import io.txcommit.log.{CheckpointCodec, LogLayout, RecordCodec, TableState}
import io.txcommit.testing.{TempTable, Vectors}

/**
 * Tables as listings (`conformance/vectors/tables.json`): each is built on a temporary
 * directory (files named in `stat` with that size and modification time), and what Spark with the plugin reads (the names Spark lists as data, then the
 * read filter) must be exactly the case's `visible` set, which the Python readers are held to; the
 * same at each of the case's other `reads` roots (a table, a partition directory, a directory of
 * tables, a table inside a table), with the names below the root; each read by the clock cut
 * and log first.
 */
class TablesSuite extends AnyFunSuite {
  for (c <- Vectors.elements(Vectors.json("tables.json").get("cases"))) {
    val name = c.get("name").asText()
    test(s"Spark with the read filter reads exactly the visible files: $name") {
      val t = new TempTable
      val files = Vectors.placeFiles(t, c)
      for (r <- Vectors.elements(c.get("records"))) {
        val f = t.dir.resolve(r.get("file").asText())
        Files.createDirectories(f.getParent)
        val record = Vectors.record(r.get("record"))
        Files.write(f, RecordCodec.encode(record))
        // The store's time: the writer's clock is right in every vector.
        Files.setLastModifiedTime(f, java.nio.file.attribute.FileTime.fromMillis(record.committedAt))
      }
      for (k <- Option(c.get("checkpoints")).toSeq.flatMap(Vectors.elements)) {
        val name = k.get("file").asText()
        val number = LogLayout.sequenceOfRecordName(name.substring(name.lastIndexOf('/') + 1)).get
        val checkpoint = Vectors.checkpoint(k.get("checkpoint"), number)
        t.writeRaw(name, new String(CheckpointCodec.encode(checkpoint), "UTF-8"))
        Files.setLastModifiedTime(t.dir.resolve(name),
          java.nio.file.attribute.FileTime.fromMillis(checkpoint.createdAt))
      }
      for (raw <- Option(c.get("raw")).toSeq.flatMap(Vectors.elements)) {
        t.writeRaw(raw.get("file").asText(), raw.get("content").asText())
      }
      // The listing's own directory, then each of the case's other roots; one read (filter) each.
      val reads = ("", c.get("visible")) +: Option(c.get("reads")).toSeq.flatMap(Vectors.elements)
        .map(r => (r.get("root").asText(), r.get("visible")))
      // Each root read twice: by the clock cut (no snapshot option) and log first (the option
      // the SQL extension adds), which must agree on every case.
      for ((root, visible) <- reads; logFirst <- Seq(false, true)) {
        val filter = new CommittedFilesFilter
        val conf = new org.apache.hadoop.conf.Configuration(t.conf)
        if (logFirst) {
          val at = if (root.isEmpty) t.table else new Path(t.table, root)
          LogFirstSnapshot.forRoots(Seq(at), conf).foreach(h => conf.set(TxCommitConf.SnapshotOption, h.encode))
        }
        filter.setConf(conf)
        val below = files.flatMap(p =>
          if (root.isEmpty) Some(p) else if (p.startsWith(root + "/")) Some(p.substring(root.length + 1)) else None)
        val read = below.filter(rel =>
          TableState.isData(rel) &&
            filter.accept(new Path(t.table, if (root.isEmpty) rel else s"$root/$rel")))
        assert(read.sorted == Vectors.elements(visible).map(_.asText()),
          s"read at '$root' (log first: $logFirst): ${c.get("about").asText()}")
      }
      // Planned from the snapshot (the file index a log-first read gets): a log-only table's
      // files from its log, any other root listed once and each file judged against the log; a
      // root in no table is Spark's own listing (above).
      for ((root, visible) <- reads) {
        val at = if (root.isEmpty) t.table else new Path(t.table, root)
        LogFirstSnapshot.forRoots(Seq(at), t.conf).foreach { h =>
          val planned = ReadFiles.of(h, Seq(at), t.conf) match {
            case ReadFiles.Files(found, listed) =>
              // A log-only table (I32) is never listed; any other root is, once.
              val logOnly = Option(c.get("checkpoints")).toSeq.flatMap(Vectors.elements)
                .exists(k => Option(k.get("checkpoint").get("reads")).exists(_.asText() == "log"))
              assert(listed == !logOnly, s"read at '$root' listed: $listed")
              found.flatMap(st => io.txcommit.Paths.relativize(at, st.getPath)).sorted
            case other => fail(s"read at '$root' left to Spark's listing: $other")
          }
          assert(planned == Vectors.elements(visible).map(_.asText()),
            s"planned read at '$root': ${c.get("about").asText()}")
        }
      }
    }
  }
}

package io.txcommit.read

import java.nio.file.{FileVisitOption, Files, Paths => JPaths}
import java.nio.file.attribute.FileTime

import scala.jdk.CollectionConverters._

import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.UnsupportedReadException
import io.txcommit.conf.TxCommitConf
import io.txcommit.log.{RecordCodec, TableState}
import io.txcommit.testing.{TempTable, Vectors}

/**
 * Reads through links (`conformance/vectors/links.json`, which the Python readers are held to):
 * each case is built on a temporary directory, and each read lists its root as Spark does
 * (through links), then the read filter judges each data file, by the clock cut and log first:
 * exactly the case's `visible` files, or the read is refused.
 */
class LinksVectorsSuite extends AnyFunSuite {
  for (c <- Vectors.elements(Vectors.json("links.json").get("cases"))) {
    val name = c.get("name").asText()
    test(s"a read through links shows what the vectors say, or is refused: $name") {
      val t = new TempTable
      Vectors.elements(c.get("files")).foreach(f => t.touch(f.asText()))
      for (r <- Vectors.elements(c.get("records"))) {
        val f = t.dir.resolve(r.get("file").asText())
        Files.createDirectories(f.getParent)
        val record = Vectors.record(r.get("record"))
        Files.write(f, RecordCodec.encode(record))
        // The store's time: the writer's clock is right in every vector (as in TablesSuite).
        Files.setLastModifiedTime(f, FileTime.fromMillis(record.committedAt))
      }
      for (l <- Vectors.elements(c.get("links"))) {
        val at = t.dir.resolve(l.get("link").asText())
        val target = l.get("target").asText()
        Files.createDirectories(at.getParent)
        Files.createSymbolicLink(at,
          if (Option(l.get("absolute")).exists(_.asBoolean)) t.dir.resolve(target) else JPaths.get(target))
      }
      for (read <- Vectors.elements(c.get("reads")); logFirst <- Seq(false, true)) {
        val root = read.get("root").asText()
        val at = new Path(t.table, root)
        val rootDir = t.dir.resolve(root)
        // Spark's listing: every file below the root, through links, named below the root.
        val listed = Files.walk(rootDir, FileVisitOption.FOLLOW_LINKS).iterator.asScala
          .filter(p => Files.isRegularFile(p)).map(p => rootDir.relativize(p).toString)
          .filter(TableState.isData).toSeq.sorted
        def visible(): Seq[String] = {
          val conf = new org.apache.hadoop.conf.Configuration(t.conf)
          if (logFirst)
            LogFirstSnapshot.forRoots(Seq(at), conf).foreach(h => conf.set(TxCommitConf.SnapshotOption, h.encode))
          val filter = new CommittedFilesFilter
          filter.setConf(conf)
          listed.filter(rel => filter.accept(new Path(at, rel)))
        }
        val how = s"read at '$root' (log first: $logFirst)"
        if (Option(read.get("refused")).exists(_.asBoolean)) {
          val e = intercept[UnsupportedReadException](visible())
          assert(e.getMessage.contains("is a link to") || e.getMessage.contains("leads through a link to"), how)
        } else assert(visible() == Vectors.elements(read.get("visible")).map(_.asText()), how)
      }
    }
  }
}

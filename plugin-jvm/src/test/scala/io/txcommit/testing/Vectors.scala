package io.txcommit.testing

import java.io.File
import java.nio.file.Files

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

import io.txcommit.log.{AddedFile, Checkpoint, CommitRecord, RemovedFile, Replacement, SchemaMark}

/**
 * The golden test vectors in `conformance/vectors/` (see its README.md), shared with the
 * Python tests so both languages are held to the same bytes and rules. sbt forks tests with
 * the module directory as working directory: the repository root is found by walking up.
 */
object Vectors {
  private val mapper = new ObjectMapper()

  lazy val dir: File = Iterator.iterate(new File(".").getAbsoluteFile)(_.getParentFile)
    .takeWhile(_ != null).map(new File(_, "conformance/vectors")).find(_.isDirectory)
    .getOrElse(sys.error("conformance/vectors not found above the working directory"))

  def bytes(rel: String): Array[Byte] = Files.readAllBytes(new File(dir, rel).toPath)

  def json(rel: String): JsonNode = mapper.readTree(bytes(rel))

  def elements(node: JsonNode): Seq[JsonNode] = node.elements().asScala.toSeq

  /** A text field, None when it is null or absent. */
  def text(node: JsonNode, field: String): Option[String] =
    Option(node.get(field)).filterNot(_.isNull).map(_.asText())

  def long(node: JsonNode, field: String): Option[Long] =
    Option(node.get(field)).filterNot(_.isNull).map(_.asLong())

  /** A logical record of `records.json` as the JVM's model. */
  def record(n: JsonNode): CommitRecord = {
    def files(field: String) = elements(n.get(field)).map(f => f.get("path").asText() -> f.get("size").asLong())
    CommitRecord(
      txn = n.get("txn").asText(),
      token = n.get("token").asText(),
      jobId = n.get("jobId").asText(),
      startedAt = n.get("startedAt").asLong(),
      committedAt = n.get("committedAt").asLong(),
      added = files("added").map { case (p, s) => AddedFile(p, s) },
      appId = text(n, "appId"),
      writer = n.get("writer").asText(),
      operation = n.get("operation").asText(),
      writeId = text(n, "writeId"),
      replacement = long(n, "sequence").map(seq =>
        Replacement(seq, elements(n.get("scope")).map(_.asText()),
          removedFiles(n.get("removed")), Option(n.get("restored")).map(removedFiles).getOrElse(Nil))),
      schema = text(n, "schema"))
  }

  /** A logical checkpoint of `checkpoints.json` (or of a `tables.json` case) numbered `number`. */
  def checkpoint(n: JsonNode, number: Long): Checkpoint = {
    def files(node: JsonNode) = elements(node).map(f => f.get("path").asText() -> f.get("size").asLong()).toVector
    Checkpoint(
      number = number,
      createdAt = n.get("createdAt").asLong(),
      appId = text(n, "appId"),
      writer = n.get("writer").asText(),
      through = n.get("through").asLong(),
      committed = elements(n.get("committed")).map(t =>
        t.get("txn").asText() -> files(t.get("files")).map { case (p, s) => AddedFile(p, s) }).toMap,
      removed = removedFiles(n.get("removed")).toVector,
      // absent: a checkpoint from before it carried the schema; null: none of its records carries one
      schema = Option(n.get("schema")).map(m =>
        if (m.isNull) None
        else Some(SchemaMark(m.get("txn").asText(), m.get("committedAt").asLong(), m.get("ddl").asText()))),
      reads = Option(n.get("reads")).map(_.asText()))
  }

  /** `removed` (or `restored`) entries: `path`, `size` and, for a file without a txn id, its `modifiedAt`. */
  def removedFiles(node: JsonNode): Seq[RemovedFile] = elements(node).map { f =>
    RemovedFile(f.get("path").asText(), f.get("size").asLong(),
      Option(f.get("modifiedAt")).filterNot(_.isNull).map(_.asLong()))
  }

  /** A mutation of golden bytes: `keepBytes` (a prefix), `content` (all of it) or `replace` [from, to]. */
  def mutate(base: Array[Byte], m: JsonNode): Array[Byte] = {
    val text = new String(base, java.nio.charset.StandardCharsets.UTF_8)
    if (m.has("keepBytes")) base.take(m.get("keepBytes").asInt())
    else if (m.has("content")) m.get("content").asText().getBytes(java.nio.charset.StandardCharsets.UTF_8)
    else if (m.has("replace")) {
      val from = m.get("replace").get(0).asText()
      require(text.contains(from), s"the golden file does not contain '$from'")
      text.replace(from, m.get("replace").get(1).asText()).getBytes(java.nio.charset.StandardCharsets.UTF_8)
    } else base
  }

  /**
   * A case's `files` under `t`'s table: 3 bytes each, or, for a file its optional `stat` names,
   * that `size` in bytes and the modification time `modifiedAt` (epoch ms). Returns the paths.
   */
  def placeFiles(t: TempTable, c: JsonNode): Seq[String] = {
    val stat = Option(c.get("stat"))
    elements(c.get("files")).map(_.asText()).map { p =>
      stat.flatMap(s => Option(s.get(p))) match {
        case None => t.touch(p)
        case Some(st) =>
          t.touch(p, st.get("size").asInt())
          Files.setLastModifiedTime(t.dir.resolve(p),
            java.nio.file.attribute.FileTime.fromMillis(st.get("modifiedAt").asLong()))
      }
      p
    }
  }

  /** `s` as the inside of a JSON string literal (what Jackson writes between the quotes). */
  def jsonEscaped(s: String): String = mapper.writeValueAsString(s).drop(1).dropRight(1)
}

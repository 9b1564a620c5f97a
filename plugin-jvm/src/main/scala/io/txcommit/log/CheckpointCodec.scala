package io.txcommit.log

import scala.jdk.CollectionConverters._

import scala.util.control.NonFatal

import com.fasterxml.jackson.core.JsonToken
import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

import io.txcommit.{CorruptCheckpointException, Paths}

/**
 * JSON for checkpoints, as strict as [[RecordCodec]]: a checkpoint that is truncated, misses a
 * field, miscounts its lists, names a path outside its table or is not the number its file name
 * says is refused whole with an error that names the file (the reasons are shared with the
 * Python decoder: conformance/vectors/checkpoints.json).
 */
object CheckpointCodec {
  private val mapper = new ObjectMapper()

  def encode(c: Checkpoint): Array[Byte] = {
    val root = mapper.createObjectNode()
    root.put("format", Checkpoint.Format)
    root.put("version", Checkpoint.FormatVersion)
    root.put("checkpoint", c.number)
    root.put("createdAt", c.createdAt)
    c.appId.foreach(root.put("appId", _))
    root.put("writer", c.writer)
    root.put("through", c.through)
    root.put("transactions", c.committed.size)
    root.put("files", c.files)
    val committed = root.putArray("committed")
    c.committed.toSeq.sortBy(_._1).foreach { case (txn, files) =>
      val t = committed.addObject()
      t.put("txn", txn)
      val fs = t.putArray("files")
      files.sortBy(_.path).foreach(f => fs.addObject().put("path", f.path).put("size", f.size))
    }
    val removals = Removals.distinct(c.removed)
    root.put("removedFiles", removals.size)
    val removed = root.putArray("removed")
    removals.foreach(f => Removals.encode(f, removed.addObject()))
    c.schema.foreach {
      case None => root.putNull("schema")
      case Some(m) => root.putObject("schema").put("txn", m.txn).put("committedAt", m.committedAt).put("ddl", m.ddl)
    }
    c.reads.foreach(root.put("reads", _))
    mapper.writerWithDefaultPrettyPrinter().writeValueAsBytes(root)
  }

  /**
   * The checkpoint's fields but `committed`, as a tree, and `committed` decoded by `transaction`
   * while it is parsed, one transaction's subtree at a time: a million files never stand as one
   * JSON tree (a tree of them is several times the checkpoint's bytes on the heap). A corrupt
   * entry's error is kept, not thrown, so the header's checks come first, as on the whole tree;
   * None when `committed` is absent, or the file is not a JSON object (then the whole tree is
   * read, for its own error).
   */
  private def rootAndCommitted(bytes: Array[Byte], json: StrictJson,
      transaction: JsonNode => (String, Vector[AddedFile]))
      : (JsonNode, Option[Either[Exception, Vector[(String, Vector[AddedFile])]]]) = {
    val root = mapper.createObjectNode()
    var committed = Option.empty[Either[Exception, Vector[(String, Vector[AddedFile])]]]
    val parsed =
      try {
        val p = mapper.getFactory.createParser(bytes)
        try {
          if (p.nextToken() != JsonToken.START_OBJECT) false
          else {
            while (p.nextToken() == JsonToken.FIELD_NAME) {
              val name = p.currentName()
              p.nextToken()
              if (name != "committed") root.set[JsonNode](name, mapper.readTree[JsonNode](p))
              else if (p.currentToken() != JsonToken.START_ARRAY) {
                root.set[JsonNode](name, mapper.readTree[JsonNode](p)) // not a list: the tree's check says so
                committed = None
              } else {
                val out = Vector.newBuilder[(String, Vector[AddedFile])]
                var failed = Option.empty[Exception]
                while (p.nextToken() != JsonToken.END_ARRAY) {
                  val t = mapper.readTree[JsonNode](p)
                  if (failed.isEmpty) {
                    try out += transaction(t)
                    catch { case e: CorruptCheckpointException => failed = Some(e) }
                  }
                }
                root.remove(name)
                committed = Some(failed.toLeft(out.result()))
              }
            }
            // Tokens after the object are ignored, as the tree reader ignores them.
            true
          }
        } finally p.close()
      } catch {
        case NonFatal(_) => false
      }
    if (parsed) (root, committed) else (json.root(bytes), None)
  }

  /** Decodes `checkpoints/<number>.json`, stored at `where` (named in errors). */
  def decode(bytes: Array[Byte], where: String, number: Long): Checkpoint = {
    def corrupt(why: String, cause: Throwable = null) = new CorruptCheckpointException(
      s"checkpoint $where is corrupt: $why. Readers skip it and use the previous checkpoint or " +
        "the commit records, which it only summarises (reads are exact, only slower); the next " +
        "checkpoint supersedes it, or delete it.", cause)
    val json = new StrictJson((why, cause) => corrupt(why, cause.orNull))
    def text(node: JsonNode, field: String): String = json.text(node, field)
    def long(node: JsonNode, field: String): Long = json.long(node, field)
    def array(node: JsonNode, field: String): Vector[JsonNode] = {
      val n = node.get(field)
      if (n == null || !n.isArray) throw corrupt(s"field '$field' is missing or not a list")
      n.elements().asScala.toVector
    }
    def files(node: JsonNode, field: String): Vector[(String, Long)] =
      entries(node, field).map { case (p, s, _) => p -> s }
    def entries(node: JsonNode, field: String): Vector[(String, Long, JsonNode)] = array(node, field).map { f =>
      if (!f.isObject) throw corrupt(s"an entry of '$field' is not an object")
      val p = text(f, "path")
      Paths.unsafeRelativePath(p).foreach { why =>
        throw corrupt(s"it names a file outside its table directory ('$p': $why); nothing outside " +
          "the table is read or deleted because of it")
      }
      (p, long(f, "size"), f)
    }
    def transaction(t: JsonNode): (String, Vector[AddedFile]) = {
      if (!t.isObject) throw corrupt("an entry of 'committed' is not an object")
      val txn = text(t, "txn")
      if (!TxnId.isValid(txn)) throw corrupt(s"transaction '$txn' is not a transaction id")
      txn -> files(t, "files").map { case (p, s) => AddedFile(p, s) }
    }
    val (root, streamed) = rootAndCommitted(bytes, json, transaction)
    json.header(root, Checkpoint.Format, Checkpoint.FormatVersion)
    val recorded = long(root, "checkpoint")
    if (recorded != number) throw corrupt(s"its file name says checkpoint $number but it records $recorded")
    val committed = streamed.getOrElse(Right(array(root, "committed").map(transaction))).fold(e => throw e, identity)
    val declaredTxns = long(root, "transactions")
    if (declaredTxns != committed.size)
      throw corrupt(s"it declares $declaredTxns transactions but lists ${committed.size}")
    val byTxn = committed.toMap
    if (byTxn.size != committed.size) {
      val twice = committed.groupBy(_._1).collectFirst { case (t, v) if v.size > 1 => t }.get
      throw corrupt(s"transaction '$twice' is listed twice")
    }
    val declaredFiles = long(root, "files")
    val listedFiles = committed.iterator.map(_._2.size.toLong).sum
    if (declaredFiles != listedFiles) throw corrupt(s"it declares $declaredFiles files but lists $listedFiles")
    val removed = entries(root, "removed").map { case (p, s, n) =>
      RemovedFile(p, s, Removals.modifiedAtOf(n).fold(why => throw corrupt(why), identity))
    }
    val declaredRemoved = long(root, "removedFiles")
    if (declaredRemoved != removed.size) {
      throw corrupt(s"it declares $declaredRemoved removed files but lists ${removed.size}")
    }
    val through = long(root, "through")
    if (through < 0) throw corrupt(s"field 'through' is $through; sequences start at 1 (0: none)")
    val schema = Option(root.get("schema")).map { n =>
      if (n.isNull) None
      else if (!n.isObject) throw corrupt("field 'schema' is not an object or null")
      else {
        val txn = text(n, "txn")
        if (!byTxn.contains(txn)) throw corrupt(s"its schema is of transaction '$txn', which it does not cover")
        Some(SchemaMark(txn, long(n, "committedAt"), text(n, "ddl")))
      }
    }
    val reads = Option(root.get("reads")).map { n =>
      if (!n.isTextual || !ReadMode.All(n.asText()))
        throw corrupt(
          s"field 'reads' is ${n.toString.take(40)}, not one of ${ReadMode.All.toSeq.sorted.mkString(", ")}")
      n.asText()
    }
    Checkpoint(
      number = number,
      createdAt = long(root, "createdAt"),
      appId = Option(root.get("appId")).filter(_.isTextual).map(_.asText()),
      writer = text(root, "writer"),
      through = through,
      committed = byTxn,
      removed = removed,
      schema = schema,
      reads = reads)
  }
}

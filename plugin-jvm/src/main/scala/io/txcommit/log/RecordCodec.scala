package io.txcommit.log

import java.nio.charset.StandardCharsets.UTF_8

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import com.fasterxml.jackson.databind.node.ObjectNode

import io.txcommit.{CorruptCommitRecordException, Paths}

/**
 * JSON for the log's records. Decoding is strict: a record that is truncated, is not JSON,
 * misses a field, names another transaction or names a path outside its table is rejected
 * with an error that names the file, and is never applied in part.
 */
object RecordCodec {
  private val mapper = new ObjectMapper()

  def encode(r: CommitRecord): Array[Byte] = {
    val root = mapper.createObjectNode()
    root.put("format", CommitRecord.Format)
    root.put("version", r.formatVersion)
    root.put("txn", r.txn)
    root.put("token", r.token)
    root.put("jobId", r.jobId)
    root.put("startedAt", r.startedAt)
    root.put("committedAt", r.committedAt)
    r.appId.foreach(root.put("appId", _))
    root.put("writer", r.writer)
    root.put("files", r.files)
    root.put("bytes", r.bytes)
    val added = root.putArray("added")
    r.added.foreach { f =>
      added.addObject().put("path", f.path).put("size", f.size)
    }
    root.put("operation", r.operation)
    r.writeId.foreach(root.put("writeId", _))
    r.replacement.foreach { rep =>
      root.put("sequence", rep.sequence)
      val scope = root.putArray("scope")
      rep.scope.foreach(scope.add)
      root.put("removedFiles", rep.removedFiles)
      root.put("removedBytes", rep.removedBytes)
      val removed = root.putArray("removed")
      rep.removed.foreach(f => Removals.encode(f, removed.addObject()))
      if (rep.restored.nonEmpty) {
        root.put("restoredFiles", rep.restoredFiles)
        val restored = root.putArray("restored")
        rep.restored.foreach(f => Removals.encode(f, restored.addObject()))
      }
    }
    r.schema.foreach(root.put("schema", _))
    r.group.foreach { g =>
      root.putObject("group").put("id", g.id).put("decision", g.decision).put("leaseMs", g.leaseMs)
    }
    mapper.writerWithDefaultPrettyPrinter().writeValueAsBytes(root)
  }

  /** Decodes the record stored at `where` (named in errors) for transaction `expectedTxn`. */
  def decode(bytes: Array[Byte], where: String, expectedTxn: String): CommitRecord =
    decodeAny(bytes, where, Some(expectedTxn), None)

  /** Decodes `replace/<sequence>.json`: a replacing commit's record, whose sequence is its name. */
  def decodeReplacement(bytes: Array[Byte], where: String, sequence: Long): CommitRecord =
    decodeAny(bytes, where, None, Some(sequence))

  private def decodeAny(bytes: Array[Byte], where: String, expectedTxn: Option[String],
      expectedSequence: Option[Long]): CommitRecord = {
    def corrupt(why: String, cause: Throwable = null) = new CorruptCommitRecordException(
      s"commit record $where is corrupt: $why. Its transaction's files stay hidden from this " +
        "read only if you set spark.txcommit.read.ignoreCorruptRecords=true; otherwise restore " +
        "the record from a backup, or move it out of _txcommit/commits/ to treat the transaction " +
        "as never committed.", cause)
    val root: JsonNode =
      try mapper.readTree(bytes)
      catch {
        case NonFatal(e) =>
          throw corrupt(s"it is not complete JSON (${bytes.length} bytes; truncated?)", e)
      }
    if (root == null || !root.isObject) throw corrupt("it is not a JSON object")
    def text(field: String): String = {
      val n = root.get(field)
      if (n == null || !n.isTextual) throw corrupt(s"field '$field' is missing or not a string")
      n.asText()
    }
    def long(node: JsonNode, field: String): Long = {
      val n = node.get(field)
      if (n == null || !n.canConvertToLong) throw corrupt(s"field '$field' is missing or not a number")
      n.asLong()
    }
    if (text("format") != CommitRecord.Format) throw corrupt("field 'format' is not " + CommitRecord.Format)
    val version = long(root, "version")
    if (!CommitRecord.ReadableVersions.contains(version)) {
      throw corrupt(s"it has format version $version, which this txcommit " +
        s"(reads versions ${CommitRecord.ReadableVersions.toSeq.sorted.mkString(", ")}) does " +
        "not understand; upgrade the plugin")
    }
    val txn = text("txn")
    expectedTxn.filter(_ != txn).foreach { e =>
      throw corrupt(s"it names transaction '$txn' but its file name says '$e'")
    }
    if (!TxnId.isValid(txn)) throw corrupt(s"field 'txn' is '$txn', not a transaction id")
    def fileList(field: String): Vector[(String, Long)] = entries(field).map { case (p, s, _) => p -> s }
    def entries(field: String): Vector[(String, Long, JsonNode)] = {
      val node = root.get(field)
      if (node == null || !node.isArray) throw corrupt(s"field '$field' is missing or not a list")
      node.elements().asScala.map { n =>
        if (!n.isObject) throw corrupt(s"an entry of '$field' is not an object")
        val p = n.get("path")
        if (p == null || !p.isTextual) throw corrupt(s"an entry of '$field' has no path")
        Paths.unsafeRelativePath(p.asText()).foreach { why =>
          throw corrupt(s"it names a file outside its table directory ('${p.asText()}': $why); " +
            "nothing outside the table is read or deleted because of it")
        }
        (p.asText(), long(n, "size"), n)
      }.toVector
    }
    val added = fileList("added").map { case (p, s) => AddedFile(p, s) }
    val declaredFiles = long(root, "files")
    if (declaredFiles != added.size) {
      throw corrupt(s"it declares $declaredFiles files but lists ${added.size}")
    }
    // Format 4 (I33): a prepared record, a job's part of a group, commits nothing by itself.
    val group = Option(root.get("group")) match {
      case None if version == CommitRecord.GroupVersion =>
        throw corrupt(s"it has format version ${CommitRecord.GroupVersion} but no 'group'")
      case None => None
      case Some(_) if version < CommitRecord.GroupVersion =>
        throw corrupt(s"it has 'group', which needs format version ${CommitRecord.GroupVersion}, but is " +
          s"version $version (a reader of version $version would take the prepared record for a commit)")
      case Some(g) =>
        if (!g.isObject) throw corrupt("field 'group' is not an object")
        def groupText(f: String) = Option(g.get(f)).filter(_.isTextual).map(_.asText())
          .getOrElse(throw corrupt(s"field 'group.$f' is missing or not a string"))
        val ref = GroupRef(groupText("id"), groupText("decision"), long(g, "leaseMs"))
        GroupRef.problem(ref.id, ref.decision).foreach(why => throw corrupt(why))
        if (ref.leaseMs < 1) throw corrupt(s"field 'leaseMs' is ${ref.leaseMs}; a lease is 1 ms or more")
        Some(ref)
    }
    // Format 3 (I31): the files a restore re-adds, each named like a removal; a file without a
    // txn id by its identity, and never one the same record removes.
    def restoredOf(removed: Seq[RemovedFile], named: String => Vector[RemovedFile]): Vector[RemovedFile] =
      if (version == CommitRecord.GroupVersion && !restoredFields.exists(f => root.has(f))) Vector.empty
      else if (version < CommitRecord.RestoreVersion) {
        restoredFields.find(f => root.has(f)).foreach { f =>
          throw corrupt(s"it has '$f', which needs format version ${CommitRecord.RestoreVersion}, but is " +
            s"version $version (a reader of version $version would not see the restored files)")
        }
        Vector.empty
      } else {
        val restored = named("restored")
        val declared = long(root, "restoredFiles")
        if (declared != restored.size) {
          throw corrupt(s"it declares $declared restored files but lists ${restored.size}")
        }
        restored.find(f => f.modifiedAt.isEmpty && f.txn.isEmpty).foreach { f =>
          throw corrupt(s"it restores '${f.path}', a file without a txn id, without its 'modifiedAt'")
        }
        val removedPaths = removed.iterator.map(_.path).toSet
        restored.find(f => removedPaths(f.path)).foreach { f =>
          throw corrupt(s"it both removes and restores '${f.path}'")
        }
        restored
      }
    val (operation, writeId, replacement) =
      if (version == 1) (CommitRecord.Append, None, None)
      else {
        val op = text("operation")
        if (!CommitRecord.Operations.contains(op)) throw corrupt(s"field 'operation' is '$op', " +
          s"not one of ${CommitRecord.Operations.toSeq.sorted.mkString(", ")}")
        val wid = Option(root.get("writeId")).map { n =>
          if (!n.isTextual) throw corrupt("field 'writeId' is not a string")
          WriteId.problem(n.asText()).foreach(why => throw corrupt(s"field 'writeId' $why"))
          n.asText()
        }
        val rep = Option(root.get("sequence")).map { _ =>
          val seq = long(root, "sequence")
          if (seq < 1) throw corrupt(s"field 'sequence' is $seq; sequences start at 1")
          val scopeNode = root.get("scope")
          if (scopeNode == null || !scopeNode.isArray) throw corrupt("field 'scope' is missing or not a list")
          val scope = scopeNode.elements().asScala.map { n =>
            if (!n.isTextual) throw corrupt("an entry of 'scope' is not a string")
            val d = n.asText()
            if (d.nonEmpty) Paths.unsafeRelativePath(d).foreach { why =>
              throw corrupt(s"its scope names a directory outside its table ('$d': $why)")
            }
            d
          }.toVector
          def named(field: String) = entries(field).map { case (p, s, n) =>
            RemovedFile(p, s, Removals.modifiedAtOf(n, field).fold(why => throw corrupt(why), identity))
          }
          val removed = named("removed")
          val declared = long(root, "removedFiles")
          if (declared != removed.size) {
            throw corrupt(s"it declares $declared removed files but lists ${removed.size}")
          }
          long(root, "removedBytes")
          Replacement(seq, scope, removed, restoredOf(removed, named))
        }
        if (CommitRecord.Replacing(op) && rep.isEmpty) {
          throw corrupt(s"operation '$op' replaces data, but the record has no 'sequence'")
        }
        if (rep.isEmpty) restoredFields.find(f => root.has(f)).foreach { f =>
          throw corrupt(s"it has '$f' but no 'sequence'")
        }
        (op, wid, rep)
      }
    expectedSequence.foreach { seq =>
      if (!replacement.exists(_.sequence == seq)) throw corrupt(s"it is in the replacement log as " +
        s"sequence $seq but records ${replacement.map(r => s"sequence ${r.sequence}").getOrElse("no sequence")}")
    }
    val schema = Option(root.get("schema")).map { n =>
      if (!n.isTextual) throw corrupt("field 'schema' is not a string")
      n.asText()
    }
    CommitRecord(
      txn = txn,
      token = text("token"),
      jobId = text("jobId"),
      startedAt = long(root, "startedAt"),
      committedAt = long(root, "committedAt"),
      added = added,
      appId = Option(root.get("appId")).filter(_.isTextual).map(_.asText()),
      writer = text("writer"),
      operation = operation,
      writeId = writeId,
      replacement = replacement,
      schema = schema,
      group = group)
  }

  private val restoredFields = Seq("restored", "restoredFiles")

  /** A small JSON object from string/number pairs (pending and aborted markers). */
  def marker(fields: (String, Any)*): Array[Byte] = {
    val node: ObjectNode = mapper.createObjectNode()
    fields.foreach {
      case (k, v: String) => node.put(k, v)
      case (k, v: Long) => node.put(k, v)
      case (k, v: Int) => node.put(k, v)
      case (k, v: Boolean) => node.put(k, v)
      case (k, Some(v: String)) => node.put(k, v)
      case (k, Some(v: Long)) => node.put(k, v)
      case (_, None) => ()
      case (k, v) => node.put(k, String.valueOf(v))
    }
    mapper.writerWithDefaultPrettyPrinter().writeValueAsBytes(node)
  }

  /** Reads the `txn` field of a `_SUCCESS` summary, if it is one of ours. */
  def successTxn(bytes: Array[Byte]): Option[String] =
    try Option(mapper.readTree(new String(bytes, UTF_8)).get("txn")).filter(_.isTextual).map(_.asText())
    catch { case NonFatal(_) => None }

  /** A boolean field of a marker; None if the marker lacks it or is not JSON. */
  def markerFlag(bytes: Array[Byte], key: String): Option[Boolean] =
    try Option(mapper.readTree(new String(bytes, UTF_8)).get(key)).filter(_.isBoolean).map(_.asBoolean())
    catch { case NonFatal(_) => None }

  /** A text field of a marker; None if the marker lacks it or is not JSON. */
  def markerText(bytes: Array[Byte], key: String): Option[String] =
    try Option(mapper.readTree(new String(bytes, UTF_8)).get(key)).filter(_.isTextual).map(_.asText())
    catch { case NonFatal(_) => None }

  def objectNode(): ObjectNode = mapper.createObjectNode()
  def write(node: JsonNode): Array[Byte] = mapper.writerWithDefaultPrettyPrinter().writeValueAsBytes(node)
}

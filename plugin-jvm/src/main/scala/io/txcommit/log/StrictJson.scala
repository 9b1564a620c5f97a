package io.txcommit.log

import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

/**
 * Strict reading of one log object's JSON, shared by the codecs that refuse a file whole:
 * `corrupt(why, cause)` is the caller's error, naming its file.
 */
private[log] final class StrictJson(corrupt: (String, Option[Throwable]) => Exception) {

  /** The file's top-level object; truncated or non-object JSON is corrupt. */
  def root(bytes: Array[Byte]): JsonNode = {
    val root =
      try StrictJson.mapper.readTree(bytes)
      catch {
        case NonFatal(e) => throw corrupt(s"it is not complete JSON (${bytes.length} bytes; truncated?)", Some(e))
      }
    if (root == null || !root.isObject) throw corrupt("it is not a JSON object", None)
    root
  }

  /** `format` and `version` of `root` are the ones given (a newer version asks for an upgrade). */
  def header(root: JsonNode, format: String, version: Long): Unit = {
    if (text(root, "format") != format) throw corrupt(s"field 'format' is not $format", None)
    val found = long(root, "version")
    if (found != version) {
      throw corrupt(s"it has format version $found, which this txcommit (reads version $version) " +
          "does not understand; upgrade the plugin", None)
    }
  }

  def text(node: JsonNode, field: String): String = {
    val n = node.get(field)
    if (n == null || !n.isTextual) throw corrupt(s"field '$field' is missing or not a string", None)
    n.asText()
  }

  /** An integer that fits a long (a fraction is not one). */
  def long(node: JsonNode, field: String): Long = {
    val n = node.get(field)
    if (n == null || !n.isIntegralNumber || !n.canConvertToLong) {
      throw corrupt(s"field '$field' is missing or not a number", None)
    }
    n.asLong()
  }
}

private object StrictJson {
  private val mapper = new ObjectMapper()
}

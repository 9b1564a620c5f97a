package io.txcommit.store

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

import io.txcommit.UnsupportedStoreException

/**
 * What an adapter promises, as data: `<name>.json` in its store's folder in the source tree
 * (`adapters/txcommit_store_<store>/`), packaged as the resource
 * `txcommit/adapters/<name>/adapter.json` in the adapter's jar and as a file of the store's Python
 * package, so the JVM plugin, the Python store and the conformance kit read the
 * very same declaration.
 */
final case class AdapterDeclaration(
    name: String,
    title: String,
    primitive: Primitive,
    exclusiveCreate: Boolean,
    listing: Listing,
    schemes: Seq[String],
    defaultFor: Seq[String]) {
  def summary: String = s"$name (${primitive.name}; schemes ${schemes.mkString(", ")})"
}

object AdapterDeclaration {
  val Format = "txcommit-adapter"
  private val mapper = new ObjectMapper()

  def resourceFor(name: String): String = s"txcommit/adapters/$name/adapter.json"

  /** Loads and validates the packaged declaration of adapter `name`. */
  def load(name: String, loader: ClassLoader): AdapterDeclaration = {
    val where = resourceFor(name)
    val in = Option(loader.getResourceAsStream(where)).getOrElse(throw new UnsupportedStoreException(
        s"adapter '$name' has no declaration: resource $where is missing from its jar. Rebuild " +
          "the adapter jar; every adapter must ship its declaration as that resource."))
    val bytes =
      try in.readAllBytes()
      finally in.close()
    parse(bytes, where)
  }

  def parse(bytes: Array[Byte], where: String): AdapterDeclaration = {
    def bad(why: String) =
      new UnsupportedStoreException(s"adapter declaration $where is invalid: $why")
    val root: JsonNode =
      try mapper.readTree(bytes)
      catch { case NonFatal(e) => throw bad(s"it is not JSON (${e.getMessage})") }
    if (root == null || !root.isObject) throw bad("it is not a JSON object")
    def text(k: String): String = Option(root.get(k)).filter(_.isTextual).map(_.asText())
      .getOrElse(throw bad(s"'$k' is missing or not a string"))
    def texts(k: String): Seq[String] = Option(root.get(k)).filter(_.isArray)
      .map(_.elements().asScala.toSeq.map { n =>
        if (n.isTextual) n.asText() else throw bad(s"'$k' must hold strings only")
      }).getOrElse(throw bad(s"'$k' is missing or not a list"))
    if (text("format") != Format) throw bad(s"'format' must be '$Format'")
    if (!Option(root.get("formatVersion")).exists(n => n.isInt && n.asInt() == 1))
      throw bad("'formatVersion' must be 1 (this txcommit reads version 1)")
    val primitive = Primitive.byName(text("primitive")).getOrElse(throw bad(
        s"unknown primitive '${text("primitive")}'; expected one of ${Primitive.all.map(_.name).mkString(", ")}"))
    val listing = Listing.byName(text("listing")).getOrElse(throw bad(
        s"unknown listing '${text("listing")}'; expected one of ${Listing.all.map(_.name).mkString(", ")}"))
    val exclusive = Option(root.get("exclusiveCreate")).filter(_.isBoolean).map(_.asBoolean())
      .getOrElse(throw bad("'exclusiveCreate' is missing or not true/false"))
    val schemes = texts("schemes")
    if (schemes.isEmpty) throw bad("'schemes' is empty")
    val defaults = texts("defaultFor")
    defaults.find(s => !schemes.contains(s)).foreach(s =>
      throw bad(s"'defaultFor' names scheme '$s', which is not in 'schemes'"))
    AdapterDeclaration(text("name"), text("title"), primitive, exclusive, listing, schemes, defaults)
  }
}

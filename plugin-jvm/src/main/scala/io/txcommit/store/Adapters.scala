package io.txcommit.store

import java.util.ServiceLoader

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import io.txcommit.{Paths, UnsupportedStoreException}

/** The adapter registry: built-in and plug-in adapters, found with ServiceLoader. */
object Adapters {

  /** `spark.txcommit.adapter.<scheme>`: the adapter for tables with that URI scheme. */
  val ConfPrefix = "spark.txcommit.adapter."

  /** Per class loader: Connect sessions each have their own; weak, so none is kept alive. */
  private val cache = new java.util.WeakHashMap[ClassLoader, Seq[StoreAdapter]]()

  /** Every adapter visible from the current context class loader, by name. */
  def all: Seq[StoreAdapter] = {
    val loader = Option(Thread.currentThread().getContextClassLoader).getOrElse(getClass.getClassLoader)
    cache.synchronized {
      Option(cache.get(loader)).getOrElse {
        val found = (ServiceLoader.load(classOf[StoreAdapter], loader).asScala.toSeq ++
          ServiceLoader.load(classOf[StoreAdapter], getClass.getClassLoader).asScala.toSeq)
          .groupBy(_.name).values.map(_.head).toSeq.sortBy(_.name)
        cache.put(loader, found)
        found
      }
    }
  }

  def known: String = all.map(_.declaration.summary).mkString("; ")

  def byName(name: String): StoreAdapter =
    all.find(_.name == name).getOrElse(throw new UnsupportedStoreException(
        s"unknown store adapter '$name'; known adapters: $known. Check the spelling, or add the " +
          "adapter's jar to the server's classpath (spark.jars)."))

  /** The adapter for `table`: the per-scheme conf if set, else the scheme's default adapter. */
  def forPath(table: Path, conf: Configuration): StoreAdapter = {
    val scheme = Option(table.toUri.getScheme)
      .orElse(Option(table.getFileSystem(conf).getUri.getScheme)).getOrElse("file")
    val key = ConfPrefix + scheme
    Option(conf.get(key)).map(_.trim).filter(_.nonEmpty) match {
      case Some(name) =>
        val adapter = all.find(_.name == name).getOrElse(throw new UnsupportedStoreException(
            s"conf $key names the unknown store adapter '$name'; known adapters: $known. " +
              s"Fix it with spark.conf.set(\"$key\", ...) or unset it to get the default."))
        if (!adapter.declaration.schemes.contains(scheme)) throw new UnsupportedStoreException(
          s"conf $key names adapter '$name', which does not serve scheme '$scheme' (it serves " +
            s"${adapter.declaration.schemes.mkString(", ")}). Known adapters: $known.")
        adapter
      case None =>
        all.find(_.declaration.defaultFor.contains(scheme)).getOrElse(throw new UnsupportedStoreException(
            s"no store adapter serves scheme '$scheme' (table ${Paths.display(table)}); known " +
              s"adapters: $known. Write this table without txcommit (txcommit.disable(spark)), " +
              s"use a supported store, or add an adapter for '$scheme' and set $key." + retired(scheme)))
    }
  }

  /** What to use instead of a connector Hadoop removed. */
  private def retired(scheme: String): String = scheme match {
    case "wasb" | "wasbs" => " Hadoop 3.5 removed the WASB connector (wasb://, wasbs://): write the " +
        "same container as abfss://<container>@<account>.dfs.core.windows.net/<path> (the 'azure' " +
        "adapter, with Hadoop's ABFS connector)."
    case _ => ""
  }

  def open(table: Path, conf: Configuration): CommitStore = forPath(table, conf).open(table, conf)
}

import sbt._

/** How a store's JVM module of its own is built, described in the store's folder:
  * adapters/txcommit_store_<name>/jvm/build/Adapter<Name>.scala holds `object Adapter<Name>
  * extends StoreModule` (the meta-build compiles it, project/build.sbt), named in build.sbt's
  * `storeModules`. What all stores share (sources, Spark, tests, POM, linkage check) is the
  * build's. */
trait StoreModule {

  /** The store folder's name after `txcommit_store_`: the jar is txcommit-<name>.jar, the
    * artifact txcommit-spark-<name>-<line>_2.13. */
  def name: String

  /** The declarations (`<folder>/<declaration>.json`) its jar carries for the registry. */
  def declarations: Seq[String]

  /** What the module needs on Spark line `l` besides Spark, Hadoop's client API and the plugin. */
  def dependencies(l: SparkLine): Seq[ModuleID]

  /** Any other setting of its project on line `l`. */
  def settings(l: SparkLine): Seq[Def.Setting[_]] = Nil

  /** Its store's folder. */
  final def folder: String = s"adapters/txcommit_store_$name"

  /** The id of its 4.3 project (another line's adds the line's id: adapterS340). */
  final def projectId: String = "adapter" + name.split("-").map(_.capitalize).mkString
}

import sbt._

/** How a store's JVM module of its own (adapters/<name>/jvm) is built, described in the store's
  * folder: jvm/build/Adapter<Name>.scala holds `object Adapter<Name> extends StoreModule` (the
  * meta-build compiles it, project/build.sbt). build.sbt makes the module's projects on every
  * Spark line from it; what all stores share (sources, Spark, tests, POM, linkage check, the
  * jar txcommit-<name>.jar and the artifact txcommit-spark-<name>-<line>_2.13) is the build's. */
trait StoreModule {

  /** The declarations (adapters/<declaration>/adapter.json) its jar carries for the registry. */
  def declarations: Seq[String]

  /** What the module needs on Spark line `l` besides Spark, Hadoop's client API and the plugin. */
  def dependencies(l: SparkLine): Seq[ModuleID]

  /** Any other setting of its project on line `l`. */
  def settings(l: SparkLine): Seq[Def.Setting[_]] = Nil
}

object StoreModule {

  /** The stores with a JVM module of their own, sorted: the names of adapters/<name>/jvm (as
    * `jvm_adapters` in .ci/env.sh). */
  def found(root: File): Seq[String] = (root / "adapters" * "*" / "jvm").get.map(_.getParentFile.getName).sorted

  /** The id of a store's 4.3 project (another line's adds the line's id: adapterS340), from the
    * folder's name: adapters/my-store is adapterMyStore. `adapter_project` in .ci/env.sh is the
    * same rule. */
  def projectId(name: String): String = "adapter" + name.split("-").map(_.capitalize).mkString

  /** The store's description: the object named like its projects (AdapterS3 for adapters/s3). */
  def load(name: String): StoreModule = {
    val obj = projectId(name).capitalize
    try
      Class.forName(s"$obj$$", true, classOf[StoreModule].getClassLoader).getField("MODULE$").get(null) match {
        case m: StoreModule => m
        case other => sys.error(s"txcommit: $obj is a ${other.getClass.getName}, not a StoreModule")
      }
    catch {
      case _: ClassNotFoundException =>
        sys.error(s"txcommit: adapters/$name/jvm has no build description: adapters/$name/jvm/build/$obj.scala " +
          s"must hold `object $obj extends StoreModule` (like adapters/s3/jvm/build/AdapterS3.scala)")
    }
  }
}

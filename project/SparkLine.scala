/** A Spark line and what ships with it: its Scala, its Hadoop client and Jackson, and the AWS SDK
  * bundle that line's Hadoop S3A was built with (connectors must match the cluster's Hadoop). */
final case class SparkLine(
    line: String,
    spark: String,
    fromMaven: Boolean,
    scala: String,
    hadoop: String,
    awsSdk: String,
    jackson: String) {
  val id: String = line.replace(".", "")

  /** The scala-spark-<range> source folders this line compiles besides the shared ones. */
  def sourceRanges: Seq[String] = line match {
    case "4.0" => Seq("4.0")
    case "4.1" | "4.2" => Seq("4.1-4.2", "4.1-4.3")
    case _ => Seq("4.3", "4.1-4.3")
  }
}

/** A Spark line's projects (build.sbt's lineProjects): its modules, the plugin first, then one per
  * store with a JVM module of its own, and line<id>, which aggregates them. */
final case class LineProjects(modules: Seq[sbt.Project], aggregate: sbt.Project) extends sbt.CompositeProject {
  def plugin: sbt.Project = modules.head
  def componentProjects: Seq[sbt.Project] = modules :+ aggregate
}

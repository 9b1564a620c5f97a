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

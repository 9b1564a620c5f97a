package io.txcommit

import java.util.Properties

/** The plugin version and the Spark line it was compiled for, written into the jar by the build. */
object Version {
  private lazy val props: Properties = {
    val props = new Properties()
    Option(getClass.getResourceAsStream("/io/txcommit/version.properties")).foreach { in =>
      try props.load(in)
      finally in.close()
    }
    props
  }

  lazy val current: String = props.getProperty("version", "unknown")

  /** The Spark line (`4.3`) this jar was compiled against; another line's Spark cannot run it. */
  lazy val sparkLine: Option[String] = Option(props.getProperty("spark.line"))

  /** How records, fences and checkpoints name the writer that created them. */
  lazy val writer: String = s"txcommit/$current"

  /** The Maven artifact of the plugin for a Spark line. */
  def artifact(line: String): String = s"io.txcommit:txcommit-spark-${line}_2.13:$current"

  /** `major.minor` of a Spark version (`4.0.5`, `4.1.0-amzn-0`), if it has one. */
  def lineOf(sparkVersion: String): Option[String] =
    "^(\\d+)\\.(\\d+)".r.findFirstMatchIn(sparkVersion).map(m => s"${m.group(1)}.${m.group(2)}")

  /**
   * Refuses to run on a Spark line other than the jar's: a class compiled against another line's
   * Spark links against what that line has (a 4.3 parser calls the trait initialiser of `ParserInterface`, which
   * 4.0 lacks), so it would start and then fail a user's first query. Called when the plugin or
   * the SQL extension loads, before anything of it runs.
   */
  def requireSparkLine(running: String = org.apache.spark.SPARK_VERSION): Unit =
    mismatch(running).foreach(why => throw new UnsupportedSparkLineException(why))

  /** Why this jar cannot run on Spark `running`, if it cannot. */
  def mismatch(running: String): Option[String] =
    for {
      built <- sparkLine
      runningLine = lineOf(running).getOrElse(running)
      if runningLine != built
    } yield {
      val jar = Option(getClass.getProtectionDomain.getCodeSource).map(_.getLocation.getPath)
        .getOrElse("the txcommit plugin jar")
      s"this server runs Spark $running, but $jar is txcommit $current built for Spark $built " +
        s"(the artifact ${artifact(built)}): a jar runs only on the Spark line it was built " +
        s"for. Use the artifact of Spark $runningLine instead, ${artifact(runningLine)} " +
        s"(spark.jars.packages or spark-submit --packages), or its jar from the txcommit " +
        s"Python package's _jars/spark-$runningLine/ (`txcommit server` picks it for the " +
        "installed pyspark)."
    }
}

// txcommit build: one JVM module today (plugin-jvm); store adapters with heavy SDKs get their
// own modules later, with the SDK and Hadoop `provided`.
//
// Spark 4.3.0 is compiled against the jars of the pyspark 4.3.0 wheel rather than Maven
// artifacts: they are exactly the runtime the Connect server runs (Spark 4.3.0, Scala 2.13.18,
// Hadoop client 3.5.0), and Spark 4.3.0's Maven artifacts are not reachable from every machine
// this project builds on. `.ci/setup` passes the directory in TXCOMMIT_SPARK_JARS.

ThisBuild / scalaVersion := "2.13.18"
ThisBuild / organization := "io.txcommit"
ThisBuild / version := "0.1.0"
ThisBuild / scalacOptions ++= Seq("-deprecation", "-feature", "-unchecked", "-Xlint:-unused,_", "-release", "17")

lazy val sparkJars: Seq[File] = {
  val fromEnv = sys.env.get("TXCOMMIT_SPARK_JARS").map(file)
  val fromVenv = (file(".venv") / "lib").listFiles() match {
    case null => None
    case dirs => dirs.toSeq.map(_ / "site-packages" / "pyspark" / "jars").find(_.isDirectory)
  }
  val dir = fromEnv.orElse(fromVenv).getOrElse(sys.error(
    "txcommit: cannot find the Spark 4.3.0 jars. Run `bash .ci/setup` (it installs pyspark 4.3.0 " +
      "into .venv), or set TXCOMMIT_SPARK_JARS to a directory holding Spark 4.3.0's jars."))
  val jars = Option(dir.listFiles()).toSeq.flatten.filter(_.getName.endsWith(".jar"))
  if (!jars.exists(_.getName.startsWith("spark-sql_2.13-4.3.")))
    sys.error(s"txcommit: $dir holds no spark-sql_2.13-4.3.x jar; point TXCOMMIT_SPARK_JARS at Spark 4.3's jars.")
  jars
}

lazy val pluginJvm = (project in file("plugin-jvm"))
  .settings(
    name := "txcommit-plugin",
    Compile / unmanagedJars ++= sparkJars.map(Attributed.blank),
    libraryDependencies += "org.scalatest" %% "scalatest" % "3.2.19" % Test,
    Compile / resourceGenerators += Def.task {
      val out = (Compile / resourceManaged).value / "io" / "txcommit" / "version.properties"
      IO.write(out, s"version=${version.value}\n")
      Seq(out)
    }.taskValue,
    Test / fork := true,
    Test / javaOptions ++= Seq("-Xmx1g", "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED"),
    Test / testOptions += Tests.Argument(TestFrameworks.ScalaTest, "-oD"),
    Compile / packageBin / artifactPath := target.value / "txcommit-plugin.jar"
  )

lazy val root = (project in file("."))
  .aggregate(pluginJvm)
  .settings(publish / skip := true)

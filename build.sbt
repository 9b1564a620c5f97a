// txcommit build: the core plugin (plugin-jvm: protocol, read filter, local and HDFS adapters)
// and one module per store adapter with a heavy SDK (adapters/<store>/jvm), compiled against
// the SDK and Hadoop without packaging them, like Delta's storage-s3-dynamodb: the core jar
// stays small and a server puts the SDK on its classpath only if it uses that store.
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

/** Hadoop S3A and the AWS SDK it was built with, fetched by `txcommit jars --store s3`. */
lazy val s3Jars: Seq[File] = {
  // The same place `txcommit jars` fetches them to: $TXCOMMIT_CACHE/jars (the Python side reads
  // $HOME, Java's user.home may differ: .ci/env.sh sets both variables).
  val dir = sys.env.get("TXCOMMIT_S3_JARS").map(file)
    .orElse(sys.env.get("TXCOMMIT_CACHE").map(c => file(c) / "jars"))
    .getOrElse(file(sys.props("user.home")) / ".cache" / "txcommit" / "jars")
  val jars = Option(dir.listFiles()).toSeq.flatten.filter(_.getName.endsWith(".jar"))
  if (!jars.exists(_.getName.startsWith("hadoop-aws-")))
    sys.error(s"txcommit: no hadoop-aws jar in $dir. Run `bash .ci/setup` (it runs `txcommit jars " +
      "--store s3`), or set TXCOMMIT_S3_JARS to a directory holding hadoop-aws and its AWS SDK bundle.")
  jars
}

/** Packages adapters/<name>/adapter.json as the resource the registry and Python both read. */
def declarations(names: String*) = Def.task {
  val base = (ThisBuild / baseDirectory).value / "adapters"
  val out = (Compile / resourceManaged).value / "txcommit" / "adapters"
  names.map { n =>
    val target = out / n / "adapter.json"
    IO.copyFile(base / n / "adapter.json", target)
    target
  }
}

/** What `publishM2`/`publishLocal` need for an artifact `spark-submit --packages` resolves: the
  * POM names no Spark, Hadoop or Scala artifact to fetch (the cluster has them: a second copy
  * on the classpath would clash), only what the jar itself adds. */
lazy val publishSettings = Seq(
  description := "txcommit: transactional file commits for Apache Spark 4 on object stores and HDFS",
  licenses := Seq("Apache-2.0" -> url("https://www.apache.org/licenses/LICENSE-2.0.txt")),
  // Spark brings its own Scala library: provided, as Spark's own modules would declare it.
  autoScalaLibrary := false,
  libraryDependencies += "org.scala-lang" % "scala-library" % scalaVersion.value % Provided,
  publishMavenStyle := true,
  Test / publishArtifact := false,
  Compile / packageDoc / publishArtifact := false)

lazy val testSettings = Seq(
  libraryDependencies += "org.scalatest" %% "scalatest" % "3.2.19" % Test,
  Test / fork := true,
  // The forked test JVM gets sbt's user.home (the shell's $HOME, .ci/env.sh), not the password
  // database's: nothing a test runs looks into the user's own home.
  // C1 only and the serial collector: a test JVM lives for a minute on two shared cores, where
  // the C2 compiler's and the collector's threads cost more than they return.
  Test / javaOptions ++= Seq("-Xmx1g", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    s"-Duser.home=${sys.props("user.home")}"),
  Test / testOptions += Tests.Argument(TestFrameworks.ScalaTest, "-oD"))

lazy val pluginJvm = (project in file("plugin-jvm"))
  .settings(
    name := "txcommit-plugin",
    Compile / unmanagedJars ++= sparkJars.map(Attributed.blank),
    testSettings,
    publishSettings,
    Compile / resourceGenerators += declarations("local", "hdfs").taskValue,
    // A real NameNode and DataNode for the HDFS suites (one shaded jar; the Hadoop client it
    // runs against is Spark's own hadoop-client-api/-runtime).
    libraryDependencies += "org.apache.hadoop" % "hadoop-client-minicluster" % "3.5.0" % Test intransitive(),
    Compile / resourceGenerators += Def.task {
      val out = (Compile / resourceManaged).value / "io" / "txcommit" / "version.properties"
      IO.write(out, s"version=${version.value}\n")
      Seq(out)
    }.taskValue,
    Compile / packageBin / artifactPath := target.value / "txcommit-plugin.jar"
  )

lazy val adapterS3 = (project in file("adapters/s3/jvm"))
  .dependsOn(pluginJvm % "compile->compile;test->test")
  .settings(
    name := "txcommit-s3",
    Compile / unmanagedJars ++= (sparkJars ++ s3Jars).map(Attributed.blank),
    testSettings,
    publishSettings,
    // S3A and its AWS SDK must match the cluster's Hadoop: the cluster provides them
    // (`txcommit jars --store s3` prints which), as Delta's S3 LogStore module declares them.
    libraryDependencies += "org.apache.hadoop" % "hadoop-aws" % "3.5.0" % Provided intransitive(),
    Compile / resourceGenerators += declarations("s3", "s3-multipart").taskValue,
    Compile / packageBin / artifactPath := target.value / "txcommit-s3.jar"
  )

lazy val adapterGcs = (project in file("adapters/gcs/jvm"))
  .dependsOn(pluginJvm % "compile->compile;test->test")
  .settings(
    name := "txcommit-gcs",
    Compile / unmanagedJars ++= sparkJars.map(Attributed.blank),
    testSettings,
    publishSettings,
    // Google's Cloud Storage connector, shaded (its Google client libraries relocated, so they
    // cannot clash with Spark's guava or jackson). The cluster provides it (`txcommit jars
    // --store gcs` fetches it): Hadoop 3.5's own hadoop-gcp has no endpoint setting, so it
    // could not be tested against an emulator.
    libraryDependencies += "com.google.cloud.bigdataoss" % "gcs-connector" % "4.0.4" % Provided classifier "shaded" intransitive(),
    Compile / resourceGenerators += declarations("gcs").taskValue,
    Compile / packageBin / artifactPath := target.value / "txcommit-gcs.jar"
  )

lazy val adapterAzure = (project in file("adapters/azure/jvm"))
  .dependsOn(pluginJvm % "compile->compile;test->test")
  .settings(
    name := "txcommit-azure",
    Compile / unmanagedJars ++= sparkJars.map(Attributed.blank),
    testSettings,
    publishSettings,
    // ABFS must match the cluster's Hadoop: the cluster provides it (`txcommit jars --store
    // azure` prints which). Everything else it needs is in Spark's own jars, except HdrHistogram.
    // The adapter's own Blob requests use the JDK's HTTP client: no Azure SDK to shade.
    libraryDependencies += "org.apache.hadoop" % "hadoop-azure" % "3.5.0" % Provided intransitive(),
    libraryDependencies += "org.hdrhistogram" % "HdrHistogram" % "2.1.12" % Test,
    Compile / resourceGenerators += declarations("azure").taskValue,
    Compile / packageBin / artifactPath := target.value / "txcommit-azure.jar"
  )

lazy val root = (project in file("."))
  .aggregate(pluginJvm, adapterS3, adapterGcs, adapterAzure)
  .settings(publish / skip := true)

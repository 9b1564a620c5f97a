// txcommit build: the core plugin (plugin-jvm: protocol, read filter, local and HDFS adapters)
// and one module per store adapter with a heavy SDK (adapters/txcommit_store_<name>/jvm), compiled against
// the SDK and Hadoop without packaging them, like Delta's storage-s3-dynamodb: the core jar
// stays small and a server puts the SDK on its classpath only if it uses that store.
//
// The store modules are the one list `storeModules` below; what is particular to a store (its
// dependencies per Spark line, the declarations its jar carries) is described in its folder,
// adapters/txcommit_store_<name>/jvm/build/Adapter<Name>.scala (project/StoreModule.scala). Its
// projects are adapter<Name> (4.3) and adapter<Name><line id>, its jar target/txcommit-<name>.jar.
//
// One artifact per Spark line, built from one source tree and named like Iceberg's
// (iceberg-spark-runtime-4.0_2.13): `txcommit-spark-<line>_2.13` for the plugin and
// `txcommit-spark-<store>-<line>_2.13` for each adapter, each compiled against that line's
// Spark, Scala, Hadoop and connector SDK, so a call a line lacks fails the build (and the
// linkage check, project/Linkage.scala), not a user's job. Sources are shared; folders
// src/<main|test>/scala-spark-<range> hold the few files whose Spark API differs between lines
// (SparkLine.sourceRanges). The 4.3 projects keep their plain ids (pluginJvm, adapterS3, ...);
// the other lines' are pluginJvm40, adapterS340, ..., and line40 ... line43 aggregate a line:
// `bash .ci/sbt line40/package line40/linkageCheck`.
//
// Spark 4.0-4.2 come from Maven Central as Provided dependencies. Spark 4.3.0 is only in the
// pyspark 4.3.0 wheel (Maven Central has no spark-parent_2.13:4.3.0), so 4.3 is compiled against
// that wheel's jars: `.ci/setup` installs it into .venv and passes its jars/ directory in
// TXCOMMIT_SPARK_JARS (without the variable, the build looks in .venv itself).

// Compiled against the oldest patch release a line supports well (4.0.0 and 4.1.0 had
// regressions fixed in .1); a patch release keeps binary compatibility within its line.
lazy val Spark40 = SparkLine("4.0", "4.0.1", fromMaven = true, "2.13.16", "3.4.1", "2.24.6", "2.18.2")
lazy val Spark41 = SparkLine("4.1", "4.1.1", fromMaven = true, "2.13.17", "3.4.2", "2.29.52", "2.20.0")
lazy val Spark42 = SparkLine("4.2", "4.2.0", fromMaven = true, "2.13.18", "3.5.0", "2.35.4", "2.20.0")
lazy val Spark43 = SparkLine("4.3", "4.3.0", fromMaven = false, "2.13.18", "3.5.0", "2.35.4", "2.20.0")

ThisBuild / scalaVersion := Spark43.scala
ThisBuild / organization := "io.txcommit"
ThisBuild / version := "0.1.0"
// Early semver: 0.x releases may break binary compatibility at a minor version.
ThisBuild / versionScheme := Some("early-semver")
// Every lint warning on, and every warning an error, on every Spark line, main and test sources
// (a deliberate exception is a `@nowarn("cat=...")` or a `-Wconf` with its reason on its line).
ThisBuild / scalacOptions ++= Seq("-deprecation", "-feature", "-unchecked", "-Xlint:_", "-Werror", "-release", "17")

/** Spark 4.3's jars: the pyspark 4.3.0 wheel's (TXCOMMIT_SPARK_JARS, else .venv's pyspark). */
lazy val wheelSparkJars: Seq[File] = {
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

/** Spark, Hadoop, Jackson and Scala: Provided, the cluster has them (a second copy on the
  * classpath would clash), so the POM names them with the line's real versions and nothing is
  * fetched for them. For 4.3, whose jars are not on Maven Central, they are written into the
  * POM without sbt resolving them (the wheel's jars are the compile classpath). */
def sparkSettings(l: SparkLine): Seq[Setting[_]] = Seq(
  scalaVersion := l.scala,
  autoScalaLibrary := false,
  libraryDependencies += "org.scala-lang" % "scala-library" % l.scala % Provided,
  libraryDependencies ++= (if (!l.fromMaven) Nil
                           else Seq(
                             "org.apache.spark" %% "spark-sql" % l.spark % Provided,
                             "org.apache.hadoop" % "hadoop-client-api" % l.hadoop % Provided,
                             "com.fasterxml.jackson.core" % "jackson-databind" % l.jackson % Provided)),
  Compile / unmanagedJars ++= (if (l.fromMaven) Nil else wheelSparkJars.map(Attributed.blank)),
  pomPostProcess := { (node: scala.xml.Node) =>
    import scala.xml._
    import scala.xml.transform._
    // scalafmt would split the XML literal's last brace over three lines
    // format: off
    def dep(g: String, a: String, v: String): Elem =
      <dependency><groupId>{g}</groupId><artifactId>{a}</artifactId><version>{v}</version><scope>provided</scope></dependency>
    // format: on
    val provided =
      if (l.fromMaven) Nil
      else Seq(dep("org.apache.spark", "spark-sql_2.13", l.spark),
        dep("org.apache.hadoop", "hadoop-client-api", l.hadoop),
        dep("com.fasterxml.jackson.core", "jackson-databind", l.jackson))
    // A user's build needs none of the tests' own dependencies (ScalaTest, the mini cluster).
    def forTests(n: Node): Boolean = (n \ "scope").text == "test"
    new RuleTransformer(new RewriteRule {
      override def transform(n: Node): Seq[Node] = n match {
        case e: Elem if e.label == "dependencies" => e.copy(child = e.child.filterNot(forTests) ++ provided)
        case other => other
      }
    }).transform(node).head
  })

/** The shared sources plus the line's own folders (src/<main|test>/scala-spark-<range>). */
def lineSources(l: SparkLine, moduleDir: String): Seq[Setting[_]] =
  Seq(Compile -> "main", Test -> "test").flatMap { case (config, kind) =>
    Seq(
      config / unmanagedSourceDirectories := {
        val dir = (ThisBuild / baseDirectory).value / moduleDir / "src" / kind
        (dir / "scala") +: l.sourceRanges.map(r => dir / s"scala-spark-$r")
      },
      config / unmanagedResourceDirectories :=
        Seq((ThisBuild / baseDirectory).value / moduleDir / "src" / kind / "resources"),
      // The format check of a line other than 4.3 reads only its own folders: the 4.3 projects
      // check the shared ones.
      config / scalafmt / unmanagedSources := {
        val all = (config / unmanagedSources).value
        if (l == Spark43) all else all.filter(_.getPath.contains(s"${java.io.File.separator}scala-spark-"))
      })
  }

/** A line's project folder: the 4.3 projects' is their module's; the other lines' is
  * <module>/lines/spark-<line>, which holds only their build output. */
def lineBase(l: SparkLine, moduleDir: String): File =
  if (l == Spark43) file(moduleDir) else file(moduleDir) / "lines" / s"spark-${l.line}"

/** Packages a store folder's declarations (`<folder>/<name>.json`) as the resources the JVM's
  * registry reads, `txcommit/adapters/<name>/adapter.json`. */
def declarations(folder: String, names: String*) = Def.task {
  val base = (ThisBuild / baseDirectory).value / folder
  val out = (Compile / resourceManaged).value / "txcommit" / "adapters"
  names.map { n =>
    val target = out / n / "adapter.json"
    IO.copyFile(base / s"$n.json", target)
    target
  }
}

/** What a Maven repository (and `spark-submit --packages`) needs: the POM names what the jar
  * is, where it comes from, and only Provided dependencies (sparkSettings); sources and
  * javadoc jars are published beside the jar. */
lazy val publishSettings: Seq[Setting[_]] = Seq(
  description := "txcommit: transactional file commits for Apache Spark 4 on object stores and HDFS",
  licenses := Seq("Apache-2.0" -> url("https://www.apache.org/licenses/LICENSE-2.0.txt")),
  // The project's public home; confirm it before the first upload.
  homepage := Some(url("https://github.com/txcommit/txcommit")),
  scmInfo := Some(ScmInfo(url("https://github.com/txcommit/txcommit"),
      "scm:git:https://github.com/txcommit/txcommit.git")),
  developers := List(Developer("txcommit", "txcommit maintainers", "dev@txcommit.invalid",
      url("https://github.com/txcommit"))),
  publishMavenStyle := true,
  Test / publishArtifact := false,
  // Scaladoc of sources that refer to Spark's internals: warnings, not failures.
  Compile / doc / scalacOptions ++= Seq("-no-link-warnings"),
  // `bash .ci/release` publishes into this directory (a Maven repository ready to upload).
  publishTo := Some(MavenCache("release", (ThisBuild / baseDirectory).value / "target" / "release" / "maven")))

lazy val testSettings: Seq[Setting[_]] = Seq(
  libraryDependencies += "org.scalatest" %% "scalatest" % "3.2.19" % Test,
  Test / fork := true,
  // The forked test JVM gets sbt's user.home (the shell's $HOME, .ci/env.sh), not the password
  // database's: nothing a test runs looks into the user's own home.
  // C1 only and the serial collector: a test JVM lives for a minute on two shared cores, where
  // the C2 compiler's and the collector's threads cost more than they return. C1 alone reserves
  // 48 MB for compiled code, and a JVM that fills it runs interpreted: 240 MB, as tiered has.
  Test / javaOptions ++= Seq("-Xmx1g", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-XX:ReservedCodeCacheSize=240m",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    // Hive's SerDe reads (HiveSerDeReadsSuite) reach into java.net.URI, as spark-submit allows.
    "--add-opens=java.base/java.net=ALL-UNNAMED",
    s"-Duser.home=${sys.props("user.home")}"),
  // Durations, and a test still running after 5 minutes named every 2 (a hang says where).
  Test / testOptions += Tests.Argument(TestFrameworks.ScalaTest, "-oD", "-W", "300", "120"))

/** What every module of a line shares: its Spark, its sources, tests, POM and linkage check. */
def lineModule(l: SparkLine, moduleDir: String, artifact: String, jarName: String): Seq[Setting[_]] =
  Seq[Setting[_]](name := artifact, moduleName := artifact,
    Compile / packageBin / artifactPath := target.value / jarName) ++
    sparkSettings(l) ++ lineSources(l, moduleDir) ++ testSettings ++ publishSettings ++ Linkage.settings(l.line)

def pluginModule(
    l: SparkLine) = Project(if (l == Spark43) "pluginJvm" else s"pluginJvm${l.id}", lineBase(l, "plugin-jvm"))
  .settings(
    lineModule(l, "plugin-jvm", s"txcommit-spark-${l.line}", "txcommit-plugin.jar"),
    Compile / resourceGenerators += declarations("adapters/txcommit_store_local", "local").taskValue,
    Compile / resourceGenerators += declarations("adapters/txcommit_store_hdfs", "hdfs").taskValue,
    // A real NameNode and DataNode for the HDFS suites (one shaded jar; the Hadoop client it
    // runs against is Spark's own hadoop-client-api/-runtime).
    libraryDependencies += "org.apache.hadoop" % "hadoop-client-minicluster" % l.hadoop % Test intransitive (),
    // Spark 4.0.1's Hive analyzer drops the SQL extension's rules: HiveSessionClockCutSuite reads
    // through such a session (4.3's Hive support comes with the wheel's jars).
    libraryDependencies ++= (if (l == Spark40) Seq("org.apache.spark" %% "spark-hive" % l.spark % Test) else Nil),
    Compile / resourceGenerators += Def.task {
      val out = (Compile / resourceManaged).value / "io" / "txcommit" / "version.properties"
      IO.write(out, s"version=${version.value}\nspark.line=${l.line}\n")
      Seq(out)
    }.taskValue)

/** The stores with a JVM module of their own, each described in its folder (StoreModule). A new
  * one is its folder and one line here. */
lazy val storeModules: Seq[StoreModule] = Seq(AdapterAzure, AdapterGcs, AdapterS3)

/** A store's module on line `l`: its jar is txcommit-<name>.jar, its artifact
  * txcommit-spark-<name>-<line>. */
def storeModule(l: SparkLine, store: StoreModule, core: Project) = {
  val dir = s"${store.folder}/jvm"
  Project(if (l == Spark43) store.projectId else s"${store.projectId}${l.id}", lineBase(l, dir))
    .dependsOn(core % "compile->compile;test->test")
    .settings(
      lineModule(l, dir, s"txcommit-spark-${store.name}-${l.line}", s"txcommit-${store.name}.jar"),
      libraryDependencies ++= store.dependencies(l),
      Compile / resourceGenerators += declarations(store.folder, store.declarations: _*).taskValue,
      // The description (jvm/build/) is the meta-build's, which scalafmtSbt does not read: the
      // store's 4.3 project formats it with its sources.
      Compile / scalafmt / unmanagedSources ++=
        (if (l == Spark43) ((ThisBuild / baseDirectory).value / dir / "build" * "*.scala").get else Nil),
      store.settings(l))
}

lazy val pythonJars =
  taskKey[Seq[File]]("Packages the line's jars into python/src/txcommit/_jars/spark-<line>/, which the wheel carries")

/** A Spark line's projects: its plugin, a module for each of storeModules, and line<id>, which
  * aggregates them and copies their jars to where the Python package carries them. */
def lineProjects(l: SparkLine, plugin: Project) = {
  val modules = plugin +: storeModules.map(storeModule(l, _, plugin))
  LineProjects(modules,
    Project(s"line${l.id}", file("target") / "lines" / s"spark-${l.line}")
      .aggregate(modules.map(p => p: ProjectReference): _*)
      .settings(publish / skip := true, scalaVersion := l.scala,
        pythonJars := {
          val jars = modules.map(p => p / Compile / packageBin).join.value
          val dest = (ThisBuild / baseDirectory).value / "python" / "src" / "txcommit" / "_jars" / s"spark-${l.line}"
          IO.createDirectory(dest)
          jars.map { jar =>
            val target = dest / jar.getName
            // Replaced by a rename, and only when it changed: a server of a test running beside
            // this may have the old jar open, and a jar rewritten under a running JVM breaks it.
            if (!target.exists || !java.util.Arrays.equals(IO.readBytes(jar), IO.readBytes(target))) {
              val tmp = dest / s".${jar.getName}.tmp"
              IO.copyFile(jar, tmp)
              IO.move(tmp, target)
            }
            target
          }
        }))
}

lazy val spark43 = lineProjects(Spark43, pluginModule(Spark43))
lazy val spark42 = lineProjects(Spark42, pluginModule(Spark42))
lazy val spark41 = lineProjects(Spark41, pluginModule(Spark41))
// The linkage check's negative control: the 4.3 plugin jar on Spark 4.0 must show what 4.0 lacks.
lazy val spark40 = lineProjects(Spark40,
  pluginModule(Spark40).settings(Linkage.control(spark43.plugin / Compile / packageBin,
      Seq(
        "org.apache.spark.sql.catalyst.parser.ParserInterface#$init$",
        "org.apache.spark.sql.execution.streaming.checkpointing.CheckpointFileManager",
        "org.apache.spark.sql.execution.streaming.sinks.FileStreamSinkLog"))))

// `root` aggregates the 4.3 line only: a plain `test` or `package` builds the line the checkout
// develops on; the other lines are built by name (line40 ...) or all at once by `.ci/lines`.
lazy val root = (project in file("."))
  .aggregate(spark43.modules.map(p => p: ProjectReference): _*)
  .settings(publish / skip := true)

// Formatting (.scalafmt.conf): the 4.3 projects hold every shared source; line40 and line41 add
// the folders only the older lines compile (scala-spark-4.0, scala-spark-4.1-4.2), of every module.
addCommandAlias("fmt", "scalafmtAll; line40/scalafmtAll; line41/scalafmtAll; scalafmtSbt")
addCommandAlias("fmtCheck", "scalafmtCheckAll; line40/scalafmtCheckAll; line41/scalafmtCheckAll; scalafmtSbtCheck")

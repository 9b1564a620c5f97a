import sbt._

/** The Azure Blob Storage module (adapterAzure, adapterAzure40, ...). */
object AdapterAzure extends StoreModule {
  val name = "azure"
  val declarations = Seq("azure")

  // ABFS must match the cluster's Hadoop: the cluster provides it (`txcommit jars --store
  // azure` fetches the line's). Everything else it needs is in Spark's own jars, except
  // HdrHistogram. The adapter's own Blob requests use the JDK's HTTP client: no Azure SDK.
  // ABFS builds its URLs with Apache HttpClient, which Spark's distribution ships (its jars/)
  // but spark-sql's POM does not bring: the Maven lines' suites need it named.
  def dependencies(l: SparkLine): Seq[ModuleID] = Seq(
    "org.apache.hadoop" % "hadoop-azure" % l.hadoop % Provided intransitive (),
    "org.hdrhistogram" % "HdrHistogram" % "2.1.12" % Test) ++
    (if (l.fromMaven) Seq("org.apache.httpcomponents" % "httpclient" % "4.5.14" % Test) else Nil)
}

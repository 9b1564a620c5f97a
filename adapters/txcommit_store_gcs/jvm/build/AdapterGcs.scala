import sbt._

/** The Google Cloud Storage module (adapterGcs, adapterGcs40, ...). */
object AdapterGcs extends StoreModule {
  val name = "gcs"
  val declarations = Seq("gcs")

  // Google's Cloud Storage connector, shaded (its Google client libraries relocated, so they
  // cannot clash with Spark's guava or jackson). The cluster provides it (`txcommit jars
  // --store gcs` fetches it): Hadoop 3.5's own hadoop-gcp has no endpoint setting, so it
  // could not be tested against an emulator.
  def dependencies(l: SparkLine): Seq[ModuleID] =
    Seq("com.google.cloud.bigdataoss" % "gcs-connector" % "4.0.4" % Provided classifier "shaded" intransitive ())
}

import sbt._

/** The S3 module (adapterS3, adapterS340, ...): Hadoop S3A's conditional put and multipart
  * complete, so its jar carries both declarations. */
object AdapterS3 extends StoreModule {
  val name = "s3"
  val declarations = Seq("s3", "s3-multipart")

  // S3A and its AWS SDK must match the cluster's Hadoop: the cluster provides them
  // (`txcommit jars --store s3` fetches the line's), as Delta's S3 LogStore module declares them.
  def dependencies(l: SparkLine): Seq[ModuleID] = Seq(
    "org.apache.hadoop" % "hadoop-aws" % l.hadoop % Provided intransitive (),
    "software.amazon.awssdk" % "bundle" % l.awsSdk % Provided intransitive ()) ++
    (if (l.hadoop == "3.5.0")
       Seq("software.amazon.s3.analyticsaccelerator" % "analyticsaccelerator-s3" % "1.3.1" % Provided intransitive ())
     else Nil)
}

package io.txcommit

import org.scalatest.funsuite.AnyFunSuite

class VersionSuite extends AnyFunSuite {
  private val built = Version.sparkLine.getOrElse(fail("the jar's version.properties names no Spark line"))

  test("the jar knows the Spark line it was built for, and it is the one the tests run") {
    assert(Version.lineOf(org.apache.spark.SPARK_VERSION).contains(built))
    Version.requireSparkLine() // the running Spark: no error
  }

  test("another line's Spark is refused, naming both versions, the jar and the artifact to use") {
    val other = if (built == "4.0") "4.3.0" else "4.0.5"
    val otherLine = other.take(3)
    val e = intercept[UnsupportedSparkLineException](Version.requireSparkLine(other))
    assert(e.getMessage.contains(s"runs Spark $other") && e.getMessage.contains(s"built for Spark $built"))
    assert(e.getMessage.contains(s"io.txcommit:txcommit-spark-${otherLine}_2.13:${Version.current}"))
    assert(e.getMessage.contains(s"_jars/spark-$otherLine/"))
    assert(e.getCondition == "TXCOMMIT_UNSUPPORTED_SPARK_LINE")
  }

  test("patch releases and vendor suffixes of the jar's line run it") {
    Seq(s"$built.0", s"$built.9", s"$built.1-amzn-0", s"$built.0-SNAPSHOT").foreach { v =>
      assert(Version.mismatch(v).isEmpty, v)
    }
    assert(Version.lineOf("4.10.2").contains("4.10") && Version.lineOf("garbage").isEmpty)
  }
}

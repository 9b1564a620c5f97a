package io.txcommit.log

import org.scalatest.funsuite.AnyFunSuite

class TableSchemaPartitioningSuite extends AnyFunSuite {
  test("the partition columns of files, in order; unknown when they differ, are not name=value, or none") {
    assert(TableSchema.partitioning(Seq("day=1/hour=2/part-0", "day=1/hour=3/part-1")).contains(Seq("day", "hour")))
    assert(TableSchema.partitioning(Seq("part-0", "part-1")).contains(Nil))
    assert(TableSchema.partitioning(Seq("day=1/part-0", "part-1")).isEmpty)
    assert(TableSchema.partitioning(Seq("data/part-0")).isEmpty)
    assert(TableSchema.partitioning(Seq("=x/part-0")).isEmpty)
    assert(TableSchema.partitioning(Nil).isEmpty)
  }
}

package io.txcommit.commit

import org.apache.spark.sql.types.{IntegerType, MetadataBuilder, StringType, StructField, StructType}
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.{CorruptCommitRecordException, SchemaMismatchException}
import io.txcommit.log.{TableState, TxnId}
import io.txcommit.testing.MemTable

class CheckSchemaSuite extends AnyFunSuite {
  private def ddl(s: String): StructType = StructType.fromDDL(s)

  /** An append committed at `at` carrying `schema` (None: a record from before the guard). */
  private def append(t: MemTable, at: Long, schema: Option[String]): String = {
    val txn = TxnId.generate()
    t.commit(t.record(txn, s"part-$txn").copy(committedAt = at, schema = schema))
    txn
  }

  private def check(t: MemTable, written: String, replacesTable: Boolean = false,
      merge: Boolean = false, notNull: Boolean = true): Option[String] =
    CheckSchema.run(t.context(),
      SchemaCheck(Some(ddl(written)), replacesTable, merge,
        new TableState(t.table, t.store, t.conf), enforceNotNull = notNull), new StageTimings)

  private def refused(t: MemTable, written: String, merge: Boolean = false): SchemaMismatchException =
    intercept[SchemaMismatchException](check(t, written, merge = merge))

  test("a new table, or one whose records carry no schema, takes the write's schema unchecked") {
    val t = new MemTable
    assert(check(t, "id BIGINT NOT NULL") == Some("id BIGINT NOT NULL"))
    append(t, 10L, None)
    assert(check(t, "id STRING") == Some("id STRING"))
  }

  test("without enforceNotNull, nullability is no constraint: recorded nullable, a NOT NULL column relaxed") {
    val t = new MemTable
    assert(check(t, "id BIGINT NOT NULL, a ARRAY<STRUCT<x: INT NOT NULL>> NOT NULL", notNull = false) ==
      Some("id BIGINT, a ARRAY<STRUCT<x: INT>>"))
    append(t, 10L, Some("id BIGINT NOT NULL, v STRING NOT NULL"))
    assert(check(t, "id BIGINT", notNull = false) == Some("id BIGINT, v STRING"))
    assert(check(t, "id BIGINT NOT NULL, v STRING NOT NULL", notNull = false) == Some("id BIGINT, v STRING"))
  }

  test("a changed type is refused, naming the column, both types and what to do") {
    val t = new MemTable
    val since = append(t, 10L, Some("id BIGINT, name STRING"))
    val e = refused(t, "id STRING, name STRING")
    assert(e.columns == Seq("id"))
    assert(e.getMessage.contains("column 'id': the table has BIGINT, this write STRING"), e.getMessage)
    assert(e.getMessage.contains(since) && e.getMessage.contains("mergeSchema") &&
      e.getMessage.contains("overwrite"))
    assert(refused(t, "ID INT, NAME STRING").columns == Seq("id"), "names match case-insensitively")
    assert(refused(t, "id BIGINT, name STRUCT<a: INT>").columns == Seq("name"))
  }

  test("with enforceNotNull, a NOT NULL column may not become nullable or go missing; the other way round is fine") {
    val t = new MemTable
    append(t, 10L, Some("id BIGINT NOT NULL, v STRING"))
    val e = refused(t, "id BIGINT, v STRING")
    assert(
      e.getMessage.contains("BIGINT NOT NULL, this write BIGINT that may be null") &&
        e.getMessage.contains("spark.txcommit.enforceNotNull=false"), e.getMessage)
    assert(refused(t, "v STRING").getMessage.contains("lacks it"))
    assert(check(t, "id BIGINT NOT NULL, v STRING NOT NULL") == Some("id BIGINT NOT NULL, v STRING"))
    assert(check(t, "id BIGINT NOT NULL") == Some("id BIGINT NOT NULL, v STRING"), "a nullable column may be left out")
  }

  test("an added column needs mergeSchema and joins the table's schema as nullable") {
    val t = new MemTable
    append(t, 10L, Some("id BIGINT NOT NULL"))
    val e = refused(t, "id BIGINT NOT NULL, extra STRING NOT NULL")
    assert(e.columns == Seq("extra") && e.getMessage.contains("option(\"mergeSchema\", \"true\")"))
    assert(check(t, "extra STRING NOT NULL, id BIGINT NOT NULL", merge = true) ==
      Some("id BIGINT NOT NULL, extra STRING"))
    assert(refused(t, "id STRING, extra INT", merge = true).columns == Seq("id"), "mergeSchema changes no type")
  }

  test("an overwrite of the whole table replaces the schema; every problem is named at once") {
    val t = new MemTable
    append(t, 10L, Some("id BIGINT NOT NULL, v STRING"))
    assert(check(t, "id STRING", replacesTable = true) == Some("id STRING"))
    assert(refused(t, "id STRING, v INT, w INT").columns == Seq("id", "v", "w"))
  }

  test("the table's schema is the one of the record that committed last, replacing or not") {
    val t = new MemTable
    append(t, 30L, Some("id STRING"))
    append(t, 20L, Some("id BIGINT")) // a larger txn id that committed earlier
    append(t, 40L, None)
    assert(check(t, "id STRING") == Some("id STRING"))
    t.commitReplacing(TxnId.generate(), 1, Seq("")) // no schema: changes nothing
    assert(check(t, "id STRING") == Some("id STRING"))
    val r = t.record(TxnId.generate()).copy(committedAt = 50L, schema = Some("id INT"),
      operation = io.txcommit.log.CommitRecord.Overwrite,
      replacement = Some(io.txcommit.log.Replacement(2, Seq(""), Nil)))
    t.store.createExclusive(t.layout.replaceRecord(2), io.txcommit.log.RecordCodec.encode(r))
    assert(refused(t, "id STRING").getMessage.contains("the table has INT"))
  }

  test("a write whose format gives no schema is neither checked nor recorded with one") {
    val t = new MemTable
    append(t, 10L, Some("id BIGINT"))
    assert(CheckSchema.run(t.context(),
        SchemaCheck(None, replacesTable = false, mergeSchema = false,
          new TableState(t.table, t.store, t.conf)), new StageTimings).isEmpty)
  }

  test("a replacing commit judges again at its commit point: a schema set since its first check refuses it") {
    val t = new MemTable
    append(t, 10L, Some("id BIGINT"))
    val me = TxnId.generate()
    val intent = WriteIntent(dynamicPartitions = true)
    val schema = CheckSchema.decide(t.context(me),
      SchemaCheck(Some(ddl("id BIGINT")), intent.replacesTable,
        intent.mergeSchema, new TableState(t.table, t.store, t.conf), intent.enforceNotNull))
    append(t, 20L, Some("id STRING")) // committed while this job published its data
    val req = ReplaceRequest(t.record(me, "k=1/f").copy(schema = schema), intent, ReplaceBase(0L, Set.empty))
    intercept[SchemaMismatchException](PublishReplaceRecord.run(t.context(me), req, new StageTimings))
    assert(!t.store.paths.exists(p => p.toString.contains("/replace/")), "nothing published")
  }

  /** `i INT, s STRING DEFAULT 'abc' COMMENT 'a note'`, as Spark's writer gives a catalog column's DEFAULT: metadata. */
  private def withDefault: StructType = {
    val default = new MetadataBuilder().putString("CURRENT_DEFAULT", "'abc'").putString("EXISTS_DEFAULT", "'abc'")
      .putString("comment", "a note").build()
    StructType(Seq(StructField("i", IntegerType), StructField("s", StringType, nullable = true, default)))
  }

  test("a column's DEFAULT and comment stay out of the recorded schema, and the next write reads it back") {
    val t = new MemTable
    def write(schema: StructType) = CheckSchema.run(t.context(),
      SchemaCheck(Some(schema), replacesTable = false, mergeSchema = false, new TableState(t.table, t.store, t.conf)),
      new StageTimings)
    val recorded = write(withDefault)
    assert(recorded == Some("i INT, s STRING"))
    append(t, 10L, recorded)
    assert(write(withDefault) == Some("i INT, s STRING"))
  }

  test("a schema recorded with a DEFAULT (as earlier versions wrote it) is read back") {
    val t = new MemTable
    append(t, 10L, Some("i INT, s STRING DEFAULT 'a, b' COMMENT 'x', m MAP<STRING, INT> DEFAULT map('k', 1)"))
    assert(check(t, "i INT, s STRING, m MAP<STRING, INT>", notNull = false) ==
      Some("i INT, s STRING, m MAP<STRING, INT>"))
    assert(refused(t, "i STRING, s STRING, m MAP<STRING, INT>").columns == Seq("i"))
  }

  test("a recorded schema that cannot be read fails naming the record's txn, the schema and what to do") {
    val t = new MemTable
    val txn = append(t, 10L, Some("i INT, s STRANGE_TYPE"))
    val e = intercept[CorruptCommitRecordException](check(t, "i INT"))
    assert(e.getMessage.contains(txn) && e.getMessage.contains("s STRANGE_TYPE") &&
        e.getMessage.contains("Overwrite the whole table"), e.getMessage)
  }

  test("a write partitioned unlike the table is refused naming both partitionings, mergeSchema or not") {
    val t = new MemTable
    val txn = TxnId.generate()
    t.commit(t.record(txn, s"day=1/part-0-$txn", s"day=2/part-1-$txn").copy(committedAt = 10L,
        schema = Some("id BIGINT")))
    def partitioned(files: Seq[String], merge: Boolean) =
      CheckSchema.run(t.context(),
        SchemaCheck(Some(ddl("id BIGINT, day INT")), replacesTable = false, merge,
          new TableState(t.table, t.store, t.conf), files = files), new StageTimings)
    for (merge <- Seq(false, true)) {
      val e = intercept[SchemaMismatchException](partitioned(Seq("part-0"), merge))
      assert(e.getMessage.contains("the table's files are partitioned by (day), this write's by ()"), e.getMessage)
      assert(e.getMessage.contains("partitionBy(\"day\")") && !e.getMessage.contains("mergeSchema"), e.getMessage)
      assert(e.columns == Seq("day"))
    }
    val other = intercept[SchemaMismatchException](CheckSchema.run(t.context(),
        SchemaCheck(Some(ddl("id BIGINT")), replacesTable = false, mergeSchema = false,
          new TableState(t.table, t.store, t.conf), files = Seq("day=1/hour=3/part-2")), new StageTimings))
    assert(
      other.getMessage.contains("partitioned by (day), this write's by (day, hour)") && other.columns == Seq("hour"))
    // The table's partitioning: accepted, and so is a write of no file, or one replacing the table.
    assert(CheckSchema.run(t.context(),
      SchemaCheck(Some(ddl("id BIGINT")), replacesTable = false, mergeSchema = false,
        new TableState(t.table, t.store, t.conf), files = Seq("day=3/part-9")), new StageTimings) == Some("id BIGINT"))
    assert(partitioned(Nil, merge = true).isDefined)
    assert(CheckSchema.run(t.context(),
        SchemaCheck(Some(ddl("id BIGINT, day INT")), replacesTable = true,
          mergeSchema = false, new TableState(t.table, t.store, t.conf), files = Seq("part-0")), new StageTimings)
        .contains("id BIGINT, day INT"))
  }

  test("an unpartitioned table refuses a partitioned append") {
    val t = new MemTable
    append(t, 10L, Some("id BIGINT, day INT"))
    val e = intercept[SchemaMismatchException](CheckSchema.run(t.context(),
        SchemaCheck(Some(ddl("id BIGINT")), replacesTable = false, mergeSchema = false,
          new TableState(t.table, t.store, t.conf), files = Seq("day=1/part-0")), new StageTimings))
    assert(e.getMessage.contains("partitioned by (), this write's by (day)") &&
        e.getMessage.contains("write without partitionBy"), e.getMessage)
  }
}

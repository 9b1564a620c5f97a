"""At most one transaction log on any path (docs/protocol.md, I18), on every store.

Writing into a partition directory of a table (``df.write.parquet("<table>/k=1")``) would
create a second log inside the table: the table's readers would then hide the table's own
files in that directory, and VACUUM of the table would delete the inner table's files as never
committed. Such a write is refused before anything is written, with the write that does it
right; so is a write above a table; VACUUM refuses a tree that already holds two logs.
"""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F

from txcommit.maintenance import vacuum

from support.tables import TableRef


def k_counts(spark, url: str) -> dict[int, int]:  # noqa: ANN001
    return {r["k"]: r["count"] for r in spark.read.parquet(url).groupBy("k").count().collect()}


def test_a_write_into_a_partition_directory_is_refused_and_the_table_keeps_its_data(
    store_spark, any_table: TableRef
):  # noqa: ANN001
    spark, table = store_spark, any_table
    table.prepare(spark)
    spark.range(1000).withColumn("k", F.col("id") % 4).write.partitionBy("k").parquet(table.url)
    with pytest.raises(Exception, match="inside the txcommit table") as refused:
        spark.range(5).write.mode("append").parquet(f"{table.url}/k=1")
    assert 'partitionBy("k")' in str(refused.value), "the error says how to write the partition"
    assert not [k for k in table.objects() if k.startswith("k=1/_txcommit/")], "no second log"
    assert k_counts(spark, table.url) == {0: 250, 1: 250, 2: 250, 3: 250}

    # The write the error proposes lands in the table's own log.
    spark.range(5).withColumn("k", F.lit(1)).write.partitionBy("k").mode("append").parquet(
        table.url
    )
    assert k_counts(spark, table.url)[1] == 255
    vacuum(spark, table.url, retain_hours=0, force=True).collect()
    assert sum(k_counts(spark, table.url).values()) == 1005, "VACUUM deletes no committed file"


def test_a_write_above_a_table_is_refused(store_spark, any_table: TableRef):  # noqa: ANN001
    spark, table = store_spark, any_table
    table.prepare(spark)
    spark.range(10).write.parquet(f"{table.url}/inner")  # a table one level down
    with pytest.raises(Exception, match="holds the txcommit table"):
        spark.range(10).write.mode("append").parquet(table.url)
    assert not [k for k in table.objects() if k.startswith("_txcommit/")], "no log above it"
    assert spark.read.parquet(f"{table.url}/inner").count() == 10

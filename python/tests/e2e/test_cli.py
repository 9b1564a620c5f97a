"""The `txcommit server` command line, checked without starting a JVM (--dry-run), and
`txcommit ls`/`log` of a table Spark wrote under a name the Python clients find awkward."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from urllib.parse import unquote

from pyspark.sql import functions as F

import txcommit
from txcommit.cli.log import main as log_main
from txcommit.cli.ls import main as ls_main

from support.servers import server_python
from support.tables import next_table_name


def dry_run(*args: str, conf_dir: Path | None = None) -> str:
    env = dict(os.environ)
    env.pop("SPARK_CONF_DIR", None)
    if conf_dir is not None:
        env["SPARK_CONF_DIR"] = str(conf_dir)
    out = subprocess.run(
        [server_python(), "-m", "txcommit.cli", "server", "--dry-run", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return out.stdout


def test_the_plugin_is_loaded_for_the_user():
    cmd = dry_run("--port", "15123", "--master", "local[3]")
    assert "--class org.apache.spark.sql.connect.service.SparkConnectServer" in cmd
    assert "txcommit-plugin.jar" in cmd
    assert "spark.plugins=io.txcommit.spark.TxCommitPlugin" in cmd
    assert "spark.sql.extensions=io.txcommit.spark.TxCommitExtensions" in cmd
    assert "spark.connect.grpc.binding.port=15123" in cmd and "local[3]" in cmd


def test_plugins_and_extensions_from_spark_defaults_are_kept(tmp_path: Path):
    (tmp_path / "spark-defaults.conf").write_text(
        "spark.plugins  com.example.TheirPlugin\nspark.sql.extensions com.example.TheirExt\n"
    )
    cmd = dry_run(conf_dir=tmp_path)
    assert "spark.plugins=com.example.TheirPlugin,io.txcommit.spark.TxCommitPlugin" in cmd
    assert "spark.sql.extensions=com.example.TheirExt,io.txcommit.spark.TxCommitExtensions" in cmd


def test_secrets_never_appear_in_what_the_command_prints():
    cmd = dry_run("--conf", "spark.hadoop.fs.s3a.secret.key=hunter2")
    assert "hunter2" not in cmd and "fs.s3a.secret.key" in cmd


def test_a_malformed_conf_is_refused_with_its_text():
    out = subprocess.run(
        [server_python(), "-m", "txcommit.cli", "server", "--dry-run", "--conf", "no-equals-sign"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode != 0 and "no-equals-sign" in out.stderr


def test_ls_and_log_read_a_table_named_with_a_tab_as_spark_does(
    spark, workdir: Path, capsys
) -> None:
    """Spark writes and reads a table whose directory name has a TAB; `ls` of the directory
    holding it lists the files Spark reads, `log` of the table its two commits."""
    txcommit.enable(spark)
    events = workdir / "tables" / next_table_name()
    table = events / "a\tb"
    spark.range(0, 100, 1, 2).write.parquet(str(table))
    spark.range(100, 150, 1, 1).write.mode("append").parquet(str(table))
    df = spark.read.parquet(str(table))
    assert df.count() == 150
    read = {unquote(r[0]).rpartition("/")[2] for r in df.select(F.input_file_name()).collect()}
    assert len(read) == 3, read

    capsys.readouterr()
    assert ls_main([str(events), "--json"]) == 0
    assert {f["path"] for f in json.loads(capsys.readouterr().out)} == {f"a\tb/{n}" for n in read}
    assert log_main([str(table), "--json"]) == 0
    history = json.loads(capsys.readouterr().out)
    assert [r["state"] for r in history] == ["committed", "committed"]

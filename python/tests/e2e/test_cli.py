"""The `txcommit server` command line, checked without starting a JVM (--dry-run)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from support.servers import server_python


def dry_run(*args: str, conf_dir: Path | None = None) -> str:
    env = dict(os.environ)
    env.pop("SPARK_CONF_DIR", None)
    if conf_dir is not None:
        env["SPARK_CONF_DIR"] = str(conf_dir)
    out = subprocess.run(
        [server_python(), "-m", "txcommit.cli", "server", "--dry-run", *args],
        env=env, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
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
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert out.returncode != 0 and "no-equals-sign" in out.stderr

"""How the plugin is deployed: cluster default, a server without it, a client with no Java."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import txcommit

from support.layout import committed, data_files, txn_of
from support.servers import ServerProcess, new_session, running

# The documented snippet (docs/user-guide.md) that makes txcommit the default on a server.
DEFAULTS_SNIPPET = textwrap.dedent(
    """\
    spark.sql.sources.commitProtocolClass  io.txcommit.spark.TxCommitProtocol
    spark.plugins                          io.txcommit.spark.TxCommitPlugin
    spark.sql.extensions                   io.txcommit.spark.TxCommitExtensions
    """
)


def test_spark_defaults_makes_txcommit_the_default_for_every_session(workdir: Path):
    conf_dir = workdir / "conf-defaults"
    conf_dir.mkdir()
    (conf_dir / "spark-defaults.conf").write_text(DEFAULTS_SNIPPET)
    srv = ServerProcess(workdir / "defaults-server", env={"SPARK_CONF_DIR": str(conf_dir)})
    for _ in running(srv):
        sessions = [new_session(srv.url), new_session(srv.url)]
        for i, s in enumerate(sessions):
            assert txcommit.is_enabled(s), "no enable() call: the server default applies"
            s.range(100).write.parquet(str(workdir / "defaults" / f"s{i}"))
        # Fault injection is refused on a server that did not opt in: the write just commits.
        sessions[0].conf.set("spark.txcommit.test.haltAt", "job.beforeRecord")
        sessions[0].range(5).write.mode("append").parquet(str(workdir / "defaults" / "s0"))
        assert sessions[0].read.parquet(str(workdir / "defaults" / "s0")).count() == 105
        # A session can still opt out of the server default.
        txcommit.disable(sessions[1])
        sessions[1].range(5).write.parquet(str(workdir / "defaults" / "opted-out"))
        assert all(txn_of(p) is None for p in data_files(workdir / "defaults" / "opted-out"))
        for s in sessions:
            s.stop()
    for i in range(2):
        table = workdir / "defaults" / f"s{i}"
        assert committed(table)
        assert all(txn_of(p) for p in data_files(table))


def test_enable_against_a_server_without_the_plugin_says_how_to_install(workdir: Path):
    srv = ServerProcess(workdir / "plain-server", extra_args=["--no-plugin"])
    for _ in running(srv):
        spark = new_session(srv.url)
        with pytest.raises(txcommit.TxCommitNotInstalledError) as err:
            txcommit.enable(spark)
        message = str(err.value)
        assert "txcommit server" in message and "spark.plugins" in message
        assert not txcommit.is_enabled(spark)
        spark.stop()


CLIENT_SCRIPT = textwrap.dedent(
    """\
    import json, os, shutil, sys
    import txcommit  # must come before anything imports pyspark.sql.connect
    assert shutil.which("java") is None and "JAVA_HOME" not in os.environ
    spark = txcommit.connect(sys.argv[1])
    txcommit.enable(spark)
    spark.range(250).write.parquet(sys.argv[2])
    print(json.dumps({"rows": spark.read.parquet(sys.argv[2]).count(),
                      "enabled": txcommit.is_enabled(spark),
                      "version": txcommit.server_version(spark)}))
    """
)


def test_a_client_machine_with_no_java_and_no_spark_home(server: ServerProcess, table: Path):
    client_bin = Path(sys.executable).parent
    env = {"PATH": str(client_bin), "HOME": os.environ.get("HOME", "/tmp"), "LANG": "C.UTF-8"}
    out = subprocess.run(
        [sys.executable, "-c", CLIENT_SCRIPT, server.url, str(table)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result == {"rows": 250, "enabled": True, "version": result["version"]}
    assert result["version"] == "0.1.0"
    assert committed(table)

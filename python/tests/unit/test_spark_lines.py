"""Which Spark line a server runs, and what follows from it: the plugin jar the package carries
for that line and the Hadoop connectors that match its Hadoop (no JVM, no pyspark needed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import txcommit.server as server
from txcommit import _maven as jars
from txcommit.errors import ServerStartError
from txcommit.stores import store_descriptor


def coords(arts: tuple[jars.Artifact, ...]) -> set[str]:
    return {f"{a.name}:{a.version}" for a in arts}


def test_each_line_gets_the_connectors_of_the_hadoop_its_pyspark_ships() -> None:
    def store_artifacts(store: str, line: str) -> tuple[jars.Artifact, ...]:
        return store_descriptor(store).connectors(line)

    assert coords(store_artifacts("s3", "4.0")) == {"hadoop-aws:3.4.1", "bundle:2.24.6"}
    assert coords(store_artifacts("s3-multipart", "4.1")) == {
        "hadoop-aws:3.4.2",
        "bundle:2.29.52",
        "analyticsaccelerator-s3:1.2.1",
    }
    for line in ("4.2", "4.3"):
        assert coords(store_artifacts("s3", line)) == {
            "hadoop-aws:3.5.0",
            "bundle:2.35.4",
            "analyticsaccelerator-s3:1.3.1",
        }
    assert coords(store_artifacts("azure", "4.0")) == {"hadoop-azure:3.4.1", "HdrHistogram:2.1.12"}
    assert store_artifacts("local", "4.0") == () == store_artifacts("hdfs", "4.1")


def test_a_spark_version_maps_to_its_line_and_an_unsupported_one_is_named() -> None:
    assert jars.spark_line("4.0.1") == "4.0"
    assert jars.spark_line("4.3.0") == "4.3"
    assert jars.spark_line("4.1.0.dev1") == "4.1"
    for version in ("3.5.3", "4.4.0"):
        unsupported = rf"Spark {version} is not supported.*4\.0, 4\.1"
        with pytest.raises(ServerStartError, match=unsupported):
            jars.spark_line(version)


def fake_pyspark(root: Path, version: str) -> Path:
    home = root / "pyspark"
    home.mkdir(parents=True)
    (home / "version.py").write_text(f'__version__: str = "{version}"\n')
    return home


def test_the_installed_pyspark_decides_the_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import txcommit._spark_home as spark_home

    home = fake_pyspark(tmp_path, "4.0.2")
    monkeypatch.setattr(spark_home, "pyspark_dir", lambda: home)
    assert jars.installed_spark_line() == "4.0"
    assert server.bundled_jar_dir().name == "spark-4.0"
    monkeypatch.setattr(spark_home, "pyspark_dir", lambda: None)
    assert jars.installed_spark_line() == jars.DEFAULT_LINE


def test_the_plugin_jar_is_the_one_carried_for_the_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(server.PLUGIN_JAR_ENV, raising=False)
    for line in ("4.0", "4.3"):
        (tmp_path / f"spark-{line}").mkdir()
        (tmp_path / f"spark-{line}" / server.PLUGIN_JAR_NAME).write_bytes(b"PK")
    monkeypatch.setattr(server, "bundled_jar_dir", lambda line=None: tmp_path / f"spark-{line}")
    carried = tmp_path / "spark-4.0" / server.PLUGIN_JAR_NAME
    assert server.find_plugin_jar("4.0") == carried.resolve()
    missing = r"no txcommit-plugin.jar for spark 4\.1.*line41/package"
    with pytest.raises(ServerStartError, match=missing):
        server.find_plugin_jar("4.1")


def test_the_server_runtime_path_imports_no_test_doubles() -> None:
    # `txcommit server` (local store) and `txcommit jars` must not need txcommit.testing or
    # txcommit.bench (emulators, benchmark code) or what only they import.
    code = (
        "import sys, txcommit.cli, txcommit.server, txcommit._maven\n"
        "from txcommit.server import ServerConfig, with_store\n"
        "with_store(ServerConfig(), {})\n"
        "doubles = (['txcommit', 'testing'], ['txcommit', 'bench'])\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[:2] in doubles\n"
        "             or m in ('moto', 'boto3', 'matplotlib'))\n"
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_another_hadoops_connectors_are_kept_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    # Tools that put the whole cache folder on a classpath must not see two AWS SDKs.
    seen: list[str] = []
    monkeypatch.setattr(jars, "fetched", lambda arts, what, how, **kw: seen.append(kw["subdir"]))
    store_descriptor("s3").jars("4.0")
    store_descriptor("s3").jars("4.3")
    store_descriptor("gcs").jars("4.1")
    assert seen == ["hadoop-3.4.1", "", ""]

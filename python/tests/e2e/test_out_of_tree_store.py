"""A store from outside txcommit: the ``txcommit-store-example`` distribution
(``out_of_tree_store/``) brings its declaration, Python store, JVM adapter jar and descriptor,
and is found through the ``txcommit.adapters`` entry point alone. Built here as a third party
builds it (javac + jar against the plugin jar and pyspark's jars, then pip), it is certified
by ``txcommit conformance`` at Level 1 and Level 2, and a Connect server started with
``--store example`` commits an append through it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import txcommit
from txcommit.conformance import NOT_DECLARED, PASS
from txcommit.table.records import decode_record

from support.servers import ServerProcess, new_session, server_python

DISTRIBUTION = Path(__file__).resolve().parent / "out_of_tree_store"
JAR = "txcommit-store-example.jar"


def _jvm_classpath() -> list[str]:
    """The plugin jar the server will load and the pyspark jars the adapter compiles against."""
    probe = (
        "import pyspark, txcommit.server as s; "
        "print(s.find_plugin_jar()); print(pyspark.__path__[0])"
    )
    out = subprocess.run(
        [server_python(), "-c", probe], capture_output=True, text=True, check=True, env=_env(None)
    ).stdout.split("\n")
    jars = Path(out[1]) / "jars"
    needed = ("hadoop-client-api-", "scala-library-")
    return [out[0], *(str(p) for p in sorted(jars.glob("*.jar")) if p.name.startswith(needed))]


def _env(site: Path | None) -> dict[str, str]:
    """The environment of the server-side processes: the txcommit this test runs, and the
    installed distribution when ``site`` is given."""
    ours = str(Path(txcommit.__file__).resolve().parents[1])
    path = [str(site)] if site is not None else []
    return {**os.environ, "PYTHONPATH": os.pathsep.join([*path, ours])}


def build_and_install(tmp: Path) -> Path:
    """The adapter jar built into a copy of the distribution, which is then installed into a
    directory of its own (returned, for PYTHONPATH)."""
    dist = tmp / "dist"
    shutil.copytree(DISTRIBUTION, dist)
    package = dist / "txcommit_store_example"
    classes = tmp / "classes"
    sources = sorted(str(p) for p in (package / "jvm" / "src").rglob("*.java"))
    subprocess.run(
        [
            "javac",
            "--release",
            "17",
            "-d",
            str(classes),
            "-cp",
            os.pathsep.join(_jvm_classpath()),
            *sources,
        ],
        check=True,
    )
    shutil.copytree(package / "jvm" / "resources", classes, dirs_exist_ok=True)
    # The JVM adapter reads its declaration from its own jar.
    declaration = classes / "txcommit" / "adapters" / "example" / "adapter.json"
    declaration.parent.mkdir(parents=True)
    shutil.copy(package / "example.json", declaration)
    subprocess.run(["jar", "cf", str(package / JAR), "-C", str(classes), "."], check=True)
    site = tmp / "site"
    uv = Path(server_python()).parent / "uv"  # the server venv's uv (txcommit[dev])
    subprocess.run(
        [
            str(uv),
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--python",
            server_python(),
            "--target",
            str(site),
            str(dist),
        ],
        check=True,
    )
    assert (site / "txcommit_store_example" / JAR).is_file()
    return site


def test_a_store_of_another_distribution_is_certified_and_commits_appends(tmp_path: Path) -> None:
    site = build_and_install(tmp_path)
    env = _env(site)
    root = tmp_path / "store"
    root.mkdir()

    # The kit as a user runs it: both levels, Level 2 on one server (no driver halts).
    report = tmp_path / "report.json"
    argv = ["--store", f"example://{root}", "--level", "all", "--halt-points", "none"]
    done = subprocess.run(
        [server_python(), "-m", "txcommit.conformance", *argv, "--report", str(report)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        env=env,
    )
    printed = done.stdout + done.stderr
    assert done.returncode == 0, printed
    got = json.loads(report.read_text())
    assert got["levels"] == {"1": "certified", "2": "certified"}, printed
    results = {c["name"]: c["result"] for c in got["checks"]}
    assert {"exclusive-create-race", "atomic-visibility", "reader-check"} <= set(results)
    # Every check the declaration claims passes; the multipart ones are not its primitive's.
    assert set(results.values()) <= {PASS, NOT_DECLARED}, results
    assert results["exclusive-create-race"] == PASS == results["reader-check"]

    # A Connect server with --store example: Spark writes example:// through the jar's file
    # system, and the commit record is published by the jar's adapter.
    table = f"example://{root}/t"
    server = ServerProcess(
        tmp_path / "server",
        extra_args=["--store", "example"],
        env={"PYTHONPATH": env["PYTHONPATH"]},
    )
    server.start()
    try:
        spark = new_session(server.url)
        txcommit.enable(spark)
        spark.range(0, 10, 1, 2).write.mode("append").parquet(table)
        assert sorted(r.id for r in spark.read.parquet(table).collect()) == list(range(10))
    finally:
        server.stop()
    commits = list((root / "t" / "_txcommit" / "commits").iterdir())
    assert len(commits) == 1, commits
    record = decode_record(commits[0].read_bytes(), str(commits[0]), commits[0].stem)
    assert record.files == 2 and record.operation == "append", record

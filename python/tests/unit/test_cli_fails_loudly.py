"""The ``txcommit`` command fails loudly: a typo in a path, a bad or unreachable ``--remote``
and a closed pipe each end with a one-line error and a non-zero exit, never a traceback, a
hang, or a silent "0 transactions"."""

from __future__ import annotations

import importlib
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

import txcommit.cli
from txcommit import __version__
from txcommit.adapters.base import Secret
from txcommit.conformance.runner import scrub
from txcommit.errors import StoreError
from txcommit.table.properties import TableProperties, encode_properties
from txcommit.table.records import encode_record
from txcommit.testing.vectors import load
from txcommit_store_s3 import DUMMY_KEY, DUMMY_SECRET
from txcommit_store_s3.devkit.emulator import LocalS3

from support.s3 import TEST_BUCKET
from support.vectors import logical


def _txcommit(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "txcommit.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _table(root: Path) -> Path:
    """A local table of eight transactions (a case of the shared test vectors)."""
    case = next(c for c in load("tables.json")["cases"] if c["name"] == "checkpoint-then-records")
    for rel in case["files"]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(b"abc")
    for r in case["records"]:
        (root / r["file"]).parent.mkdir(parents=True, exist_ok=True)
        (root / r["file"]).write_bytes(encode_record(logical(r["record"])))
    return root


# ------------------------------------------------------------------ not a table, no path


@pytest.mark.parametrize("command", ["ls", "log"])
def test_a_missing_path_is_an_error_naming_it(tmp_path: Path, command: str) -> None:
    missing = tmp_path / "evnets"
    done = _txcommit(command, str(missing))
    assert done.returncode == 2, done
    assert str(missing) in done.stderr and "does not exist" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


@pytest.mark.parametrize("command", ["ls", "log"])
def test_a_directory_without_a_log_is_not_a_table(tmp_path: Path, command: str) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "part-00000.parquet").write_bytes(b"x")
    done = _txcommit(command, str(plain))
    assert done.returncode == 2, done
    assert str(plain) in done.stderr and "not a txcommit table" in done.stderr
    assert "--allow-empty" in done.stderr


@pytest.mark.parametrize("command", ["ls", "log"])
def test_allow_empty_accepts_a_missing_path(tmp_path: Path, command: str) -> None:
    done = _txcommit(command, str(tmp_path / "not-yet"), "--allow-empty")
    assert done.returncode == 0, done
    assert done.stdout.startswith("0 ")


def test_a_partition_of_a_table_is_still_listed(tmp_path: Path) -> None:
    table = _table(tmp_path / "t")
    partition = next(p for p in table.iterdir() if p.is_dir() and not p.name.startswith("_"))
    done = _txcommit("log", str(partition))
    assert done.returncode == 0, done.stderr


def test_a_directory_holding_tables_is_listed(tmp_path: Path) -> None:
    """Spark reads a directory holding tables (their committed files): so does `ls`."""
    _table(tmp_path / "events" / "date=1")
    done = _txcommit("ls", str(tmp_path / "events"))
    assert done.returncode == 0, done.stderr
    assert "date=1/" in done.stdout


@pytest.mark.parametrize("command", ["ls", "log", "doctor"])
def test_a_missing_directory_inside_a_table_is_an_error_naming_it(
    tmp_path: Path, command: str
) -> None:
    """A typo below a table (`ls /data/events/dat=1`) is not an empty partition."""
    missing = _table(tmp_path / "t") / "nope"
    done = _txcommit(command, str(missing))
    assert done.returncode == 2, done
    assert f"{missing} does not exist" in done.stderr and "--allow-empty" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_allow_empty_shows_a_missing_directory_inside_a_table_as_empty(tmp_path: Path) -> None:
    done = _txcommit("ls", str(_table(tmp_path / "t") / "nope"), "--allow-empty")
    assert done.returncode == 0, done
    assert done.stdout.startswith("0 committed files")


def test_log_of_a_directory_holding_tables_names_them_instead_of_no_history(
    tmp_path: Path,
) -> None:
    """Each table has its own history: a directory of tables has none, not "0 transactions"."""
    _table(tmp_path / "events" / "date=1")
    _table(tmp_path / "events" / "date=2")
    done = _txcommit("log", str(tmp_path / "events"))
    assert done.returncode == 2, done
    assert str(tmp_path / "events") in done.stderr and done.stdout == ""
    assert "date=1" in done.stderr and "date=2" in done.stderr


# ------------------------------------------------------------------- names Spark allows

TABBED = "a\tb"


def _listed(*args: str) -> list[dict[str, object]]:
    done = _txcommit("ls", "--json", *args)
    assert done.returncode == 0, done.stderr
    listed: list[dict[str, object]] = json.loads(done.stdout)
    return listed


def test_ls_of_a_directory_holding_a_table_named_with_a_tab_lists_its_files(
    tmp_path: Path,
) -> None:
    """Spark reads a table whose directory name has a TAB, and so do `ls` and `log` of it."""
    _table(tmp_path / "plain" / "ab")
    _table(tmp_path / "events" / TABBED)
    expected = [
        {**f, "path": f"{TABBED}/{str(f['path'])[3:]}"} for f in _listed(str(tmp_path / "plain"))
    ]
    assert expected and _listed(str(tmp_path / "events")) == expected
    assert _listed(str(tmp_path / "events" / TABBED)) == _listed(str(tmp_path / "plain" / "ab"))
    # As a file: URL too (URL parsing drops a raw TAB: it would name events/ab).
    url = f"file://{tmp_path}/events/{TABBED}"
    assert _listed(url) == _listed(str(tmp_path / "plain" / "ab"))
    log = _txcommit("log", str(tmp_path / "events" / TABBED))
    assert log.returncode == 0 and "7 transactions" in log.stdout, log


@pytest.mark.parametrize("command", ["ls", "log"])
def test_a_name_with_a_control_character_is_shown_escaped_in_text(
    tmp_path: Path, command: str
) -> None:
    """A TAB (or a terminal's escape) in a name would break the columns or the terminal."""
    _table(tmp_path / "events" / TABBED)
    done = _txcommit(command, str(tmp_path / "events"))
    assert "Traceback" not in done.stderr, done.stderr
    out = done.stdout + done.stderr
    assert "a\\tb" in out and TABBED not in out.replace(str(tmp_path), "")


def test_an_s3_key_with_a_control_character_is_an_error_naming_it(local_s3: LocalS3) -> None:
    """obstore cannot address such a key: say so and what reads it, never "no files"."""
    import boto3

    client = boto3.client(
        "s3",
        endpoint_url=local_s3.endpoint,
        region_name="us-east-1",
        aws_access_key_id=DUMMY_KEY,
        aws_secret_access_key=DUMMY_SECRET,
    )
    prefix = f"tabs-{os.getpid()}-{time.monotonic_ns()}"
    client.put_object(Bucket=TEST_BUCKET, Key=f"{prefix}/{TABBED}/_txcommit/x.json", Body=b"{}")
    env = {**os.environ, "AWS_ACCESS_KEY_ID": DUMMY_KEY, "AWS_SECRET_ACCESS_KEY": DUMMY_SECRET}
    for path in (f"s3://{TEST_BUCKET}/{prefix}", f"s3://{TEST_BUCKET}/{prefix}/{TABBED}"):
        done = subprocess.run(
            [sys.executable, "-m", "txcommit.cli", "ls", path, "--endpoint", local_s3.endpoint],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )
        assert done.returncode == 1, done
        assert f"{prefix}/a\\tb" in done.stderr and "control character" in done.stderr, done
        assert "Spark" in done.stderr and "reachable" not in done.stderr, done.stderr
        assert "Traceback" not in done.stderr


# -------------------------------------------------------------------- table properties


def test_log_with_corrupt_properties_prints_the_history_and_names_the_file(
    tmp_path: Path,
) -> None:
    table = _table(tmp_path / "t")
    history = _txcommit("log", str(table))
    assert history.returncode == 0 and "7 transactions" in history.stdout, history
    properties = table / "_txcommit" / "properties"
    properties.mkdir()
    good = TableProperties(1, {"manifests": "true"}, set_at=1, writer="txcommit 0.1.0")
    (properties / "00000000000000000001.json").write_bytes(encode_properties(good))
    (properties / "00000000000000000002.json").write_bytes(b'{"format": "txcommit-prop')
    done = _txcommit("log", str(table))
    assert done.returncode == 1, done
    assert done.stdout.startswith(history.stdout), done.stdout
    assert f"{table}/_txcommit/properties/00000000000000000002.json" in done.stderr
    assert "corrupt" in done.stderr and "Traceback" not in done.stderr, done.stderr


@pytest.mark.parametrize("command", sorted(txcommit.cli.PASSTHROUGH))
def test_a_txcommit_error_out_of_any_command_is_one_line_not_a_traceback(
    command: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    message = "txcommit: could not read s3://b/t/x.json: it timed out. Hint: retry."

    def failing(argv: list[str]) -> int:
        raise StoreError(message, url="s3://b/t/x.json")

    monkeypatch.setattr(
        importlib.import_module(txcommit.cli.PASSTHROUGH[command][0]), "main", failing
    )
    assert txcommit.cli.main([command, "s3://b/t"]) == 1
    assert capsys.readouterr().err == message + "\n"


# ----------------------------------------------------------------------------- version


def test_version_flag() -> None:
    done = _txcommit("--version")
    assert done.returncode == 0, done
    assert done.stdout.strip() == f"txcommit {__version__}"


# ------------------------------------------------------------------------- closed pipe


@pytest.mark.parametrize("args", [["log", "--json"], ["ls"], ["--version"]])
def test_a_closed_pipe_ends_quietly(tmp_path: Path, args: list[str]) -> None:
    table = _table(tmp_path / "t")
    argv = [*args, str(table)] if args[0] != "--version" else args
    # The reader goes away before anything is written, as `| head -0` does.
    read, write = os.pipe()
    os.close(read)
    proc = subprocess.run(
        [sys.executable, "-m", "txcommit.cli", *argv],
        stdout=write,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
    )
    os.close(write)
    assert "Traceback" not in proc.stderr and "BrokenPipeError" not in proc.stderr, proc.stderr
    assert proc.returncode == 141, proc.stderr  # 128 + SIGPIPE, as other Unix tools


# --------------------------------------------------------------------------- --remote


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# The commands that run a statement on a server: they share the round trip (cli/remote.py).
REMOTE_COMMANDS = ["vacuum", "manifest"]


@pytest.mark.parametrize("command", REMOTE_COMMANDS)
def test_a_remote_command_with_nothing_listening_fails_fast(tmp_path: Path, command: str) -> None:
    port = _free_port()
    start = time.monotonic()
    done = _txcommit(command, str(tmp_path), "--remote", f"sc://127.0.0.1:{port}", timeout=90)
    assert time.monotonic() - start < 30
    assert done.returncode == 1, done
    assert f"127.0.0.1:{port}" in done.stderr and "txcommit server" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("command", REMOTE_COMMANDS)
@pytest.mark.parametrize("remote", ["http://x", "x:15002", "sc://", "sc://h:notaport"])
def test_a_remote_command_refuses_a_remote_that_is_not_an_sc_url(
    tmp_path: Path, remote: str, command: str
) -> None:
    done = _txcommit(command, str(tmp_path), "--remote", remote)
    assert done.returncode == 2, done
    assert remote in done.stderr and "sc://" in done.stderr
    assert "Traceback" not in done.stderr


# ---------------------------------------------------------------------------- masking


def test_masking_hides_a_short_secret_not_its_letters() -> None:
    message = "GET http://127.0.0.1:9000/bucket/x.json failed: key x, signature y; retry"
    masked = Secret.scrub(message, Secret("x"), Secret("y"))
    assert masked == (
        "GET http://127.0.0.1:9000/bucket/***.json failed: key ***, signature ***; retry"
    )


def test_masking_hides_a_long_secret_wherever_it_is() -> None:
    secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCY"
    masked = Secret.scrub(f"sig={secret}&x=1 and AKIA{secret}", Secret(secret))
    assert secret not in masked and masked == "sig=***&x=1 and AKIA***"


def test_conformance_masking_hides_short_secrets_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "y")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "x")
    message = "ls of s3://box/y failed with token x; retry"
    assert scrub(message) == "ls of s3://box/*** failed with token ***; retry"


def test_an_s3_error_keeps_its_letters_with_one_letter_credentials(tmp_path: Path) -> None:
    env = {**os.environ, "AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "y"}
    endpoint = f"http://127.0.0.1:{_free_port()}"  # nothing listens: the request fails
    done = subprocess.run(
        [sys.executable, "-m", "txcommit.cli", "ls", "s3://bucket/tbl", "--endpoint", endpoint],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 1, done
    # The first request looks for a log (above the table or in it): its URL keeps its x and y.
    assert "list-type=2&prefix=" in done.stderr and "_txcommit%2F" in done.stderr, done.stderr
    assert "max_retries" in done.stderr and "***" not in done.stderr

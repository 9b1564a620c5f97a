"""The adapter conformance kit, Level 1 (``txcommit conformance``), on live stores: a local
directory, an honest local S3 endpoint (adapters s3 and s3-multipart), and an endpoint that
ignores If-None-Match, which the kit must refuse to certify."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
import requests

from txcommit.adapters import open_store
from txcommit.cli import main as txcommit_main
from txcommit.conformance import CHECKS, FAIL, NOT_DECLARED, PASS, main, run_level1
from txcommit_store_azure import EMULATOR_ACCOUNT, EMULATOR_KEY
from txcommit_store_azure.devkit.emulator import Azurite
from txcommit_store_gcs.devkit.emulator import FakeGcs
from txcommit_store_s3 import DUMMY_KEY, DUMMY_SECRET
from txcommit_store_s3.devkit.emulator import LocalS3
from txcommit_store_s3.store import S3Store

BUCKET = "conformance"
MULTIPART_ROWS = (
    "multipart-invisible-until-complete",
    "multipart-complete-visible",
    "multipart-gone-after-abort",
)
HEADLINE = "declares conditional-put, but two exclusive creates of the same key both succeeded"
# Small and fast, still across a 5 MiB part boundary.
FAST = ["--writers", "8", "--large-mib", "6"]


@pytest.fixture(scope="module")
def honest(local_s3: LocalS3) -> LocalS3:
    """The session's honest endpoint, with bucket BUCKET."""
    local_s3.create_bucket(BUCKET)
    return local_s3


@pytest.fixture(scope="module")
def liar(lying_s3: LocalS3) -> LocalS3:
    """The session's endpoint that ignores If-None-Match, with bucket BUCKET."""
    lying_s3.create_bucket(BUCKET)
    return lying_s3


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", DUMMY_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", DUMMY_SECRET)
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.delenv("AWS_ENDPOINT_URL_S3", raising=False)


def s3_url() -> str:
    return f"s3://{BUCKET}/runs/{uuid.uuid4().hex[:12]}"


def keys_under(s3: LocalS3, url: str) -> list[str]:
    store = S3Store(url, endpoint=s3.endpoint, access_key_id=DUMMY_KEY, secret_access_key="x1")
    fs, root = store.fsspec()
    return [p for p in fs.find(root)] if fs.exists(root) else []


def results(report: dict[str, Any]) -> dict[str, str]:
    return {c["name"]: c["result"] for c in report["checks"]}


def test_a_local_directory_is_certified_and_multipart_is_not_declared(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report.json"
    code = main(["--store", str(tmp_path / "store"), "--report", str(out), *FAST])
    printed = capsys.readouterr().out
    assert code == 0, printed
    report = json.loads(out.read_text())
    assert report["adapter"] == "local" and report["certified"] is True
    assert report["declaration"]["primitive"] == "rename"
    got = results(report)
    for name in MULTIPART_ROWS + ("conditional-put-probe",):
        assert got.pop(name) == NOT_DECLARED
    assert set(got.values()) == {PASS} and len(got) == 15, got
    assert all(c["seconds"] >= 0 and c["explanation"] for c in report["checks"])
    assert "certified: local (rename) on file://" in printed
    # everything it wrote is gone, its fresh sub-directory included
    assert list((tmp_path / "store").iterdir()) == []
    assert report["cleanup"]["left"] == [] and report["cleanup"]["deleted"] > 0


@pytest.mark.parametrize("adapter", ["s3", "s3-multipart"])
def test_an_honest_s3_endpoint_is_certified(
    honest: LocalS3, aws_env: None, tmp_path: Path, adapter: str
) -> None:
    url = s3_url()
    out = tmp_path / "report.json"
    argv = ["--store", url, "--adapter", adapter, "--endpoint", honest.endpoint]
    code = main([*argv, "--report", str(out), *FAST])
    report = json.loads(out.read_text())
    assert code == 0, report
    assert report["certified"] is True and report["endpoint"] == honest.endpoint
    got = results(report)
    assert got["conditional-put-probe"] == PASS
    expected = PASS if adapter == "s3-multipart" else NOT_DECLARED
    assert all(got[name] == expected for name in MULTIPART_ROWS), got
    assert FAIL not in got.values()
    assert keys_under(honest, url) == []  # cleaned up, probe included


def test_a_store_ignoring_if_none_match_is_not_certified(
    liar: LocalS3, aws_env: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = s3_url()
    out = tmp_path / "report.json"
    argv = ["--store", url, "--adapter", "s3", "--endpoint", liar.endpoint, *FAST]
    code = main([*argv, "--report", str(out)])
    printed = capsys.readouterr().out
    assert code == 1, printed
    report = json.loads(out.read_text())
    assert report["certified"] is False
    failing = {c["name"]: c for c in report["checks"] if c["result"] == FAIL}
    assert set(failing) == {
        "exclusive-create-race",
        "no-overwrite",
        "refused-create-error",
        "conditional-put-probe",
    }, printed
    assert HEADLINE in failing["exclusive-create-race"]["explanation"]
    assert HEADLINE in failing["no-overwrite"]["explanation"]
    assert "ignored If-None-Match" in failing["conditional-put-probe"]["explanation"]
    # what is not about the lie still passes; what is not declared is not certified
    got = results(report)
    assert got["list-after-write"] == PASS and got["large-object"] == PASS
    assert all(got[name] == NOT_DECLARED for name in MULTIPART_ROWS)
    assert "NOT certified: 4 declared checks failed" in printed
    assert f"FAIL exclusive-create-race: adapter 's3' {HEADLINE}" in printed
    assert keys_under(liar, url) == []


def test_the_txcommit_command_prints_the_table_and_returns_the_exit_code(
    liar: LocalS3, aws_env: None, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["conformance", "--store", s3_url(), "--endpoint", liar.endpoint, *FAST]
    assert txcommit_main(argv) == 1
    printed = capsys.readouterr().out
    lines = printed.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("check "))
    assert [c.strip() for c in lines[header].split("|")] == [
        "check",
        "capability",
        "result",
        "time",
    ]
    assert lines[header + 1].startswith("---") and "-+-" in lines[header + 1]
    table = lines[header : header + 2 + len(CHECKS)]  # header, rule, every check: aligned
    bars = {tuple(i for i, ch in enumerate(line) if ch in "|+") for line in table}
    assert len(bars) == 1, table
    row = next(line for line in lines if line.startswith("exclusive-create-race "))
    assert [c.strip() for c in row.split("|")][:3] == [
        "exclusive-create-race",
        "conditional-put",
        "FAIL",
    ]
    assert lines[-1].startswith("NOT certified: 4 declared checks failed")
    assert liar.endpoint in lines[0]


def test_usage_errors_exit_with_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2  # --store is required
    assert main(["--store", str(tmp_path), "--adapter", "nope"]) == 2
    assert "unknown store adapter 'nope'" in capsys.readouterr().err
    assert main(["--store", str(tmp_path), "--adapter", "s3"]) == 2  # s3 does not serve file:
    assert main(["--store", str(tmp_path), "--endpoint", "http://127.0.0.1:1"]) == 2
    assert main(["--store", str(tmp_path), "--writers", "1"]) == 2
    assert list(tmp_path.iterdir()) == []


def test_credentials_never_appear_in_output_report_or_errors(
    honest: LocalS3,
    liar: LocalS3,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    secret = f"SeCrEt-{uuid.uuid4().hex}"
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", DUMMY_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret)
    monkeypatch.setenv("AWS_SESSION_TOKEN", f"ToKeN-{secret}")
    reports = []
    # a lying store (failures explained), a missing bucket (every check errors), and a
    # usage error with the secret in the URL
    runs = [
        ["--store", s3_url(), "--endpoint", liar.endpoint],
        ["--store", f"s3://no-such-bucket-{uuid.uuid4().hex[:8]}/x", "--endpoint", honest.endpoint],
        ["--store", f"s3://{DUMMY_KEY}:{secret}@{BUCKET}/x", "--endpoint", honest.endpoint],
    ]
    codes = []
    for i, argv in enumerate(runs):
        out = tmp_path / f"r{i}.json"
        codes.append(main([*argv, "--report", str(out), *FAST]))
        if out.exists():
            reports.append(out.read_text())
    assert codes == [1, 1, 2]
    captured = capsys.readouterr()
    missing_bucket = json.loads(reports[1])
    # every check that reaches the bucket fails; only those that need no request pass
    passed = {c["name"] for c in missing_bucket["checks"] if c["result"] == PASS}
    assert {c["result"] for c in missing_bucket["checks"]} == {FAIL, NOT_DECLARED, PASS}
    assert passed == {"unsafe-keys", "declared-primitive"}
    assert "does not exist" in reports[1]
    for text in (captured.out, captured.err, *reports):
        assert secret not in text


def test_run_level1_is_callable_from_a_store_test_suite(tmp_path: Path) -> None:
    store = open_store(str(tmp_path))
    report = run_level1(store, writers=4, large_mib=6)
    assert report.certified, report.table()
    assert report.exit_code == 0
    assert report.row("no-overwrite").result == PASS
    assert "certified: local (rename)" in report.table()
    assert list(tmp_path.iterdir()) == []


# --- GCS (fake-gcs-server) and Azure Blob (Azurite), Level 1 -----------------------------------


@pytest.fixture
def azure_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AZURE_STORAGE_ACCOUNT_NAME", EMULATOR_ACCOUNT)
    monkeypatch.setenv("AZURE_STORAGE_ACCOUNT_KEY", EMULATOR_KEY)


def _gcs_upload(endpoint: str, name: str, upload_type: str, data: bytes) -> int:
    """One JSON-API upload with ifGenerationMatch=0 on one of the three upload paths."""
    base = f"{endpoint}/upload/storage/v1/b/conformance/o"
    query = {"ifGenerationMatch": "0", "uploadType": upload_type}
    if upload_type == "media":
        return requests.post(base, params={**query, "name": name}, data=data).status_code
    if upload_type == "multipart":
        body = (
            b'--B\r\nContent-Type: application/json\r\n\r\n{"name": "' + name.encode() + b'"}'
            b"\r\n--B\r\nContent-Type: application/octet-stream\r\n\r\n" + data + b"\r\n--B--\r\n"
        )
        headers = {"Content-Type": "multipart/related; boundary=B"}
        return requests.post(base, params=query, data=body, headers=headers).status_code
    started = requests.post(base, params={**query, "name": name}, json={"name": name})
    if started.status_code != 200:
        return started.status_code
    return requests.put(started.headers["Location"], data=data).status_code


def test_what_fake_gcs_server_does_with_if_generation_match(fake_gcs: FakeGcs) -> None:
    """The emulator honours the precondition on multipart uploads only (docs/adapters.md);
    the gcs adapter creates every object that way. If this changes, update the docs."""
    second = {}
    for upload_type in ("multipart", "media", "resumable"):
        name = f"probe/{uuid.uuid4().hex}-{upload_type}"
        assert _gcs_upload(fake_gcs.endpoint, name, upload_type, b"one") == 200
        second[upload_type] = _gcs_upload(fake_gcs.endpoint, name, upload_type, b"two")
    assert second == {"multipart": 412, "media": 200, "resumable": 200}
    # the XML API (obstore's GCS client) is not served
    xml = requests.put(
        f"{fake_gcs.endpoint}/conformance/probe/xml",
        data=b"x",
        headers={"x-goog-if-generation-match": "0"},
    )
    assert xml.status_code >= 400


def test_gcs_through_fake_gcs_server_is_certified_at_level_1(
    fake_gcs: FakeGcs, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report.json"
    url = f"gs://conformance/runs/{uuid.uuid4().hex[:12]}"
    code = main(["--store", url, "--endpoint", fake_gcs.endpoint, "--report", str(out), *FAST])
    printed = capsys.readouterr().out
    assert code == 0, printed
    report = json.loads(out.read_text())
    assert report["adapter"] == "gcs" and report["certified"] is True
    got = results(report)
    assert got["exclusive-create-race"] == PASS and got["conditional-put-probe"] == PASS
    assert all(got[name] == NOT_DECLARED for name in MULTIPART_ROWS)
    assert FAIL not in got.values() and report["cleanup"]["left"] == []
    store = open_store(url, endpoint=fake_gcs.endpoint)
    assert store.list() == [] and store.list("_txcommit/probe") == []


def test_azure_blob_through_azurite_is_certified_at_level_1(
    azurite: Azurite, azure_env: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report.json"
    url = f"az://conformance/runs/{uuid.uuid4().hex[:12]}"
    code = main(["--store", url, "--endpoint", azurite.endpoint, "--report", str(out), *FAST])
    printed = capsys.readouterr().out
    assert code == 0, printed
    report = json.loads(out.read_text())
    assert report["adapter"] == "azure" and report["certified"] is True
    got = results(report)
    assert got["exclusive-create-race"] == PASS and got["conditional-put-probe"] == PASS
    assert FAIL not in got.values() and report["cleanup"]["left"] == []
    assert EMULATOR_KEY not in printed and EMULATOR_KEY not in out.read_text()


def test_level_2_is_not_available_without_a_jvm_adapter() -> None:
    """Every shipped adapter with a Python store has a JVM adapter too; one without would get
    "not available" on every Level 2 row (never a pass), saying why."""
    from dataclasses import replace

    from txcommit.adapters import declaration_named
    from txcommit.conformance.protocol import unavailable_reason

    azure = declaration_named("azure")
    assert unavailable_reason(azure) is None
    reason = unavailable_reason(replace(azure, implementations=("python",)))
    assert reason is not None and reason.startswith("not available: no JVM adapter")
    assert "implemented in python only" in reason

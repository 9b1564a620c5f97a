"""Adapter declarations (<name>.json in each store's folder) and the registry that picks an
adapter for a URL."""

from __future__ import annotations

import dataclasses
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from txcommit.adapters import (
    AdapterDeclaration,
    LocalStore,
    adapter_for,
    declaration_named,
    known_adapters,
    load_declaration,
    open_store,
    overrides_from_conf,
    parse_declaration,
    scheme_of,
)
from txcommit.adapters.registry import implementation
from txcommit.errors import (
    InvalidDeclarationError,
    UnknownAdapterError,
    UnsupportedStoreError,
)
from txcommit_store_hdfs.store import HdfsStore
from txcommit_store_s3.devkit.emulator import LocalS3
from txcommit_store_s3.store import S3MultipartStore, S3Store

from support.s3 import fresh_s3_url, s3_options

REPO = Path(__file__).resolve().parents[3]

VALID = {
    "format": "txcommit-adapter",
    "formatVersion": 1,
    "name": "x",
    "title": "X",
    "primitive": "rename",
    "exclusiveCreate": True,
    "listing": "consistent",
    "schemes": ["x"],
    "defaultFor": [],
}
WHERE = "adapters/x/adapter.json"


def declaration_json(**changes: Any) -> str:
    d = dict(VALID)
    for k, v in changes.items():
        if v is None:
            d.pop(k)
        else:
            d[k] = v
    return json.dumps(d)


def test_the_shipped_declarations_load_with_their_promises() -> None:
    by_name = {d.name: d for d in known_adapters()}
    assert sorted(by_name) == ["azure", "gcs", "hdfs", "local", "s3", "s3-multipart"]
    assert by_name["local"] == AdapterDeclaration(
        name="local",
        title=by_name["local"].title,
        primitive="rename",
        exclusive_create=True,
        listing="consistent",
        schemes=("file",),
        default_for=("file",),
        notes=by_name["local"].notes,
        implementations=("jvm", "python"),
    )
    assert by_name["s3"].primitive == "conditional-put"
    assert by_name["s3"].default_for == ("s3a", "s3")
    assert by_name["s3-multipart"].primitive == "multipart-complete"
    assert by_name["s3-multipart"].default_for == ()
    assert "link(2)" in by_name["local"].notes
    assert by_name["gcs"].primitive == by_name["azure"].primitive == "conditional-put"
    assert by_name["gcs"].default_for == ("gs",)
    assert by_name["azure"].default_for == ("az", "abfs", "abfss")


def test_the_declared_implementations_match_what_each_side_ships() -> None:
    """A declaration says where the adapter exists: the Python registry has exactly the
    adapters declaring ``python``, and sbt packages exactly those declaring ``jvm`` (the
    plugin's in build.sbt, a store module's in its folder's build description)."""
    from txcommit.stores import python_stores

    declared = {d.name: d for d in known_adapters()}
    assert sorted(python_stores()) == sorted(n for n, d in declared.items() if d.in_python)
    builds = [REPO / "build.sbt", *sorted(REPO.glob("adapters/*/jvm/build/*.scala"))]
    packaged = [
        group
        for build in builds
        for group in re.findall(r"declarations(?: = Seq)?\((\"[^)]*)\)", build.read_text())
    ]
    names = (n.strip().strip('"') for group in packaged for n in group.split(","))
    in_sbt = sorted(n for n in names if "/" not in n)  # a folder is not a declaration
    assert in_sbt == sorted(n for n, d in declared.items() if d.on_jvm)
    assert declared["gcs"].on_jvm and declared["azure"].on_jvm


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"primitive": "teleport"}, "unknown primitive 'teleport'"),
        ({"listing": "sometimes"}, "unknown listing 'sometimes'"),
        ({"defaultFor": ["y"]}, "'defaultFor' names scheme 'y'"),
        ({"schemes": []}, "'schemes' is empty"),
        ({"schemes": ["x", 3]}, "'schemes' must hold strings only (found 3)"),
        ({"formatVersion": 2}, "'formatVersion' must be 1"),
        ({"formatVersion": True}, "'formatVersion' must be 1"),
        ({"format": "other"}, "'format' must be 'txcommit-adapter'"),
        ({"exclusiveCreate": "yes"}, "'exclusiveCreate' is missing or not true/false"),
        ({"title": None}, "'title' is missing or not a string (found nothing)"),
        ({"name": "y"}, "'name' is 'y' but its store's descriptor names 'x'"),
        ({"notes": 5}, "'notes' must be a string"),
        ({"implementations": []}, "'implementations' is empty"),
        ({"implementations": ["go"]}, "unknown implementation 'go'"),
    ],
)
def test_an_invalid_declaration_is_refused_naming_the_file_and_the_key(
    changes: dict[str, Any], expected: str
) -> None:
    with pytest.raises(InvalidDeclarationError) as caught:
        parse_declaration(declaration_json(**changes), WHERE, expected_name="x")
    assert WHERE in str(caught.value) and expected in str(caught.value)


def test_a_declaration_that_is_not_json_is_refused_naming_the_file() -> None:
    for bad in (declaration_json()[:40], "[1, 2]", b"\xff\xfe\x00"):
        with pytest.raises(InvalidDeclarationError, match="adapters/x/adapter.json"):
            parse_declaration(bad, WHERE)
    assert parse_declaration(declaration_json(), WHERE).summary == "x (rename; schemes x)"


def test_a_declaration_is_read_from_the_file_its_descriptor_names(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text(declaration_json())
    assert load_declaration(tmp_path / "x.json", "x").name == "x"
    (tmp_path / "y.json").write_text(declaration_json(name="y", primitive="warp"))
    with pytest.raises(InvalidDeclarationError) as caught:
        load_declaration(tmp_path / "y.json", "y")
    assert "y.json" in str(caught.value) and "'warp'" in str(caught.value)
    with pytest.raises(InvalidDeclarationError, match="its store's descriptor names 'z'"):
        load_declaration(tmp_path / "x.json", "z")


# --- registry -------------------------------------------------------------------------------


def test_the_scheme_picks_the_default_adapter() -> None:
    assert scheme_of("/data/t") == "file" and scheme_of("rel/t") == "file"
    assert scheme_of("C:\\data\\t") == "file" and scheme_of("S3A://b/t") == "s3a"
    assert adapter_for("/data/events").name == "local"
    assert adapter_for("file:///data/events").name == "local"
    assert adapter_for("s3://b/t").name == "s3"
    assert adapter_for("s3a://b/t").name == "s3"
    assert adapter_for("hdfs://nn/t").name == "hdfs"


def test_an_override_per_scheme_wins() -> None:
    assert adapter_for("s3a://b/t", {"s3a": "s3-multipart"}).name == "s3-multipart"
    assert adapter_for("s3://b/t", {"s3a": "s3-multipart"}).name == "s3"
    conf = {"spark.txcommit.adapter.s3": " s3-multipart ", "spark.other": "x"}
    assert overrides_from_conf(conf) == {"s3": "s3-multipart"}
    assert adapter_for("s3://b/t", conf).name == "s3-multipart"
    assert adapter_for("/t", {"file": "local"}).name == "local"


def test_an_unknown_scheme_is_refused_listing_the_known_adapters() -> None:
    with pytest.raises(UnknownAdapterError) as caught:
        adapter_for("wasb://AKID:secret@bucket/t")
    message = str(caught.value)
    assert "'wasb'" in message and "spark.txcommit.adapter.wasb" in message
    assert "local (rename; schemes file)" in message
    assert "s3 (conditional-put; schemes s3a, s3)" in message
    assert "s3-multipart (multipart-complete; schemes s3a, s3)" in message
    assert "secret" not in message and "wasb://bucket/t" in message


def test_an_override_to_an_unknown_adapter_is_refused() -> None:
    with pytest.raises(UnknownAdapterError) as caught:
        adapter_for("s3://b/t", {"s3": "ftp-magic"})
    assert "'ftp-magic'" in str(caught.value) and "spark.txcommit.adapter.s3" in str(caught.value)
    assert "hdfs (rename; schemes hdfs, viewfs)" in str(caught.value)


def test_an_override_to_an_adapter_not_serving_the_scheme_is_refused() -> None:
    with pytest.raises(UnknownAdapterError) as caught:
        adapter_for("/data/t", {"file": "s3"})
    assert "does not serve scheme 'file'" in str(caught.value)
    assert "it serves s3a, s3" in str(caught.value)


def test_open_store_builds_the_adapters_python_mirror(tmp_path: Path, local_s3: LocalS3) -> None:
    local = open_store(str(tmp_path))
    assert isinstance(local, LocalStore) and local.declaration.name == "local"
    s3 = open_store(fresh_s3_url(), **s3_options(local_s3))
    assert type(s3) is S3Store and s3.declaration.name == "s3"
    multipart = open_store(fresh_s3_url("s3a"), {"s3a": "s3-multipart"}, **s3_options(local_s3))
    assert isinstance(multipart, S3MultipartStore)
    assert multipart.declaration.primitive == "multipart-complete"
    hdfs = open_store("hdfs://nn:8020/t")
    assert isinstance(hdfs, HdfsStore) and hdfs.endpoint == "http://nn:9870/webhdfs/v1"
    jvm_only = dataclasses.replace(
        declaration_named("hdfs"), name="jvm-only", implementations=("jvm",)
    )
    with pytest.raises(UnsupportedStoreError, match="'jvm-only' \\(rename\\) has no Python"):
        implementation(jvm_only)


@pytest.mark.parametrize(
    ("url", "hidden", "needs"),
    [
        ("hdfs://nn:8020/t", "requests", "needs requests"),
        ("gs://bucket/t", "requests", "needs requests"),
        ("gs://bucket/t", "google.auth", "needs google-auth for Google Cloud credentials"),
    ],
)
def test_an_adapter_without_its_optional_package_names_the_extra_to_install(
    url: str, hidden: str, needs: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the local and S3 stores come with the base package; a reader of an hdfs:// or
    gs:// table without the extra learns what to install, not a bare ImportError."""
    monkeypatch.delenv("STORAGE_EMULATOR_HOST", raising=False)
    monkeypatch.setitem(sys.modules, hidden, None)  # `import hidden` now raises ImportError
    scheme = url.split(":", 1)[0]
    with pytest.raises(UnsupportedStoreError) as caught:
        open_store(url)
    message = str(caught.value)
    assert needs in message and f"pip install 'txcommit[{scheme.replace('gs', 'gcs')}]'" in message
    assert url in message

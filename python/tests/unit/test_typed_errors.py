"""The server plugin's errors, as Spark Connect sends them (gRPC error details: the root's
condition and SQLSTATE, and each error of the cause chain), come out of pyspark's own
converter as txcommit's typed exceptions once txcommit is imported
(tests/e2e/test_typed_errors.py checks it against a real server and a classic job)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import txcommit
from txcommit.errors import CONDITIONS, SERVER_ERRORS, translate
from txcommit.testing.vectors import load

pytest.importorskip("pyspark.errors.exceptions.connect")
from google.rpc.error_details_pb2 import ErrorInfo  # type: ignore[import-untyped]
from pyspark.errors import PySparkException
from pyspark.errors.exceptions import connect
from pyspark.sql.connect import proto
from pyspark.sql.connect.client import core

CONFLICT = (
    "txcommit: txn mwwozi9ll2g6ehh8 on file:/data/t conflicts with txn abc (it replaced "
    "partitions of 'k=1') after this job started. This job's files stay hidden; re-run it."
)


def _root_error(jvm_class: str, condition: str, state: str, message: str) -> Any:
    """What the server sends for one of the plugin's errors raised on the driver: the root."""
    info = ErrorInfo(reason=jvm_class, domain="org.apache.spark")
    info.metadata["classes"] = json.dumps([jvm_class, "java.io.IOException"])
    info.metadata["errorClass"] = condition
    info.metadata["sqlState"] = state
    info.metadata["messageParameters"] = json.dumps({"message": message})
    return info


def _chain(*errors: tuple[str, str | None, str | None, str]) -> tuple[Any, Any]:
    """A chain (root first) of (class, condition, SQLSTATE, message), as fetched details."""
    root_class, root_condition, _, _ = errors[0]
    info = ErrorInfo(reason=root_class, domain="org.apache.spark")
    info.metadata["classes"] = json.dumps([root_class])
    if root_condition:
        info.metadata["errorClass"] = root_condition
    resp = proto.FetchErrorDetailsResponse()
    for i, (cls, condition, state, message) in enumerate(errors):
        error = resp.errors.add()
        error.error_type_hierarchy.append(cls)
        error.message = message
        if condition:
            error.spark_throwable.error_class = condition
            error.spark_throwable.message_parameters["message"] = message
        if state:
            error.spark_throwable.sql_state = state
        if i + 1 < len(errors):
            error.cause_idx = i + 1
    resp.root_error_idx = 0
    return info, resp


def test_the_table_of_conditions_is_the_jvms() -> None:
    assert load("names.json")["errors"] == {
        name: {"condition": e.condition, "sqlState": e.sql_state}
        for name, e in SERVER_ERRORS.items()
    }
    assert len(CONDITIONS) == len(SERVER_ERRORS), "two exceptions share a condition"


def test_every_exception_of_the_plugin_has_a_python_twin() -> None:
    source = Path(__file__).resolve().parents[3] / "plugin-jvm/src/main/scala/io/txcommit"
    declared = set(
        re.findall(r"class (\w+Exception)\b", (source / "TxCommitException.scala").read_text())
    )
    assert declared - {"TxCommitException"} == set(SERVER_ERRORS)


@pytest.mark.parametrize("jvm_class", sorted(SERVER_ERRORS))
def test_each_server_error_has_its_type(jvm_class: str) -> None:
    error = SERVER_ERRORS[jvm_class]
    info = _root_error(
        f"io.txcommit.{jvm_class}", error.condition, error.sql_state, "txcommit: why"
    )
    raised = connect.convert_exception(info, "txcommit: why", None)
    assert type(raised).__name__ == error.cls.__name__
    assert isinstance(raised, error.cls) and isinstance(raised, txcommit.TxCommitError)
    assert isinstance(raised, PySparkException), "still pyspark's exception"
    assert (raised.getCondition(), raised.getSqlState()) == (error.condition, error.sql_state)
    assert str(raised) == "txcommit: why"
    assert raised.server_class == f"io.txcommit.{jvm_class}"


def test_pysparks_client_raises_through_the_wrapped_converter() -> None:
    assert core.convert_exception is connect.convert_exception
    assert connect.convert_exception.__wrapped__ is not None  # type: ignore[attr-defined]


def test_a_fenced_task_found_below_sparks_wrappers() -> None:
    """A task's error reaches the client as a cause: job aborted <- task write failed <- ours."""
    fenced = "txcommit: txn abc on file:/t was fenced by VACUUM at 2026-11-25T10:00:00Z"
    info, resp = _chain(
        ("org.apache.spark.SparkException", None, None, "Job aborted due to stage failure"),
        ("org.apache.spark.SparkException", "TASK_WRITE_FAILED", "58030", "Task failed"),
        ("io.txcommit.FencedException", "TXCOMMIT_FENCED", "40000", fenced),
    )
    raised = connect.convert_exception(info, "Job aborted", resp)
    assert isinstance(raised, txcommit.FencedError)
    assert isinstance(raised, txcommit.CommitConflictError)
    assert isinstance(raised, connect.SparkException), "the class pyspark chose for the root"
    assert (raised.getCondition(), raised.getSqlState()) == ("TXCOMMIT_FENCED", "40000")
    assert str(raised) == fenced
    assert raised.server_class == "io.txcommit.FencedException"


def test_a_conflict_is_not_a_fence() -> None:
    info = _root_error(
        "io.txcommit.CommitConflictException", "TXCOMMIT_COMMIT_CONFLICT", "40001", CONFLICT
    )
    raised = connect.convert_exception(info, CONFLICT, None)
    assert isinstance(raised, txcommit.CommitConflictError)
    assert not isinstance(raised, txcommit.FencedError)


def test_other_errors_are_pysparks_own() -> None:
    info, resp = _chain(
        (
            "org.apache.spark.sql.AnalysisException",
            "UNRESOLVED_COLUMN.WITHOUT_SUGGESTION",
            "42703",
            "[UNRESOLVED_COLUMN] no_such_column",
        ),
    )
    raised = connect.convert_exception(info, "[UNRESOLVED_COLUMN]", resp)
    assert type(raised) is connect.AnalysisException
    # A message that merely names the plugin is no plugin error: conditions decide, not text.
    info, resp = _chain(
        ("java.io.IOException", None, None, "io.txcommit.CommitConflictException: txcommit: x"),
    )
    assert not isinstance(connect.convert_exception(info, "x", resp), txcommit.TxCommitError)
    assert translate(ValueError("io.txcommit.CommitConflictException: x")) is None


def test_typed_errors_keeps_working_for_errors_built_elsewhere() -> None:
    original = connect.UnknownException(
        CONFLICT, errorClass="TXCOMMIT_COMMIT_CONFLICT", messageParameters={}, sql_state="40001"
    )
    with pytest.raises(txcommit.CommitConflictError) as caught, txcommit.typed_errors():
        raise original
    assert caught.value.__cause__ is original and str(caught.value) == CONFLICT
    other = connect.AnalysisException("[UNRESOLVED_COLUMN] no_such_column")
    with pytest.raises(connect.AnalysisException) as passed, txcommit.typed_errors():
        raise other
    assert passed.value is other

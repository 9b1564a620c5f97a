"""The server plugin's errors, as pyspark's Connect client surfaces them, become txcommit's
typed exceptions (tests/e2e/test_typed_errors.py checks it against a real server)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import txcommit
from txcommit.errors import SERVER_ERRORS, translate

pytest.importorskip("pyspark.errors.exceptions.connect")
from pyspark.errors.exceptions.connect import (
    AnalysisException,
    SparkException,
    UnknownException,
)

CONFLICT = (
    "txcommit: txn mwwozi9ll2g6ehh8 on file:/data/t conflicts with txn abc (it replaced "
    "partitions of 'k=1') after this job started. This job's files stay hidden; re-run it."
)


def _as_server_sends(cls_name: str, message: str) -> UnknownException:
    """What pyspark raises for a txcommit error at the root (the JVM class as its reason)."""
    return UnknownException(message, reason=f"io.txcommit.{cls_name}")


@pytest.mark.parametrize("jvm_class", sorted(SERVER_ERRORS))
def test_each_server_error_has_its_type(jvm_class: str) -> None:
    typed = translate(_as_server_sends(jvm_class, "txcommit: why and what to do"))
    assert type(typed) is SERVER_ERRORS[jvm_class]
    assert isinstance(typed, txcommit.TxCommitError)
    assert str(typed) == "txcommit: why and what to do"
    assert typed.server_class == f"io.txcommit.{jvm_class}"


def test_every_exception_of_the_plugin_has_a_python_twin() -> None:
    source = Path(__file__).resolve().parents[3] / "plugin-jvm/src/main/scala/io/txcommit"
    declared = set(
        re.findall(r"class (\w+Exception)\b", (source / "TxCommitException.scala").read_text())
    )
    assert declared - {"TxCommitException"} == set(SERVER_ERRORS)


def test_a_conflict_as_the_client_gets_it() -> None:
    typed = translate(_as_server_sends("CommitConflictException", CONFLICT))
    assert isinstance(typed, txcommit.CommitConflictError)
    assert not isinstance(typed, txcommit.FencedError)
    assert str(typed) == CONFLICT


def test_a_fenced_transaction_is_a_conflict_too() -> None:
    message = "txcommit: txn abc on file:/t was fenced by VACUUM at 2026-11-25T10:00:00Z: ..."
    typed = translate(_as_server_sends("CommitConflictException", message))
    assert isinstance(typed, txcommit.FencedError)
    assert isinstance(typed, txcommit.CommitConflictError)


def test_a_cause_found_in_the_jvm_stack_trace() -> None:
    trace = (
        "org.apache.spark.SparkException\n\tat org.apache.spark.X.y(X.scala:1)\n"
        "Caused by: io.txcommit.CommitOutcomeUnknownException: txcommit: txn abc may have "
        "committed: check with TXCOMMIT HISTORY\n\tat io.txcommit.Z.z(Z.scala:2)"
    )
    exc = SparkException("Job aborted.", server_stacktrace=trace)
    typed = translate(exc)
    assert isinstance(typed, txcommit.CommitOutcomeUnknownError)
    assert str(typed) == "txcommit: txn abc may have committed: check with TXCOMMIT HISTORY"


def test_other_errors_are_not_translated() -> None:
    assert translate(AnalysisException("[UNRESOLVED_COLUMN] no_such_column")) is None
    assert translate(ValueError("io.txcommit.NoSuchThingException: x")) is None


def test_typed_errors_raises_the_twin_with_the_original_as_cause() -> None:
    original = _as_server_sends("CommitConflictException", CONFLICT)
    with pytest.raises(txcommit.CommitConflictError) as caught, txcommit.typed_errors():
        raise original
    assert caught.value.__cause__ is original


def test_typed_errors_lets_other_errors_through() -> None:
    original = AnalysisException("[UNRESOLVED_COLUMN] no_such_column")
    with pytest.raises(AnalysisException) as caught, txcommit.typed_errors():
        raise original
    assert caught.value is original


def test_typed_errors_is_a_decorator_too() -> None:
    @txcommit.typed_errors()
    def write() -> None:
        raise _as_server_sends("WriteIdCommittedException", "txcommit: write id load-1 ...")

    with pytest.raises(txcommit.WriteIdCommittedError):
        write()

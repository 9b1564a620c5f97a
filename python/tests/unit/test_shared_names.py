"""The names ``txcommit._names`` spells again are the JVM's: both sides are checked against
``conformance/vectors/names.json`` (the JVM in ``SharedNamesSuite``)."""

from __future__ import annotations

from txcommit import _names
from txcommit.testing.vectors import load

NAMES = load("names.json")


def test_conf_keys_are_the_jvms() -> None:
    assert NAMES["confs"] == {
        "ReadFilter": _names.READ_FILTER_CONF,
        "IgnoreCorruptRecords": _names.IGNORE_CORRUPT_RECORDS_CONF,
        "NewTableReads": _names.NEW_TABLE_READS_CONF,
        "CleanupAttempts": _names.CLEANUP_ATTEMPTS_CONF,
        "HaltAt": _names.HALT_AT_CONF,
        "KeepAbortedFiles": _names.KEEP_ABORTED_FILES_CONF,
        "AllowFaultInjection": _names.ALLOW_FAULT_INJECTION_CONF,
    }


def test_class_names_are_the_jvms() -> None:
    assert NAMES["classes"] == {
        "ProtocolClass": _names.PROTOCOL_CLASS,
        "PluginClass": _names.PLUGIN_CLASS,
        "ExtensionsClass": _names.EXTENSIONS_CLASS,
        "CheckpointFileManagerClass": _names.CHECKPOINT_FILE_MANAGER_CLASS,
    }


def test_fault_points_are_the_jvms_in_order() -> None:
    assert list(_names.HALT_POINTS) == NAMES["haltPoints"]


def test_level2_fault_points_are_the_jvms() -> None:
    from txcommit.conformance.protocol import VISIBLE_AFTER_HALT

    assert set(VISIBLE_AFTER_HALT) <= set(_names.HALT_POINTS)


def test_stage_names_are_the_jvms() -> None:
    stages = NAMES["stages"]
    assert stages["CheckConflicts"] == _names.CHECK_CONFLICTS_STAGE
    assert stages["PublishCommitRecord"] == _names.PUBLISH_COMMIT_RECORD_STAGE
    assert stages["PublishReplaceRecord"] == _names.PUBLISH_REPLACE_RECORD_STAGE
    assert stages["CopyReplaceRecord"] == _names.COPY_REPLACE_RECORD_STAGE

"""The maintenance wrappers and `txcommit vacuum` without a server: statements and help."""

from __future__ import annotations

import pytest

from txcommit import cli
from txcommit._console import text
from txcommit.maintenance import alter_statement, quote, vacuum_statement


def test_statements_quote_paths_and_carry_every_option():
    assert quote("/data/it's") == "'/data/it''s'"
    assert vacuum_statement("s3a://b/t") == "TXCOMMIT VACUUM 's3a://b/t'"
    assert (
        vacuum_statement("/t", retain_hours=72, dry_run=True, force=True)
        == "TXCOMMIT VACUUM '/t' RETAIN 72 HOURS DRY RUN FORCE"
    )
    assert vacuum_statement("/t", retain_hours=0.5) == "TXCOMMIT VACUUM '/t' RETAIN 0.5 HOURS"
    # A horizon of seconds, written without an exponent (the statement has no exponent syntax).
    assert vacuum_statement("/t", retain_hours=1e-5) == "TXCOMMIT VACUUM '/t' RETAIN 0.00001 HOURS"


@pytest.mark.parametrize("hours", [-1, float("nan"), float("inf")])
def test_a_nonsense_horizon_is_refused_before_reaching_the_server(hours: float):
    with pytest.raises(ValueError, match="retain_hours"):
        vacuum_statement("/t", retain_hours=hours)
    with pytest.raises(ValueError, match="empty"):
        vacuum_statement("  ")


def test_the_alter_statement_quotes_the_path_and_every_key_and_value():
    assert (
        alter_statement("/t's", {"manifests": "true", "it's": "x"})
        == "TXCOMMIT ALTER '/t''s' SET ('manifests' = 'true', 'it''s' = 'x')"
    )
    with pytest.raises(ValueError, match="no table property"):
        alter_statement("/t", {})


def test_vacuum_cli_help_explains_every_flag(capsys: pytest.CaptureFixture[str]):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["vacuum", "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for flag in ("PATH", "--remote", "--retain-hours", "--dry-run", "--force"):
        assert flag in out
    assert "vacuum" in cli.PASSTHROUGH


def test_vacuum_cli_needs_a_remote_and_renders_tables(capsys: pytest.CaptureFixture[str]):
    with pytest.raises(SystemExit):
        cli.main(["vacuum", "/t"])
    assert "--remote" in capsys.readouterr().err
    table = text(("path", "bytes"), [("a", 1), ("bbb", None)], rule=True)
    assert table.splitlines() == ["path  bytes", "----  -----", "a     1", "bbb"]

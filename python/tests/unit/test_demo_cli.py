"""`txcommit demo`'s arguments: bad sizes are refused before any server starts, naming the flag."""

from __future__ import annotations

import pytest

from txcommit.bench.demo import main


@pytest.mark.parametrize("flag", ["--rows", "--files"])
def test_a_size_below_one_is_refused_naming_the_flag(
    flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([flag, "0"]) == 2
    assert f"txcommit demo: {flag} must be 1 or more, got 0" in capsys.readouterr().err

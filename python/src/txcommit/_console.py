"""What every command draws: its tables (aligned text for the terminal, Markdown for reports)
and a one-line progress report on stderr; and how a command that ends with a verdict leaves.

    >>> print(text(["SIZE", "PATH"], [["42", "k=1/a.parquet"]]))
    SIZE  PATH
    42    k=1/a.parquet
    >>> print(text(["check", "result"], [["no-overwrite", "pass"]], sep=" | ", rule=True))
    check        | result
    -------------+-------
    no-overwrite | pass

Cells are shown with ``str`` (``None`` as an empty cell), control characters escaped (a TAB
in a path as ``\\t``: raw, it would break the columns or steer the terminal); a caller formats
numbers itself.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import time
from collections.abc import Iterable, Sequence
from typing import Any, NoReturn, TextIO

from txcommit.paths import printable


def _cell(value: Any) -> str:
    return "" if value is None else printable(str(value))


def text(
    headers: Sequence[Any],
    rows: Iterable[Sequence[Any]],
    *,
    sep: str = "  ",
    rule: bool = False,
    pad: bool = False,
) -> str:
    """Columns left-aligned and padded to their widest cell, trailing spaces stripped.

    ``sep`` goes between columns (``"  "`` or ``" | "``); ``rule`` adds a line of dashes under
    the headers, crossing a ``|`` with ``+``; ``pad`` adds a space before the first column and
    after the last (a rule then reaches one dash further on each side).
    """
    cells = [[_cell(c) for c in headers], *([_cell(c) for c in row] for row in rows)]
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
    edge = " " if pad else ""

    def line(row: Sequence[str]) -> str:
        return (
            edge + sep.join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + edge
        ).rstrip()

    out = [line(cells[0])]
    if rule:
        cross = sep.replace(" ", "-").replace("|", "+") if "|" in sep else sep
        ends = "-" * len(edge)
        out.append(ends + cross.join("-" * w for w in widths) + ends)
    out += [line(row) for row in cells[1:]]
    return "\n".join(out)


def markdown(
    headers: Sequence[Any], rows: Iterable[Sequence[Any]], *, right: Sequence[bool] = ()
) -> str:
    """A Markdown table; ``right[i]`` right-aligns column ``i`` (``---:``)."""
    aligns = [i < len(right) and right[i] for i in range(len(headers))]
    lines = ["| " + " | ".join(_cell(h) for h in headers) + " |"]
    lines.append("|" + "".join("---:|" if r else "---|" for r in aligns))
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


class Progress:
    """A one-line progress report on ``stream`` (stderr), rewritten at most every
    ``interval`` seconds; silent unless ``enabled``."""

    def __init__(self, enabled: bool, stream: TextIO | None = None, interval: float = 0.2) -> None:
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self._last = 0.0
        self._shown = False

    def __call__(self, message: str, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if force or now - self._last >= self.interval:
            self._last = now
            self.stream.write(f"\rtxcommit: {message}\x1b[K")
            self.stream.flush()
            self._shown = True

    def done(self) -> None:
        if self._shown:
            self.stream.write("\n")
            self.stream.flush()
            self._shown = False


def print_error(error: BaseException) -> None:
    """``error``'s message as one line on stderr, led by "txcommit:" once."""
    message = str(error)
    print(message if message.startswith("txcommit:") else f"txcommit: {message}", file=sys.stderr)


def leave(code: int) -> NoReturn:
    """Flush what was printed and logged, then exit with ``code`` at once."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


__all__ = ["Progress", "leave", "markdown", "print_error", "text"]

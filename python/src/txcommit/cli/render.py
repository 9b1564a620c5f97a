"""The one table renderer of every command: aligned text for the terminal, Markdown for reports.

    >>> print(text(["SIZE", "PATH"], [["42", "k=1/a.parquet"]]))
    SIZE  PATH
    42    k=1/a.parquet
    >>> print(text(["check", "result"], [["no-overwrite", "pass"]], sep=" | ", rule=True))
    check        | result
    -------------+-------
    no-overwrite | pass

Cells are shown with ``str`` (``None`` as an empty cell); a caller formats numbers itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any


def _cell(value: Any) -> str:
    return "" if value is None else str(value)


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


__all__ = ["markdown", "text"]

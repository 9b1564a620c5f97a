"""JSON as the JVM plugin's Jackson writes and reads it: the layout of Jackson's default pretty
printer (so a record or checkpoint written here is byte for byte the JVM's) and strict decoding
(NaN and Infinity are not JSON; a missing or mistyped field is the caller's corrupt-file error)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any


def json_string(s: str) -> str:
    """A JSON string as Jackson writes it: UTF-8 as is, short escapes, else ``\\u00XX``."""
    out = ['"']
    for ch in s:
        code = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif code < 0x20:
            short = {8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r"}.get(code)
            out.append(short if short else f"\\u{code:04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


@dataclass(frozen=True)
class JsonObject:
    """A nested JSON object as a field's value (its key/value pairs, in order)."""

    fields: list[tuple[str, Any]]


def pretty(fields: Sequence[tuple[str, Any]], depth: int) -> str:
    """An object in the layout of Jackson's ``DefaultPrettyPrinter`` (2-space indent,
    ``"key" : value``, arrays as ``[ {`` ... ``}, {`` ... ``} ]``, an empty array ``[ ]``)."""
    pad = "  " * (depth + 1)
    lines = []
    for key, value in fields:
        if isinstance(value, list):
            if not value:
                rendered = "[ ]"
            else:
                rendered = "[ " + ", ".join(_array_value(v, depth + 1) for v in value) + " ]"
        elif isinstance(value, str):
            rendered = json_string(value)
        elif value is None:
            rendered = "null"
        elif isinstance(value, JsonObject):
            rendered = pretty(value.fields, depth + 1)
        else:
            rendered = str(int(value))
        lines.append(f"{pad}{json_string(key)} : {rendered}")
    return "{\n" + ",\n".join(lines) + "\n" + "  " * depth + "}"


def _array_value(value: Any, depth: int) -> str:
    """An array element: a string, or an object (a list of key/value pairs)."""
    return json_string(value) if isinstance(value, str) else pretty(value, depth)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def strict_object(data: bytes, corrupt: Callable[[str], Exception]) -> dict[str, Any]:
    """``data`` as a JSON object, strictly (NaN and Infinity are not JSON), or ``corrupt``."""
    try:
        root = json.loads(data, parse_constant=_refuse_constant)
    except (ValueError, TypeError) as e:
        raise corrupt(f"it is not complete JSON ({len(data)} bytes; truncated?)") from e
    if not isinstance(root, dict):
        raise corrupt("it is not a JSON object")
    return root


def text_field(node: dict[str, Any], name: str, corrupt: Callable[[str], Exception]) -> str:
    v = node.get(name)
    if not isinstance(v, str):
        raise corrupt(f"field '{name}' is missing or not a string")
    return v


def long_field(node: dict[str, Any], name: str, corrupt: Callable[[str], Exception]) -> int:
    """A JSON integer that fits a JVM long (booleans are not numbers here)."""
    v = node.get(name)
    if isinstance(v, bool) or not isinstance(v, int) or not -(2**63) <= v < 2**63:
        raise corrupt(f"field '{name}' is missing or not a number")
    return v


def check_format(
    root: dict[str, Any], fmt: str, version: int, corrupt: Callable[[str], Exception]
) -> None:
    """The ``format`` and ``version`` fields every log file of txcommit opens with: a file of
    another format, or of a version this txcommit does not read, is ``corrupt``."""
    if text_field(root, "format", corrupt) != fmt:
        raise corrupt(f"field 'format' is not {fmt}")
    found = long_field(root, "version", corrupt)
    if found != version:
        raise corrupt(
            f"it has format version {found}, which this txcommit (reads version "
            f"{version}) does not understand; upgrade the plugin"
        )

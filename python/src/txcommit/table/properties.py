"""Table properties (``TableProperties.scala``): ``_txcommit/properties/<number>.json`` holds
every property of a table as of change ``number``, created exclusively, never rewritten; the
highest number is in force. Decoded as strictly as the JVM decodes it
(:class:`~txcommit.errors.CorruptTablePropertiesError`, reasons shared through
``conformance/vectors/properties.json``). Python only reads them: ``TXCOMMIT ALTER`` (through
:func:`txcommit.maintenance.set_manifests`) and the writers set them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from txcommit.errors import CorruptTablePropertiesError
from txcommit.table.jackson import (
    JsonObject,
    check_format,
    long_field,
    pretty,
    strict_object,
    text_field,
)

PROPERTIES_FORMAT = "txcommit-properties"
PROPERTIES_FORMAT_VERSION = 1
MANIFESTS = "manifests"
#: The keys this version knows, with the values each takes.
KNOWN: Mapping[str, frozenset[str]] = {MANIFESTS: frozenset({"true", "false"})}


@dataclass(frozen=True)
class TableProperties:
    """The properties in force as of change ``number``: ``values`` (keys this version does not
    know kept as written), when they were set (``set_at``, epoch ms, its writer's clock), by
    which application and plugin version."""

    number: int
    values: Mapping[str, str] = field(default_factory=dict)
    set_at: int = 0
    app_id: str | None = None
    writer: str = ""

    @property
    def manifests(self) -> bool | None:
        """Whether every commit writes the symlink manifests; None when never set."""
        value = self.values.get(MANIFESTS)
        return None if value is None else value == "true"


def decode_properties(data: bytes, where: str, number: int) -> TableProperties:
    """Decodes ``properties/<number>.json``, stored at ``where`` (named in errors)."""

    def corrupt(why: str) -> CorruptTablePropertiesError:
        return CorruptTablePropertiesError(
            f"txcommit: table properties {where} are corrupt: {why}. Writers cannot tell what the "
            "table asks of them; restore the file from a backup, or move it out of "
            "_txcommit/properties/ (the previous number is then in force) and set the "
            "properties again with TXCOMMIT ALTER."
        )

    root = strict_object(data, corrupt)
    check_format(root, PROPERTIES_FORMAT, PROPERTIES_FORMAT_VERSION, corrupt)
    recorded = long_field(root, "number", corrupt)
    if recorded != number:
        raise corrupt(f"its file name says number {number} but it records {recorded}")
    props: Any = root.get("properties")
    if not isinstance(props, dict):
        raise corrupt("field 'properties' is missing or not an object")
    values: dict[str, str] = {}
    for key, value in props.items():
        if not isinstance(value, str):
            raise corrupt(f"property '{key}' is not a string")
        allowed = KNOWN.get(key)
        if allowed is not None and value not in allowed:
            raise corrupt(f"property '{key}' is '{value}', not one of {', '.join(sorted(allowed))}")
        values[key] = value
    set_at = long_field(root, "setAt", corrupt)
    app_id = root.get("appId")
    return TableProperties(
        number=number,
        values=values,
        set_at=set_at,
        app_id=app_id if isinstance(app_id, str) else None,
        writer=text_field(root, "writer", corrupt),
    )


def encode_properties(p: TableProperties) -> bytes:
    """The properties as the JVM's ``TableProperties.encode`` writes them, byte for byte."""
    fields: list[tuple[str, Any]] = [
        ("format", PROPERTIES_FORMAT),
        ("version", PROPERTIES_FORMAT_VERSION),
        ("number", p.number),
        ("properties", JsonObject([(k, p.values[k]) for k in sorted(p.values)])),
        ("setAt", p.set_at),
    ]
    if p.app_id is not None:
        fields.append(("appId", p.app_id))
    fields.append(("writer", p.writer))
    return pretty(fields, 0).encode("utf-8")

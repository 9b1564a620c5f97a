"""Paths and URLs, below the adapters and the table format alike: safe relative paths
(``Paths.unsafeRelativePath`` of the JVM plugin), credential-free display of URLs
(``Paths.display``), joins, and the names Spark's listing skips (the log's directory among
them), so which paths are data. The cases are golden vectors the JVM loads too
(conformance/vectors/hidden-names.json, records.json).
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

#: The log's directory in a table: a hidden name, so never data.
LOG_DIR_NAME = "_txcommit"

_SCHEME_LIKE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")

# Letters, digits, `_`, `=`, `.`, `-` and `/`: no scheme (no `:`), no backslash. Such a path
# with no empty, `.` or `..` segment is safe; the names Spark gives partition directories and
# files are, so a million-entry checkpoint skips the step-by-step checks.
_PLAIN_CHARS = re.compile(r"[A-Za-z0-9_=./-]+")


# --- paths and URLs ---------------------------------------------------------------------------

# C0 and C1 control characters (Unicode category Cc): legal in a file name and an object key,
# but they break a column or steer a terminal when printed as they are.
_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x20), *range(0x7F, 0xA0))}
_CONTROLS.update({ord("\t"): "\\t", ord("\n"): "\\n", ord("\r"): "\\r"})


def printable(text: str) -> str:
    """``text`` with each control character written as its escape (TAB as ``\\t``, ESC as
    ``\\x1b``): for a path shown in a terminal, a table's column or a one-line error."""
    return text.translate(_CONTROLS)


def ascii_control(text: str) -> str | None:
    """The first ASCII control character (0x00-0x1f, 0x7f) of ``text`` as :func:`printable`
    writes it, else None."""
    return next((_CONTROLS[ord(c)] for c in text if ord(c) < 0x20 or ord(c) == 0x7F), None)


def unsafe_relative_path(relative: str) -> str | None:
    """Why ``relative`` does not name a file inside its table directory, or None if it does.

    Safe means: relative, normalised, no ``..``, ``.`` or empty segment, no scheme, no backslash
    (exactly ``Paths.unsafeRelativePath`` of the JVM plugin).
    """
    if _PLAIN_CHARS.fullmatch(relative):
        framed = f"/{relative}/"
        if "//" not in framed and "/./" not in framed and "/../" not in framed:
            return None
    if relative == "":
        return "it is empty"
    if relative.startswith("/"):
        return "it is absolute"
    if "\\" in relative:
        return "it contains a backslash"
    if _SCHEME_LIKE.match(relative):
        return "it starts with a scheme"
    segments = relative.split("/")
    if any(s in (".", "..") for s in segments):
        return "it contains '.' or '..'"
    if any(s == "" for s in segments):
        return "it contains an empty segment"
    return None


#: Schemes whose user-info part is the container (``abfss://<container>@<account>...``).
_CONTAINER_SCHEMES = ("abfs", "abfss", "wasb", "wasbs")


def display_url(url: str) -> str:
    """``url`` for logs and errors: any user-info (``key:secret@``) is removed, except an Azure
    container name (no ``:``), which names the place and is no credential."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    info = parts.netloc.rsplit("@", 1)[0]
    if parts.scheme.lower() in _CONTAINER_SCHEMES and ":" not in info:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


def join(base: str, relative: str) -> str:
    """``base/relative`` with exactly one slash between them ("" is the base itself)."""
    if relative == "":
        return base
    if base == "":
        return relative
    return base.rstrip("/") + "/" + relative


# --- data paths ----------------------------------------------------------------------------


# Spark 4.3's names, with the default spark.sql.files.ignoredPathSegmentRegex "^[._]".
_SUMMARY_PREFIXES = ("_common_metadata", "_metadata")


def hidden_name(name: str) -> bool:
    """A directory or file name Spark's listing skips (HadoopFSUtils.shouldFilterOutPathName):
    names starting with ``_`` or ``.``, except Parquet summary files (``_metadata*``,
    ``_common_metadata*``) and ``_``-prefixed partition directories (``_col=value``); and
    copies in progress (``*._COPYING_``)."""
    if name.startswith(_SUMMARY_PREFIXES):
        return False
    if name.endswith("._COPYING_"):
        return True
    if name.startswith("_") and "=" in name:
        return False
    return name.startswith(("_", "."))


def is_data_path(rel: str) -> bool:
    """Whether Spark reads the file at ``rel`` (relative to the table) as data: no segment is
    a hidden name, and the file is not a Parquet summary file (PartitioningAwareFileIndex
    lists ``_metadata*`` but never reads it). Cases: conformance/vectors/hidden-names.json."""
    # No segment starting with `_` or `.`, none with `._COPYING_`: no hidden segment and no
    # summary file (the names Spark gives a million files, tested without splitting each).
    if (
        rel
        and rel[0] not in "_."
        and "/_" not in rel
        and "/." not in rel
        and "._COPYING_" not in rel
    ):
        return True
    parts = rel.split("/")
    name = parts[-1]
    if any(hidden_name(part) for part in parts if part):
        return False
    return (name.startswith("_") and "=" in name) or not name.startswith(_SUMMARY_PREFIXES)


__all__ = [
    "LOG_DIR_NAME",
    "ascii_control",
    "display_url",
    "hidden_name",
    "is_data_path",
    "join",
    "printable",
    "unsafe_relative_path",
]

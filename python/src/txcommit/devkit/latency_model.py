"""A latency model for the local S3 endpoint: what each request would cost on real S3.

moto answers in well under a millisecond, so on it a rename (a COPY plus a DELETE per file)
costs next to nothing and every commit protocol looks equally fast. With a model in front, the
endpoint sleeps per request by operation, and per byte for a server-side copy, before moto
answers. Only the store is modelled: the client's JVM, Spark and S3A overheads stay real.

The figures are data (:data:`S3_MODEL`), documented with their sources in
``docs/benchmarks.md``. They are deliberately at the *fast* end of what S3 does (AWS quotes
roughly 100-200 ms for small objects), which understates what renames cost on S3: a
comparison that favours the rename-based committers, not txcommit.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

MB = 1024 * 1024


@dataclass(frozen=True)
class LatencyModel:
    """Per-operation latency (ms) plus a per-byte cost for server-side copies.

    ``ms_by_op`` maps the operations S3's emulator names (``classify``: PUT, COPY, LIST,
    MULTIPART_COMPLETE ...) to a fixed latency; an operation not listed costs ``default_ms``.
    A COPY or MULTIPART_PART_COPY of ``n`` bytes costs its latency plus ``n / copy_mb_per_s``
    seconds. ``scale`` multiplies everything (0 switches it off).
    """

    name: str
    ms_by_op: Mapping[str, float]
    default_ms: float = 0.0
    copy_mb_per_s: float = 0.0
    scale: float = 1.0
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False, repr=False)

    def delay_s(self, op: str, copied_bytes: int = 0) -> float:
        """Seconds the request ``op`` costs (copying ``copied_bytes`` server-side)."""
        ms = self.ms_by_op.get(op, self.default_ms)
        seconds = ms / 1000.0
        if op in COPY_OPS and self.copy_mb_per_s > 0 and copied_bytes > 0:
            seconds += copied_bytes / (self.copy_mb_per_s * MB)
        return seconds * self.scale

    def apply(self, op: str, copied_bytes: int = 0) -> float:
        """Sleep for the request's cost; return the seconds slept."""
        seconds = self.delay_s(op, copied_bytes)
        if seconds > 0:
            self.sleep(seconds)
        return seconds


COPY_OPS = frozenset({"COPY", "MULTIPART_PART_COPY"})

#: The S3 model: (operation, latency ms, where the figure comes from). Rendered into
#: docs/benchmarks.md by ``txcommit bench``; change it here, nowhere else.
S3_FIGURES: tuple[tuple[str, float, str], ...] = (
    ("HEAD", 25, "small-object request latency, fast end (AWS: roughly 100-200 ms)"),
    ("GET", 25, "first-byte latency, fast end (AWS: roughly 100-200 ms)"),
    ("LIST", 40, "ListObjectsV2 page (up to 1000 keys): a GET with server-side work"),
    ("PUT", 40, "small-object PUT, fast end (AWS: roughly 100-200 ms)"),
    ("COPY", 40, "CopyObject request latency; plus the per-byte copy cost below"),
    ("MULTIPART_PART_COPY", 40, "UploadPartCopy, as COPY"),
    ("DELETE", 25, "DeleteObject, as HEAD"),
    ("DELETE_BULK", 60, "DeleteObjects (up to 1000 keys in one POST)"),
    ("MULTIPART_INITIATE", 25, "CreateMultipartUpload, as HEAD"),
    ("MULTIPART_PART", 40, "UploadPart, as PUT"),
    ("MULTIPART_COMPLETE", 60, "CompleteMultipartUpload: the object is assembled server-side"),
    ("MULTIPART_ABORT", 25, "AbortMultipartUpload, as DELETE"),
    ("MULTIPART_LIST", 40, "ListMultipartUploads, as LIST"),
    ("MULTIPART_LIST_PARTS", 40, "ListParts, as LIST"),
)
#: Server-side copy throughput per CopyObject request, MB/s: S3 copies are O(data) (Hadoop's
#: S3A documentation: a rename is a COPY and a DELETE per object, taking time proportional to
#: the data), here at an optimistic 50 MB/s per request.
S3_COPY_MB_PER_S = 50.0
S3_DEFAULT_MS = 25.0

MODELS = ("none", "s3")


def s3_model(scale: float = 1.0, sleep: Callable[[float], None] = time.sleep) -> LatencyModel:
    """The documented S3 model (:data:`S3_FIGURES`), optionally scaled."""
    return LatencyModel(
        name="s3",
        ms_by_op={op: ms for op, ms, _ in S3_FIGURES},
        default_ms=S3_DEFAULT_MS,
        copy_mb_per_s=S3_COPY_MB_PER_S,
        scale=scale,
        sleep=sleep,
    )


def by_name(name: str, scale: float = 1.0) -> LatencyModel | None:
    """The model called ``name`` (``none`` = no model); a clear error for anything else."""
    if name == "none":
        return None
    if name == "s3":
        return s3_model(scale)
    raise ValueError(f"unknown latency model '{name}'; choose one of: {', '.join(MODELS)}")

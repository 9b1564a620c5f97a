"""PNG plots of a benchmark run (matplotlib, from the `bench` extra)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from txcommit.bench.report import REQUEST_COLUMNS, TARGET_FILES, grouped


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError as e:
        raise SystemExit(
            "txcommit bench: the plots need matplotlib: pip install 'txcommit[bench]' "
            "(or pass --no-plots)"
        ) from e
    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    return plt


def commit_time(results: dict[str, Any], out: Path) -> list[str]:
    """Job commit time against file count, per protocol, log-log; one PNG per store."""
    plt = _pyplot()
    written = []
    for store in ("s3", "local"):
        rows = [r for r in results.get("sweep", []) if r["store"] == store]
        if not rows:
            continue
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.5), sharex=True, sharey=True)
        for ax, mode in zip(axes, ("append", "overwrite"), strict=True):
            for proto in dict.fromkeys(r["protocol"] for r in rows):
                pts = sorted(
                    (r["files"], r["commit_s"])
                    for r in rows
                    if r["protocol"] == proto and r["mode"] == mode and r["commit_s"] is not None
                )
                if pts:
                    name = next(r["label"] for r in rows if r["protocol"] == proto)
                    # A commit of 0 ms cannot sit on a log axis: shown at 1 ms.
                    ax.plot(
                        [p[0] for p in pts], [max(p[1], 0.001) for p in pts], marker="o", label=name
                    )
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("output files")
            ax.set_title(f"{mode}")
            ax.grid(True, which="both", alpha=0.3)
        axes[0].set_ylabel("job commit time (s); 0 is drawn at 1 ms")
        axes[1].legend(fontsize=8)
        where = "S3 (moto + latency model)" if store == "s3" else "local file system"
        fig.suptitle(f"Job commit time vs output files, {where}")
        fig.tight_layout()
        name = f"commit-time-{store}.png"
        fig.savefig(out / name, dpi=110)
        plt.close(fig)
        written.append(name)
    return written


def requests_by_type(results: dict[str, Any], out: Path) -> list[str]:
    """Store requests by type per protocol (stacked), S3, append, at 1000 files (or largest)."""
    plt = _pyplot()
    rows = [r for r in results.get("sweep", []) if r["store"] == "s3" and r["mode"] == "append"]
    if not rows:
        return []
    files = sorted({r["files"] for r in rows})
    at = TARGET_FILES if TARGET_FILES in files else max(files)
    rows = [r for r in rows if r["files"] == at]
    columns = [name for name, _ in REQUEST_COLUMNS] + ["other"]
    fig, ax = plt.subplots(figsize=(10, 4.8))
    bottom = [0] * len(rows)
    for col in columns:
        values = [grouped(r["requests"]["counts"])[col] for r in rows]
        if any(values):
            ax.bar(range(len(rows)), values, bottom=bottom, label=col)
            bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    ax.set_xticks(range(len(rows)), [r["label"] for r in rows], rotation=15, fontsize=8)
    ax.set_ylabel("requests during the write")
    ax.set_title(f"S3 requests by type, {at} files, append (whole job, executors included)")
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    name = "requests-s3.png"
    fig.savefig(out / name, dpi=110)
    plt.close(fig)
    return [name]


def all_plots(results: dict[str, Any], out: Path) -> list[str]:
    out.mkdir(parents=True, exist_ok=True)
    return commit_time(results, out) + requests_by_type(results, out)

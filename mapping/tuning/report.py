"""Markdown reports of what a search or a transfer tried, written atomically."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from mapping.tuning.measure import Evaluation

if TYPE_CHECKING:
    from mapping.tuning.search import SearchResult


def atomic_write(path: Path | str, text: str) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    os.replace(tmp, path)
    return path


def evaluations_table(evaluations: Sequence[Evaluation], default_s: float | None = None) -> str:
    """One row per schedule, fastest first, invalid ones last with their reason."""
    ok = sorted((e for e in evaluations if e.ok), key=lambda e: e.median_s)  # type: ignore[arg-type, return-value]
    bad = [e for e in evaluations if not e.ok]
    lines = [
        "| # | schedule | median ms | noise | speedup vs numpy | build s | status |",
        "|---|---|---|---|---|---|---|",
    ]
    for i, e in enumerate(ok + bad, 1):
        if e.ok:
            speed = f"{default_s / e.median_s:.2f}" if default_s else "-"  # type: ignore[operator]
            lines.append(
                f"| {i} | `{e.schedule.describe()}` | {1e3 * e.median_s:.3f} | "  # type: ignore[operator]
                f"{(e.noise or 0):.0%} | {speed} | {e.build_seconds or 0:.1f} | ok |"
            )
        else:
            reason = e.error.splitlines()[0][:120].replace("|", "/") if e.error else "invalid"
            lines.append(f"| {i} | `{e.schedule.describe()}` | - | - | - | - | invalid: {reason} |")
    return "\n".join(lines) + "\n"


def search_report(result: SearchResult, title: str, extra: str = "") -> str:
    evs = result.evaluations
    default = result.default()
    best = result.best
    head = [
        f"# {title}",
        "",
        f"- strategy: {result.strategy}, space: {result.space_size} schedules, "
        f"evaluated: {len(evs)} ({sum(e.ok for e in evs)} valid), reused from the database: "
        f"{result.reused}, compilations: {result.builds}, timed runs: {result.runs}",
    ]
    if best is not None:
        head.append(f"- best: `{best.schedule.describe()}` {1e3 * best.median_s:.3f} ms")
        if default is not None:
            head.append(f"- speedup over the numpy backend: {default.median_s / best.median_s:.2f}x")
    if extra:
        head.append(extra)
    return "\n".join(head) + "\n\n" + evaluations_table(evs, default.median_s if default else None)

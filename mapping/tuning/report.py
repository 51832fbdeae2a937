"""Markdown reports of what a search or a transfer tried, written atomically."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from mapping.tuning.measure import Evaluation
from stencils.atomic import atomic_write_text

if TYPE_CHECKING:
    from mapping.tuning.search import SearchResult


#: the project's temp-and-rename writer, under the name this module's callers use
atomic_write = atomic_write_text


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

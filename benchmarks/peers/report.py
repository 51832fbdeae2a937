"""The Markdown page of ``stratoflow bench stencils``: per shape the best backend against the
best peer, then every candidate, from the benchmark's JSON payload."""

from __future__ import annotations

from typing import Any

from benchmarks.common import markdown_table


def render(payload: dict[str, Any], best: dict[tuple[str, str], tuple[dict, dict | None]],
           json_path: str) -> str:  # fmt: skip
    """The generated block of docs/benchmarks/stencils.md; ``best`` maps (shape, stencil) to
    its fastest backend row and fastest peer row."""
    m = payload["machine"]
    roofs = {(r["shape"], r["stencil"]): r for r in payload["rooflines"]}
    text = (
        "# Stencil library benchmark\n\n"
        f"{m['cpu']} ({m['cores']} cores), {m['time']}; float64. Measured in the same run: "
        f"STREAM triad **{payload['stream_triad_gbs']:.1f} GB/s** ({payload['stream_threads']} "
        f"threads; {payload['stream_triad_gbs_after']:.1f} GB/s after the timings), peak FMA rate "
        f"**{payload['peak_gflops']:.1f} GFLOP/s** ({payload['peak_threads']} threads). "
        f"Load average at the start: {m['load_avg_1min']:.1f} on {m['cores']} cores (a load above "
        "the core count makes every figure noisy).\n\n"
        "Each stencil's candidates (GT4Py backends and the `peer:` NumPy, Numba and C/OpenMP "
        "implementations of `benchmarks/peers/`) run on the same inputs and are checked against "
        f"the numpy backend (1e-10) first; then {payload['repeats']} interleaved rounds, one call "
        "per candidate per round; median, with min-max. `bound` is the roofline time "
        "max(bytes / STREAM, flops / peak) with compulsory bytes (each field once) and the flops "
        "of `benchmarks/roofline.py`; `of bound` = bound / median.\n\n"
        f"Reproduce: `{payload.get('command', 'stratoflow bench stencils')}` (writes `{json_path}` "
        "and this page)\n\n"
        + _cache_note(payload["shapes"], m.get("l3_cache_bytes"))
    )
    for shape in ("x".join(map(str, s)) for s in payload["shapes"]):
        rows = []
        for (s, name), (b, p) in best.items():
            if s != shape:
                continue
            roof = roofs[(s, name)]
            rows.append((name, b["candidate"], b["median_ms"], _pct(b["achieved_over_bound"]),
                         *((p["candidate"], p["median_ms"], _pct(p["achieved_over_bound"]),
                            p["median_ms"] / b["median_ms"]) if p else ("-",) * 4),
                         roof["limit"], roof["bound_ms"]))  # fmt: skip
        text += f"\n## {shape}: best stratoflow backend vs best peer\n\n" + markdown_table(
            ["stencil", "best backend", "ms", "of bound", "best peer", "ms", "of bound",
             "peer ms / backend ms", "bound", "bound ms"], rows)  # fmt: skip
    full = [
        (r["shape"], r["stencil"], r["candidate"], r["median_ms"],
         f"{r['min_ms']:.3g}-{r['max_ms']:.3g}", r["gbs"], _pct(r["fraction_of_stream"]),
         _pct(r["achieved_over_bound"]), r["speedup_vs_numpy"])
        for r in payload["results"]
    ]  # fmt: skip
    text += "\n## All candidates\n\n" + markdown_table(
        ["shape", "stencil", "candidate", "median ms", "min-max ms", "GB/s", "of STREAM",
         "of bound", "x numpy backend"], full)  # fmt: skip
    return text


def _pct(fraction: float) -> str:
    return f"{100 * fraction:.0f}%"


def _cache_note(shapes: list[list[int]], l3: int | None) -> str:
    if not l3:
        return ""
    sizes = ", ".join(f"{'x'.join(map(str, s))}: {s[0] * s[1] * s[2] * 8 / 1e6:.1f} MB" for s in shapes)
    return (
        f"One float64 field is {sizes}; the last-level cache holds {l3 / 2**20:.0f} MiB. Where a "
        "stencil's fields fit in it, part of the traffic can come from cache (each round runs "
        "the other candidates in between, on their own arrays), which is how more than 100% of "
        "STREAM or of the bound can occur.\n"
    )

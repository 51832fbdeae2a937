"""Stencil library performance: every library stencil on every CPU backend vs STREAM and numpy.

Measures, in one run, the machine's STREAM triad bandwidth, then each stencil on each backend
(median of >= 10 warm runs). ``bytes_moved`` counts each input and output field once over the
compute domain (compulsory traffic), so ``fraction_of_stream`` is the achieved share of the
machine's sustainable bandwidth. Results are validated against the numpy backend first.
"""

from __future__ import annotations

import argparse
import functools
import logging
from pathlib import Path

import numpy as np

from benchmarks.common import (
    DOCS_BENCH,
    BenchmarkError,
    machine_info,
    markdown_table,
    stream_triad,
    time_call,
    write_json,
)

NAME = "stencils"
HELP = "library stencils on every backend vs STREAM triad and numpy"
log = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    from stencils import CPU_BACKENDS

    p.add_argument("--json", type=Path, required=True, help="where to write the JSON results")
    p.add_argument("--shape", type=int, nargs=3, default=(128, 128, 80), metavar=("NX", "NY", "NZ"))
    p.add_argument("--backends", nargs="+", default=[b for b in CPU_BACKENDS if b != "debug"],
                   choices=CPU_BACKENDS, help="backends to measure (numpy is always the baseline)")
    p.add_argument("--stencils", nargs="+", default=None, help="library stencils (default: all)")
    p.add_argument("--repeats", type=int, default=10, help="timed runs per case (median; >= 10)")
    p.add_argument("--markdown", type=Path, default=DOCS_BENCH / "stencils.md",
                   help="Markdown table to write (default docs/benchmarks/stencils.md)")


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from stencils import Domain, StencilFactory, from_numpy, to_numpy
    from stencils.library import LIBRARY

    if args.repeats < 10:
        raise BenchmarkError("--repeats must be >= 10 (the median of fewer runs is too noisy here)")
    names = args.stencils or list(LIBRARY)
    unknown = [n for n in names if n not in LIBRARY]
    if unknown:
        raise BenchmarkError(f"unknown stencils {unknown}; choose from {list(LIBRARY)}")
    backends = ["numpy"] + [b for b in args.backends if b != "numpy"]
    cases = [(n, b) for n in names for b in backends]
    # Phase 1: build everything (compiles are slow and must not disturb the timings).
    built = {
        (n, b): StencilFactory(b)(LIBRARY[n].definition)
        for n, b in tqdm(cases, desc="build", unit="stencil", disable=None)
    }
    # Phase 2: STREAM, the timings, STREAM again (so drift of a shared machine shows up).
    stream = stream_triad()
    results, numpy_ms, checks = [], {}, {}
    for name, backend in tqdm(cases, desc="measure", unit="case", disable=None):
        lib = LIBRARY[name]
        dom = Domain(*args.shape, halo=lib.halo)
        arrays = lib.allocate(dom, seed=0)
        stencil = built[(name, backend)]
        fields = {k: from_numpy(v, backend, dom.origin) for k, v in arrays.items()}
        call = functools.partial(stencil, origin=dom.origin, domain=dom.domain, **fields, **lib.params)
        timing = time_call(call, repeats=args.repeats, warmup=2)
        out = {o: to_numpy(fields[o])[lib.interior(dom)] for o in lib.outputs}
        if backend == "numpy":
            checks[name] = out
            numpy_ms[name] = timing.median_ms
            max_diff = 0.0
        else:
            max_diff = max(float(np.abs(out[o] - checks[name][o]).max()) for o in out)
            if max_diff > 1e-10:
                raise BenchmarkError(f"{name} on {backend} differs from numpy by {max_diff:.2e}")
        nbytes = lib.bytes_moved(dom)
        gbs = nbytes / timing.median_s / 1e9
        results.append({
            "stencil": name,
            "backend": backend,
            "shape": list(args.shape),
            "median_ms": timing.median_ms,
            "min_ms": 1e3 * timing.min_s,
            "noise": timing.spread,
            "bytes_moved": nbytes,
            "gbs": gbs,
            "fraction_of_stream": gbs / stream.triad_gbs,
            "speedup_vs_numpy": numpy_ms[name] / timing.median_ms,
            "build_s": stencil.build_seconds,
            "max_abs_diff_vs_numpy": max_diff,
        })
        log.info("%s %s: %.2f ms, %.1f GB/s", name, backend, timing.median_ms, gbs)
    stream_after = stream_triad()
    payload = {
        "benchmark": NAME,
        "machine": machine_info(),
        "stream_triad_gbs": stream.triad_gbs,
        "stream_threads": stream.threads,
        "stream_triad_gbs_after": stream_after.triad_gbs,
        "results": results,
    }
    write_json(args.json, payload)
    _write_markdown(args.markdown, payload, args.shape)
    best = _best_per_stencil(results)
    for name, r in best.items():
        print(f"{name:<14} best {r['backend']:<16} {r['median_ms']:8.2f} ms  "
              f"{100 * r['fraction_of_stream']:5.1f}% of STREAM  {r['speedup_vs_numpy']:6.1f}x numpy")
    return 0


def _best_per_stencil(results: list[dict]) -> dict[str, dict]:
    best: dict[str, dict] = {}
    for r in results:
        if r["stencil"] not in best or r["median_ms"] < best[r["stencil"]]["median_ms"]:
            best[r["stencil"]] = r
    return best


def _cache_note(shape: tuple[int, int, int], l3: int | None) -> str:
    field_mb = shape[0] * shape[1] * shape[2] * 8 / 1e6
    if not l3:
        return ""
    return (
        f"One {shape[0]}x{shape[1]}x{shape[2]} float64 field is {field_mb:.1f} MB and the last-level "
        f"cache holds {l3 / 2**20:.0f} MiB: stencils with two or three fields partly run from "
        "cache between repeats, which is how a fraction of STREAM above 100% can occur.\n\n"
    )


def _write_markdown(path: Path, payload: dict, shape: tuple[int, int, int]) -> None:
    from benchmarks.common import write_markdown

    rows = [
        (r["stencil"], r["backend"], r["median_ms"], r["gbs"], 100 * r["fraction_of_stream"],
         r["speedup_vs_numpy"], 100 * r["noise"])
        for r in payload["results"]
    ]
    best = _best_per_stencil(payload["results"])
    brows = [(n, r["backend"], r["median_ms"], 100 * r["fraction_of_stream"], r["speedup_vs_numpy"])
             for n, r in best.items()]
    m = payload["machine"]
    text = (
        "# Stencil library benchmark\n\n"
        f"Shape {shape[0]}x{shape[1]}x{shape[2]} float64; {m['cpu']} ({m['cores']} cores), "
        f"{m['time']}. STREAM triad measured in the same run: "
        f"**{payload['stream_triad_gbs']:.1f} GB/s** ({payload['stream_threads']} threads; "
        f"{payload['stream_triad_gbs_after']:.1f} GB/s after the timings).\n"
        "`bytes_moved` counts each input and output field once (compulsory traffic). "
        "Median of >= 10 warm runs; noise = (max - min) / median. "
        f"Load average when the run started: {m['load_avg_1min']:.1f} on {m['cores']} cores "
        "(this machine is shared: a load above the core count makes every figure noisy).\n\n"
        + _cache_note(shape, m.get("l3_cache_bytes"))
        + "Reproduce: `stratoflow bench stencils --json out/stencils.json`\n\n"
        "## Best backend per stencil\n\n"
        + markdown_table(["stencil", "best backend", "median ms", "% of STREAM", "x numpy"], brows)
        + "\n## All cases\n\n"
        + markdown_table(["stencil", "backend", "median ms", "GB/s", "% of STREAM", "x numpy", "noise %"], rows)
    )
    write_markdown(path, text)

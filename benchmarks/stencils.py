"""Stencil library performance: every library stencil on every CPU backend and against
hand-written peers (NumPy, Numba, C/OpenMP), vs STREAM and the roofline bound.

Measures, in one run, the machine's STREAM triad bandwidth and peak FMA rate, then per shape
and stencil times every candidate (the GT4Py backends and the peers of ``benchmarks.peers``) in
interleaved rounds: median of >= 10 warm calls, with min and max.  Every candidate's outputs
are checked against the numpy backend (1e-10 abs) before it is timed.  ``bytes_moved`` counts
each field once over the domain (compulsory traffic), so ``fraction_of_stream`` is the achieved
share of the sustainable bandwidth; ``achieved_over_bound`` is the roofline bound time
(``benchmarks.roofline``) over the measured time.
"""

from __future__ import annotations

import argparse
import functools
import logging
import re
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import (
    DOCS_BENCH,
    BenchmarkError,
    machine_info,
    stream_triad,
    time_interleaved,
    write_json,
)

NAME = "stencils"
HELP = "library stencils on every backend and vs NumPy/Numba/C peers, STREAM and the roofline"
log = logging.getLogger(__name__)

DEFAULT_SHAPES = ((128, 128, 80), (256, 256, 80))
DEFAULT_JSON = DOCS_BENCH / "stencils.json"
Shape = tuple[int, int, int]


def parse_shape(text: str) -> Shape:
    """``NXxNYxNZ`` (e.g. ``128x128x80``) as a tuple of three positive ints."""
    m = re.fullmatch(r"\s*(\d+)x(\d+)x(\d+)\s*", text.lower())
    if not m or min(int(g) for g in m.groups()) < 1:
        raise argparse.ArgumentTypeError(f"shape {text!r} must be NXxNYxNZ with positive sizes, e.g. 128x128x80")
    return (int(m[1]), int(m[2]), int(m[3]))


def add_arguments(p: argparse.ArgumentParser) -> None:
    from benchmarks.peers import PEER_KINDS
    from stencils import CPU_BACKENDS

    p.add_argument("--json", type=Path, default=DEFAULT_JSON,
                   help=f"where to write the JSON results (default {_rel(DEFAULT_JSON)})")
    p.add_argument("--shapes", type=parse_shape, nargs="+", default=list(DEFAULT_SHAPES),
                   metavar="NXxNYxNZ", help="interior shapes (default 128x128x80 256x256x80)")
    p.add_argument("--backends", nargs="+", default=[b for b in CPU_BACKENDS if b != "debug"],
                   choices=CPU_BACKENDS, help="backends to measure (numpy is always the reference)")
    p.add_argument("--peers", nargs="*", default=list(PEER_KINDS), choices=PEER_KINDS,
                   help="hand-written peers to measure (default all; none with a bare --peers)")
    p.add_argument("--stencils", nargs="+", default=None, help="library stencils (default: all)")
    p.add_argument("--repeats", type=int, default=10, help="interleaved rounds (median; >= 10)")
    p.add_argument("--markdown", type=Path, default=DOCS_BENCH / "stencils.md",
                   help="Markdown page to write (default docs/benchmarks/stencils.md)")


def _rel(path: Path) -> str:
    return str(path.relative_to(DOCS_BENCH.parent.parent))


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from benchmarks.peers import PeerKernels
    from benchmarks.roofline import fma_peak
    from stencils import StencilFactory
    from stencils.library import LIBRARY

    if args.repeats < 10:
        raise BenchmarkError("--repeats must be >= 10 (the median of fewer runs is too noisy here)")
    names = args.stencils or list(LIBRARY)
    unknown = [n for n in names if n not in LIBRARY]
    if unknown:
        raise BenchmarkError(f"unknown stencils {unknown}; choose from {list(LIBRARY)}")
    backends = ["numpy"] + [b for b in args.backends if b != "numpy"]
    # Phase 1: build everything (compiles are slow and must not disturb the timings).
    built = {
        (n, b): LIBRARY[n].build(StencilFactory(b))
        for n in names for b in tqdm(backends, desc=f"build {n}", unit="backend", disable=None)
    }  # fmt: skip
    with PeerKernels(args.peers) as peers:
        # Phase 2: the machine's roofs, the timings, STREAM again (drift of a shared machine).
        stream = stream_triad()
        peak = fma_peak()
        results, rooflines = [], []
        for shape in args.shapes:
            for name in tqdm(names, desc=f"measure {'x'.join(map(str, shape))}", unit="stencil",
                             disable=None):  # fmt: skip
                rows, roof = _measure(LIBRARY[name], shape, backends, built, peers, args.repeats,
                                      stream.triad_gbs, peak.gflops)  # fmt: skip
                results += rows
                rooflines.append(roof)
        stream_after = stream_triad()
    payload = {
        "benchmark": NAME,
        "machine": machine_info(),
        "stream_triad_gbs": stream.triad_gbs,
        "stream_threads": stream.threads,
        "stream_triad_gbs_after": stream_after.triad_gbs,
        "peak_gflops": peak.gflops,
        "peak_threads": peak.threads,
        "shapes": [list(s) for s in args.shapes],
        "repeats": args.repeats,
        "command": " ".join(["stratoflow", *(shlex.quote(a) for a in sys.argv[1:])]),
        "rooflines": rooflines,
        "results": results,
    }
    write_json(args.json, payload)
    _write_markdown(args.markdown, payload)
    for (shape, name), (backend, peer) in _best_pairs(results).items():
        print(f"{shape:<12} {name:<14} best backend {backend['candidate']:<16} "
              f"{backend['median_ms']:8.2f} ms ({100 * backend['achieved_over_bound']:4.0f}% of bound)"
              + (f"  best peer {peer['candidate']:<10} {peer['median_ms']:8.2f} ms "
                 f"({100 * peer['achieved_over_bound']:4.0f}% of bound)" if peer else ""))  # fmt: skip
    return 0


def _measure(
    lib: Any,
    shape: Shape,
    backends: list[str],
    built: dict[tuple[str, str], Any],
    peers: Any,
    repeats: int,
    stream_gbs: float,
    peak_gflops: float,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Check, then time in interleaved rounds, every backend and peer of one stencil."""
    from benchmarks.peers import check_outputs
    from benchmarks.roofline import bound
    from stencils import Domain, from_numpy, to_numpy

    dom = Domain(*shape, halo=lib.halo)
    arrays = lib.allocate(dom, seed=0)
    interior = lib.interior(dom)
    calls: dict[str, Callable[[], None]] = {}
    outputs: dict[str, Callable[[], dict[str, np.ndarray]]] = {}
    kinds: dict[str, str] = {}
    for backend in backends:
        fields = {k: from_numpy(v, backend, dom.origin) for k, v in arrays.items()}
        calls[backend] = functools.partial(built[(lib.name, backend)], origin=dom.origin,
                                           domain=dom.domain, **fields, **lib.params)  # fmt: skip
        outputs[backend] = functools.partial(_outputs, fields, lib.outputs, interior, to_numpy)
        kinds[backend] = "backend"
    for kind in peers.kinds:
        copies = {k: v.copy() for k, v in arrays.items()}
        calls[f"peer:{kind}"] = peers.bind(kind, lib, copies, dom.halo)
        outputs[f"peer:{kind}"] = functools.partial(_outputs, copies, lib.outputs, interior, np.array)
        kinds[f"peer:{kind}"] = "peer"
    # Validation: one call each (it also compiles the Numba peers), against the numpy backend.
    diffs = {}
    for candidate, call in calls.items():
        call()
        if candidate == "numpy":
            reference = outputs["numpy"]()
        diffs[candidate] = check_outputs(lib.name, candidate, outputs[candidate](), reference)
    timings = time_interleaved(calls, repeats=repeats, warmup=2)
    roof = bound(lib, dom, stream_gbs, peak_gflops)
    label = "x".join(map(str, shape))
    roofline = {"stencil": lib.name, "shape": label, "bytes": roof.bytes, "flops": roof.flops,
                "flops_per_byte": roof.intensity, "bound_ms": 1e3 * roof.time_s, "limit": roof.limit}  # fmt: skip
    numpy_ms = timings["numpy"].median_ms
    rows = []
    for candidate, t in timings.items():
        gbs = roof.bytes / t.median_s / 1e9
        rows.append({
            "stencil": lib.name,
            "shape": label,
            "candidate": candidate,
            "kind": kinds[candidate],
            "median_ms": t.median_ms,
            "min_ms": 1e3 * t.min_s,
            "max_ms": 1e3 * t.max_s,
            "spread": t.spread,
            "gbs": gbs,
            "fraction_of_stream": gbs / stream_gbs,
            "achieved_over_bound": roof.time_s / t.median_s,
            "speedup_vs_numpy": numpy_ms / t.median_ms,
            "build_s": built[(lib.name, candidate)].build_seconds if kinds[candidate] == "backend" else None,
            "max_abs_diff_vs_numpy": diffs[candidate],
        })
        log.info("%s %s %s: %.2f ms, %.1f GB/s, %.0f%% of bound", label, lib.name, candidate,
                 t.median_ms, gbs, 100 * roof.time_s / t.median_s)  # fmt: skip
    return rows, roofline


def _outputs(fields: dict[str, Any], names: tuple[str, ...], interior: tuple[slice, ...],
             convert: Callable[[Any], np.ndarray]) -> dict[str, np.ndarray]:  # fmt: skip
    return {o: convert(fields[o])[interior] for o in names}


def _best_pairs(results: list[dict[str, Any]]) -> dict[tuple[str, str], tuple[dict, dict | None]]:
    """Per (shape, stencil): the fastest backend and the fastest peer (None without peers)."""
    best: dict[tuple[str, str, str], dict] = {}
    for r in results:
        key = (r["shape"], r["stencil"], r["kind"])
        if key not in best or r["median_ms"] < best[key]["median_ms"]:
            best[key] = r
    return {(s, n): (r, best.get((s, n, "peer"))) for (s, n, k), r in best.items() if k == "backend"}


def _write_markdown(path: Path, payload: dict[str, Any]) -> None:
    from benchmarks.common import write_markdown
    from benchmarks.peers.report import render

    write_markdown(path, render(payload, _best_pairs(payload["results"]), _rel(DEFAULT_JSON)))

"""Cubed-sphere halo exchange vs. pace-util and raw MPI: ``mpiexec -n 6 stratoflow bench halo``.

For each case (C48, C96 tiles; 79 levels; 3 cell-centred scalars + one D-grid vector pair;
halo depth 3; float64) the exchange is timed (median over repeats of the slowest rank's time
per exchange) next to raw non-blocking sends/receives of contiguous buffers carrying the same
bytes between the same rank pairs -- the limit -- and next to pace-util 0.9.0's HaloUpdater on
the same arrays, run as an MPI job of its own from a venv of its own (created once; see
``benchmarks/peers_halo``). All packings are timed, and the one the one-time measurement picks
(``auto``) is reported. The order is stratoflow, pace-util, stratoflow again. The STREAM triad
is measured in the same run (on rank 0 while the other ranks sleep). ``--weak-scaling`` adds a
larger run (e.g. 24 ranks, layout 2) to the JSON of an earlier one and regenerates the page.
"""

from __future__ import annotations

import argparse
import logging
import resource
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import (
    DOCS_BENCH,
    BenchmarkError,
    machine_info,
    stream_triad,
    write_json,
    write_markdown,
)
from benchmarks.peers_halo import pace_venv, report
from benchmarks.peers_halo.pace_worker import FIELDS, N_SCALARS, field_shapes
from stencils.errors import InputFileError
from stencils.textfile import read_json

NAME = "halo"
HELP = "cubed-sphere halo exchange vs. pace-util and raw MPI (run under mpiexec -n 6)"
COMMAND = "mpiexec -n 6 stratoflow bench halo"
DEFAULT_JSON = DOCS_BENCH / "halo.json"
ROUNDS = 3  # interleave the variants against drift on a shared machine
log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json", type=Path, default=DEFAULT_JSON,
        help="results JSON (default: docs/benchmarks/halo.json, next to the Markdown)",
    )
    parser.add_argument(
        "--markdown", type=Path, default=DOCS_BENCH / "halo.md",
        help="Markdown page to write (default: docs/benchmarks/halo.md)",
    )
    parser.add_argument("--cases", default="48,96", help="tile sizes N of the C<N> cases (48,96)")
    parser.add_argument("--levels", type=int, default=79, help="vertical levels (79)")
    parser.add_argument("--layout", type=int, default=1,
                        help="ranks per tile edge: 6*layout^2 ranks (1 -> mpiexec -n 6)")
    parser.add_argument("--halo", type=int, default=3, help="halo depth (3)")
    parser.add_argument("--repeats", type=int, default=30, help="timed exchanges per variant (30)")
    parser.add_argument("--no-stream", action="store_true", help="skip the STREAM triad")
    parser.add_argument("--no-pace", action="store_true", help="skip the pace-util comparison")
    parser.add_argument(
        "--pace-venv", type=Path, default=pace_venv.DEFAULT_VENV,
        help="venv for pace-util 0.9.0, created there with pip if it lacks it "
             "(default: .stratoflow_cache/pace-venv)",
    )
    parser.add_argument(
        "--weak-scaling", action="store_true",
        help="add this run (e.g. mpiexec -n 24 ... --layout 2 --cases 96) as the weak-scaling "
             "section of the earlier run's --json file and regenerate the page from it",
    )


def _timed(comm: Any, fn: Callable[[], None], repeats: int, warmup: int = 3) -> list[float]:
    """Per-iteration time of the slowest rank (all ranks start together)."""
    samples = []
    for i in range(warmup + repeats):
        comm.barrier()
        t0 = time.perf_counter()
        fn()
        dt = comm.allreduce_max(time.perf_counter() - t0)
        if i >= warmup:
            samples.append(dt)
    return samples


def _raw_exchange(comm: Any, ex: Any) -> Callable[[], None]:
    """Isend/Irecv of contiguous buffers with the exchange's byte counts, same rank pairs."""
    itemsize = 8
    send = {d: np.ones(b // itemsize) for d, b in ex.message_bytes().items()}
    recv = {s: np.empty(b // itemsize) for s, b in ex.receive_bytes().items()}
    tag = 77

    def run() -> None:
        reqs = [comm.irecv(buf, src, tag) for src, buf in recv.items()]
        reqs += [comm.isend(buf, dest, tag) for dest, buf in send.items()]
        comm.waitall(reqs)

    return run


def exchange_arrays(n: int, n_halo: int, levels: int, seed: int) -> dict[str, np.ndarray]:
    """The exchange's arrays (random float64), shaped as the pace-util worker shapes its own."""
    rng = np.random.default_rng(seed)
    return {name: rng.standard_normal(shape)
            for name, shape in field_shapes(n, n_halo, levels).items()}  # fmt: skip


def exchange_specs(arrays: dict[str, np.ndarray], n_halo: int) -> list[Any]:
    """3 ScalarHalo + one D-grid VectorHalo over ``arrays`` (:data:`FIELDS` order)."""
    from mapping.cluster import ScalarHalo, VectorHalo

    names = [name for name, _, _ in FIELDS]
    scalars = [ScalarHalo(arrays[k], n_halo=n_halo) for k in names[:N_SCALARS]]
    u, v = (arrays[k] for k in names[N_SCALARS:])
    return [*scalars, VectorHalo(u, v, n_halo=n_halo, grid="D")]


@dataclass
class CaseSetup:
    """One case's exchanges (built once, timed before and after pace-util) and raw MPI."""

    n_tile: int
    cells_per_rank: int
    exchanges: dict[str, Any]
    auto: Any
    raw: Callable[[], None]


def _setup(comm: Any, n_tile: int, args: argparse.Namespace) -> CaseSetup:
    from mapping.cluster import CubedSpherePartitioner, HaloExchange

    part = CubedSpherePartitioner((args.layout, args.layout))
    n = n_tile // args.layout
    arrays = exchange_arrays(n, args.halo, args.levels, comm.rank)
    specs = exchange_specs(arrays, args.halo)
    exchanges = {p: HaloExchange(comm, part, specs, packing=p) for p in report.PACKINGS}
    auto = HaloExchange(comm, part, specs, packing="auto")
    return CaseSetup(n_tile, n, exchanges, auto, _raw_exchange(comm, auto))


def _time_pass(comm: Any, case: CaseSetup, args: argparse.Namespace) -> dict[str, Any]:
    """One pass over the variants (interleaved rounds): samples in ms and the case's facts."""
    times: dict[str, list[float]] = {"raw": [], **{p: [] for p in case.exchanges}}
    for ex in case.exchanges.values():
        ex.reset_timers()
    for _ in range(ROUNDS):
        times["raw"] += _timed(comm, case.raw, max(args.repeats // ROUNDS, 1))
        for p, ex in case.exchanges.items():
            times[p] += _timed(comm, ex.update, max(args.repeats // ROUNDS, 1))
    sent = sum(case.auto.message_bytes().values())
    return {
        "case": f"C{case.n_tile}", "ranks": comm.size, "layout": args.layout,
        "levels": args.levels, "halo": args.halo, "cells_per_rank": case.cells_per_rank,
        "packing": case.auto.packing_choice,
        "samples_ms": {k: [1e3 * s for s in v] for k, v in times.items()},
        "median_ms": {k: 1e3 * statistics.median(v) for k, v in times.items()},
        "one_time_measurement_ms": {k: 1e3 * s for k, s in case.auto.packing_times.items()},
        "bytes_sent_per_rank": sent,
        "bytes_sent_all_ranks": int(comm.allreduce_sum(sent)),
        "phases_ms": {
            p: {k: 1e3 * s / max(ex.n_exchanges, 1) for k, s in ex.timers.items()}
            for p, ex in case.exchanges.items()
        },
    }  # fmt: skip


def _on_rank0(comm: Any, fn: Callable[[], Any]) -> Any:
    """``fn()`` on rank 0 while the other ranks sleep in a polling barrier (they leave the
    cores to it); its result on rank 0, None elsewhere."""
    result = fn() if comm.rank == 0 else None
    comm.idle_barrier()
    return result


def _prepare_pace(args: argparse.Namespace) -> pace_venv.PaceVenv | dict[str, Any]:
    """The pace-util venv, or the ``pace`` section saying why there is none."""
    if args.no_pace:
        return {"status": "disabled"}
    try:
        return pace_venv.ensure_venv(args.pace_venv)
    except pace_venv.PaceUnavailable as exc:
        message = pace_venv.skip_message(str(exc))
        log.warning("%s", message)
        return {"status": "skipped", "reason": message}


def _run_pace(venv: pace_venv.PaceVenv, ranks: int, args: argparse.Namespace) -> dict[str, Any]:
    result = pace_venv.run_worker(venv, ranks, args)
    if result["status"] != "ok":
        log.error("pace-util run failed: %s", result["reason"])
    return result


def _command(ranks: int) -> str:
    argv = sys.argv[sys.argv.index("halo") + 1 :] if "halo" in sys.argv else []
    argv = [Path(a).name if prev == "--json" else a for prev, a in zip([""] + argv, argv)]
    return " ".join(["mpiexec", "-n", str(ranks), "stratoflow", "bench", "halo", *argv])


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _base_payload(args: argparse.Namespace) -> dict[str, Any]:
    """The earlier run a ``--weak-scaling`` run is added to (checked on every rank)."""
    try:
        base = read_json(Path(args.json), "the results of 'stratoflow bench halo --json'",
                         what="--json file")  # fmt: skip
    except InputFileError as exc:
        raise BenchmarkError(
            f"--weak-scaling adds to the results of an earlier run: {exc}; run "
            f"`{report.WEAK_SCALING_COMMANDS[0]}` first"
        ) from None
    if not isinstance(base, dict):
        raise BenchmarkError(f"--json {args.json} is not a 'bench halo' result: run "
                             f"`{report.WEAK_SCALING_COMMANDS[0]}` first")  # fmt: skip
    per_rank = {int(c) // args.layout for c in args.case_list}
    if not any(r.get("cells_per_rank") in per_rank for r in base.get("results", [])):
        raise BenchmarkError(
            f"--json {args.json} has no case with {sorted(per_rank)} cells per rank edge to "
            f"compare with: give --cases so that C<N> / layout matches one of its cases"
        )
    return base


def _has_weak_scaling(path: Path) -> bool:
    try:
        data = read_json(path, "the results of 'stratoflow bench halo --json'")
    except InputFileError:
        return False
    return isinstance(data, dict) and "weak_scaling" in data


def run(args: argparse.Namespace) -> int:
    try:
        from mapping.cluster import MPIComm
    except ImportError as exc:  # pragma: no cover - mpi4py is a dependency
        raise BenchmarkError(f"the halo benchmark needs mpi4py: {exc}") from exc
    rss_at_start = _rss_mb()
    comm = MPIComm()
    expected = 6 * args.layout**2
    if comm.size != expected:
        raise BenchmarkError(
            f"running on {comm.size} MPI ranks, but layout {args.layout} needs {expected}: "
            f"launch with mpiexec -n {expected} stratoflow bench halo ..."
        )
    args.case_list = [int(c) for c in str(args.cases).split(",") if c]
    for n_tile in args.case_list:
        if n_tile % args.layout:
            raise BenchmarkError(f"C{n_tile} does not split onto layout {args.layout}")
    base = _base_payload(args) if args.weak_scaling else None
    venv = _on_rank0(comm, lambda: _prepare_pace(args))
    stream = _on_rank0(comm, lambda: None if args.no_stream else stream_triad())
    cases = [_setup(comm, n_tile, args) for n_tile in args.case_list]
    passes = [[_time_pass(comm, c, args) for c in cases]]
    pace = venv if comm.rank == 0 and isinstance(venv, dict) else None
    if comm.bcast(isinstance(venv, pace_venv.PaceVenv)):  # stratoflow, pace-util, stratoflow
        pace = _on_rank0(comm, lambda: _run_pace(venv, comm.size, args))
        passes.append([_time_pass(comm, c, args) for c in cases])
    peak = comm.allreduce_max(_rss_mb())
    growth = comm.allreduce_max(_rss_mb() - rss_at_start)
    if comm.rank != 0:
        return 0
    triad = stream.triad_gbs if stream else None
    results = report.combine(passes, pace, triad)
    for r in results:
        pace_ms = (r.get("pace_util") or {}).get("median_ms")
        log.info("%s: stratoflow %.3g ms, raw MPI %.3g ms, pace-util %s", r["case"],
                 r["stratoflow"]["median_ms"], r["raw_mpi"]["median_ms"],
                 "n/a" if pace_ms is None else f"{pace_ms:.3g} ms")  # fmt: skip
    payload = {
        "benchmark": NAME, "command": _command(comm.size), "machine": machine_info(),
        "mpi_ranks": comm.size, "layout": args.layout, "stream_triad_GBs": triad,
        "peak_rss_MB_per_rank": peak, "rss_growth_MB_per_rank": growth, "pace": pace,
        "results": results, "passes": passes,
    }  # fmt: skip
    if base is not None:
        base["weak_scaling"] = payload
        payload = base
    elif _has_weak_scaling(Path(args.json)):
        log.info("%s: a new base run drops the old weak-scaling section; rerun `%s`",
                 args.json, report.WEAK_SCALING_COMMANDS[1])  # fmt: skip
    write_json(args.json, payload)
    write_markdown(args.markdown, report.markdown(payload))
    log.info("wrote %s and %s", args.json, args.markdown)
    return 1 if pace and pace.get("status") == "failed" else 0

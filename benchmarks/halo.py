"""Cubed-sphere halo exchange vs. raw MPI: run under ``mpiexec -n 6 stratoflow bench halo``.

For each case (C48, C96 tiles; 79 levels; 3 cell-centred scalars + one D-grid vector pair;
halo depth 3; float64) the exchange is timed (median over repeats of the slowest rank's time
per exchange) next to raw non-blocking sends/receives of contiguous buffers carrying the same
bytes between the same rank pairs -- the limit. All packings (slicing, MPI datatypes, node
shared memory) are timed, and the one the one-time measurement picks (``auto``) is reported. The STREAM triad is
measured in the same run (on rank 0 while the other ranks sleep).
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import (
    DOCS_BENCH,
    BenchmarkError,
    machine_info,
    markdown_table,
    stream_triad,
    write_json,
    write_markdown,
)

NAME = "halo"
HELP = "cubed-sphere halo exchange vs. raw MPI (run under mpiexec -n 6)"
COMMAND = "mpiexec -n 6 stratoflow bench halo --json halo.json"
log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", type=Path, help="write the results as JSON to this file")
    parser.add_argument(
        "--markdown", type=Path, default=DOCS_BENCH / "halo.md",
        help="Markdown table to write (default: docs/benchmarks/halo.md)",
    )
    parser.add_argument("--cases", default="48,96", help="tile sizes N of the C<N> cases (48,96)")
    parser.add_argument("--levels", type=int, default=79, help="vertical levels (79)")
    parser.add_argument("--layout", type=int, default=1,
                        help="ranks per tile edge: 6*layout^2 ranks (1 -> mpiexec -n 6)")
    parser.add_argument("--halo", type=int, default=3, help="halo depth (3)")
    parser.add_argument("--repeats", type=int, default=30, help="timed exchanges per variant (30)")
    parser.add_argument("--no-stream", action="store_true", help="skip the STREAM triad")


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


def _case(comm: Any, n_tile: int, args: argparse.Namespace) -> dict[str, Any]:
    from mapping.cluster import CubedSpherePartitioner, HaloExchange, ScalarHalo, VectorHalo

    part = CubedSpherePartitioner((args.layout, args.layout))
    h, nz = args.halo, args.levels
    n = n_tile // args.layout
    rng = np.random.default_rng(comm.rank)
    scalars = [rng.standard_normal((n + 2 * h, n + 2 * h, nz)) for _ in range(3)]
    u = rng.standard_normal((n + 2 * h, n + 1 + 2 * h, nz))
    v = rng.standard_normal((n + 1 + 2 * h, n + 2 * h, nz))

    def specs() -> list:
        return [ScalarHalo(q, n_halo=h) for q in scalars] + [VectorHalo(u, v, n_halo=h, grid="D")]

    row: dict[str, Any] = {"case": f"C{n_tile}", "ranks": part.total_ranks, "levels": nz,
                           "halo": h}
    exchanges = {
        p: HaloExchange(comm, part, specs(), packing=p) for p in ("slicing", "datatypes", "shared")
    }
    auto = HaloExchange(comm, part, specs(), packing="auto")
    raw = _raw_exchange(comm, auto)
    times: dict[str, list[float]] = {"raw": [], "slicing": [], "datatypes": [], "shared": []}
    rounds = 3  # interleave the variants against drift on a shared machine
    for _ in range(rounds):
        times["raw"] += _timed(comm, raw, args.repeats // rounds)
        for p, ex in exchanges.items():
            ex.reset_timers()
            times[p] += _timed(comm, ex.update, args.repeats // rounds)
    med = {k: 1e3 * statistics.median(v) for k, v in times.items()}
    chosen = auto.packing_choice
    sent = sum(auto.message_bytes().values())
    total_bytes = comm.allreduce_sum(sent) if hasattr(comm, "allreduce_sum") else sent
    row.update(
        packing=chosen,
        median_ms=med[chosen],
        raw_mpi_median_ms=med["raw"],
        ratio_to_raw=med[chosen] / med["raw"],
        slicing_median_ms=med["slicing"],
        datatypes_median_ms=med["datatypes"],
        shared_median_ms=med["shared"],
        one_time_measurement_ms={k: 1e3 * s for k, s in auto.packing_times.items()},
        bytes_sent_per_rank=sent,
        bytes_sent_all_ranks=total_bytes,
        phases_ms={
            p: {k: 1e3 * s / max(ex.n_exchanges, 1) for k, s in ex.timers.items()}
            for p, ex in exchanges.items()
        },
    )
    return row


def run(args: argparse.Namespace) -> int:
    try:
        from mapping.cluster import MPIComm
    except ImportError as exc:  # pragma: no cover - mpi4py is a dependency
        raise BenchmarkError(f"the halo benchmark needs mpi4py: {exc}") from exc
    comm = MPIComm()
    expected = 6 * args.layout**2
    if comm.size != expected:
        raise BenchmarkError(
            f"running on {comm.size} MPI ranks, but layout {args.layout} needs {expected}: "
            f"launch with mpiexec -n {expected} stratoflow bench halo ..."
        )
    stream = None
    if comm.rank == 0 and not args.no_stream:
        stream = stream_triad()
    comm.idle_barrier()
    cases = [int(c) for c in str(args.cases).split(",") if c]
    results = []
    for n_tile in cases:
        if n_tile % args.layout:
            raise BenchmarkError(f"C{n_tile} does not split onto layout {args.layout}")
        results.append(_case(comm, n_tile, args))
        if comm.rank == 0:
            log.info("C%d: %s", n_tile, results[-1])
    if comm.rank != 0:
        return 0
    triad = stream.triad_gbs if stream else None
    for r in results:
        # halo bytes moved per second, all ranks (each byte is read and written once)
        r["halo_GBs"] = r["bytes_sent_all_ranks"] / (r["median_ms"] * 1e-3) / 1e9
        r["fraction_of_triad"] = r["halo_GBs"] / triad if triad else None
    argv = sys.argv[sys.argv.index("halo") + 1 :] if "halo" in sys.argv else []
    argv = [Path(a).name if prev == "--json" else a for prev, a in zip([""] + argv, argv)]
    payload = {
        "benchmark": NAME,
        "command": " ".join(["mpiexec", "-n", str(comm.size), "stratoflow", "bench", "halo", *argv]),
        "machine": machine_info(),
        "mpi_ranks": comm.size,
        "stream_triad_GBs": triad,
        "results": results,
    }
    if args.json:
        write_json(args.json, payload)
    table = markdown_table(
        ["case", "ranks", "packing", "median ms", "raw MPI ms", "ratio to raw", "slicing ms",
         "datatypes ms", "shared ms", "MB sent/rank", "halo GB/s", "of triad"],
        [[r["case"], r["ranks"], r["packing"], r["median_ms"], r["raw_mpi_median_ms"],
          r["ratio_to_raw"], r["slicing_median_ms"], r["datatypes_median_ms"],
          r["shared_median_ms"],
          r["bytes_sent_per_rank"] / 1e6, r["halo_GBs"],
          r["fraction_of_triad"] if r["fraction_of_triad"] is not None else "n/a"]
         for r in results],
    )
    info = payload["machine"]
    phases = markdown_table(
        ["case", "packing", "pack ms", "post ms", "wait ms", "unpack ms"],
        [[r["case"], p, *(ph[k] for k in ("pack", "post", "wait", "unpack"))]
         for r in results for p, ph in r["phases_ms"].items()],
    )
    oversubscribed = (
        f" The {comm.size} ranks share {info['cores']} cores (oversubscribed): waiting ranks "
        "poll, so times include scheduling and are noisy; ratios measured in the same run are "
        "what to compare."
        if (info["cores"] or 0) < comm.size
        else ""
    )
    doc = (
        "# Halo exchange benchmark\n\n"
        f"Measured with `{payload['command']}` (run from the repository root with `.venv/bin` "
        f"first on `PATH`) on {info['cpu']} ({info['cores']} cores, {comm.size} MPI ranks), "
        f"{info['time']}. STREAM triad in the same run: "
        f"{f'{triad:.1f} GB/s' if triad else 'not measured'}.{oversubscribed}\n\n"
        "Each case: 3 cell-centred scalars + one D-grid (u, v) pair, 79 levels, halo depth 3, "
        "float64, one rank per tile. *median ms*: median over repeats of the slowest rank's "
        "time per exchange with the packing the one-time measurement chose (`auto`); *raw MPI*: "
        "Isend/Irecv of contiguous buffers with the same bytes between the same rank pairs "
        "(the limit); target ratio <= 1.3. *slicing / datatypes / shared ms*: each packing "
        "forced. *halo GB/s*: bytes sent by all ranks per second of exchange; *of triad*: that "
        "over the STREAM triad.\n\n" + table + "\n## Phases (mean per exchange, rank 0)\n\n"
        + phases
    )
    write_markdown(args.markdown, doc)
    print(table, end="")
    return 0

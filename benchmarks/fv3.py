"""FV3 core performance: one shallow-water dynamics step (Williamson TC2: d2a2c, c_sw, d_sw
with two fvtp2d, divergence damping, four halo updates) or one transport step (TC1, fvtp2d),
on the 6-tile sphere.

Measures in one run: the STREAM triad; per backend the median time of a full step (all halo
exchanges included) on all 6 ranks in-process; cell
updates per second; the field traffic per step (every field a stencil touches counted once over
its compute domain) as a fraction of the triad bandwidth; and, under ``mpiexec -n 6``, the share
of step time spent in halo exchange. Results are checked against the numpy backend first.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import (
    DOCS_BENCH,
    BenchmarkError,
    machine_info,
    markdown_table,
    set_openmp_threads,
    stream_triad,
    time_interleaved,
    write_json,
    write_markdown,
)

NAME = "fv3"
HELP = "FV3 dynamics (or transport) step per backend vs numpy and STREAM; halo share under mpiexec -n 6"
log = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", type=Path, required=True, help="where to write the JSON results")
    p.add_argument("--resolution", type=int, default=48, help="cubed sphere C<N> (default 48)")
    p.add_argument("--backends", nargs="+", default=["numpy", "gt:cpu_ifirst"],
                   help="backends to measure (numpy is always the baseline)")
    p.add_argument("--repeats", type=int, default=10,
                   help="timed samples per backend (median; all backends interleaved round "
                   "by round)")
    p.add_argument("--min-round-ms", type=float, default=50.0,
                   help="each backend's turn in a round is as many consecutive steps as take "
                   "at least this long (1 numpy step, several compiled ones), and a sample is "
                   "their mean: the steady state of a run (default 50; 0: one step per turn, "
                   "right after the other backends' steps)")
    p.add_argument("--threads", type=int, nargs="+", default=[1],
                   help="OpenMP threads of the compiled backends, one row per count (e.g. "
                   "--threads 1 2: each backend with 1 and with 2 threads, interleaved in the "
                   "same rounds); numpy is single-threaded")
    p.add_argument("--step", choices=["dynamics", "transport"], default="dynamics",
                   help="dynamics: TC2 shallow-water step (default); transport: TC1 fvtp2d step")
    p.add_argument("--case", choices=["williamson2", "baroclinic"], default="williamson2",
                   help="williamson2: the shallow-water step of --step (default); baroclinic: "
                   "one large step of FV3's hydrostatic 3-D core on the JW06 wave with FV3's "
                   "JW options (time per step, halo share, memory per rank; its table is the "
                   "'baroclinic' block of --markdown)")
    p.add_argument("--levels", type=int, default=30,
                   help="--case baroclinic: FV3's npz (default 30)")
    p.add_argument("--rtol", type=float, default=1e-9,
                   help="--case baroclinic: the largest relative difference from numpy after "
                   "one step a backend may have (default 1e-9)")
    p.add_argument("--mpi-ranks", type=int, default=6, choices=[0, 6],
                   help="measure the halo-exchange share under mpiexec -n 6 (0 = skip)")
    p.add_argument("--profile", action="store_true",
                   help="also break each backend's step time down (cProfile, cumulative): "
                   "stencil kernels, halo exchange, NumPy vertex fixes/corner copies, rest")
    p.add_argument("--kernels", action="store_true",
                   help="also time every stencil launch, summed per stencil, twice: inside the "
                   "step (median of 10 steps) and warm (each repeated in place on its recorded "
                   "arguments); the difference is what the step's sequence costs each launch "
                   "(mostly its code starting cold, also its fields)")
    p.add_argument("--markdown", type=Path, default=DOCS_BENCH / "fv3core.md",
                   help="Markdown table to write (default docs/benchmarks/fv3core.md)")


class _CountingStencil:
    def __init__(self, stencil: Any, counter: list[int]) -> None:
        self._stencil, self._counter = stencil, counter

    def __call__(self, *, origin, domain, **kwargs) -> None:
        self._counter[0] += 8 * int(np.prod(domain)) * len(self._stencil.field_names)
        self._stencil(origin=origin, domain=domain, **kwargs)


class _CountingFactory:
    """A StencilFactory whose stencils count the bytes of the fields they touch."""

    def __init__(self, factory: Any) -> None:
        self._factory, self.counter = factory, [0]

    @property
    def backend(self) -> str:
        return self._factory.backend

    def on_grid(self, indexing: Any) -> Any:
        from stencils.factory import GridStencilFactory

        return GridStencilFactory(self, indexing)  # type: ignore[arg-type]

    def __call__(self, definition, externals=None, name=None, **options) -> _CountingStencil:
        return _CountingStencil(self._factory(definition, externals=externals, name=name,
                                              **options), self.counter)  # fmt: skip


def _decomposition(n: int, mpi: bool = False):
    from fv3core.decomposition import decompose
    from fv3core.testcases.williamson import A_EARTH

    return decompose(n, 1, mpi=mpi, radius=A_EARTH)


def _model(backend: str, n: int, decomposition=None, step: str = "dynamics", count: bool = False):
    """The model of ``step`` on ``backend``; ``count``: its stencils count the bytes of the
    fields they touch (a wrapper that disables the bound fast path -- never timed)."""
    from stencils.factory import StencilFactory

    decomposition = decomposition or _decomposition(n)
    factory = _CountingFactory(StencilFactory(backend)) if count else StencilFactory(backend)
    ranks = decomposition.ranks
    if step == "transport":
        from fv3core.advection import Advection, AdvectionConfig
        from fv3core.testcases.williamson import CosineBell, SolidBodyFlow

        flow = SolidBodyFlow(alpha=np.pi / 2 - 0.05)
        bell = CosineBell(flow)
        dt = 0.4 * float(min(r.metric.dxa.min() for r in ranks)) / flow.u0
        model = Advection(factory, decomposition, AdvectionConfig(hord=8, dt=dt),
                          flow.stream_function, lambda lon, lat: bell.height(lon, lat))  # fmt: skip
        return _TransportStep(model), factory, ranks
    from fv3core.dynamics import DynamicsConfig, ShallowWaterDynamics
    from fv3core.shallow_water_model import wave_speed_over_dx
    from fv3core.testcases.williamson import shallow_water_case

    case = shallow_water_case("williamson2")
    # no collective (the maximum over this process's ranks): the MPI warm-up builds serially
    dt = 0.5 / max(wave_speed_over_dx(r, case) for r in ranks)
    dynamics = ShallowWaterDynamics(factory, decomposition, DynamicsConfig(dt=dt), case)
    return _DynamicsStep(dynamics), factory, ranks


class _TransportStep:
    """Uniform view of a TC1 transport model for the benchmark."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.updaters = [model.halo, model.flux_sync]
        self.exchanges = [ex for group in self.updaters for ex in group.exchanges]

    def step(self) -> None:
        self.model.step()

    def halo(self) -> None:
        for updater in self.updaters:
            updater.update()

    def state(self) -> np.ndarray:
        return np.concatenate([r.interior().ravel() for r in self.model.ranks])


class _DynamicsStep:
    """Uniform view of a TC2 shallow-water model for the benchmark."""

    def __init__(self, model: Any) -> None:
        from fv3core.dynamics import Halo

        self.model = model
        self._halos = (Halo.WIND, Halo.C_GRID_WIND, Halo.FLUX_SYNC, Halo.DEPTH)
        self.exchanges = [ex for h in self._halos for ex in model.updaters[h].exchanges]

    def step(self) -> None:
        self.model.step()

    def halo(self) -> None:
        for h in self._halos:
            self.model.exchange(h)

    def state(self) -> np.ndarray:
        return np.concatenate([np.concatenate([r.rank.interior(np.asarray(r.state.h)[..., 0]).ravel(),
                                               r.rank.interior(np.asarray(r.state.u)[..., 0]).ravel()])
                               for r in self.model.ranks])  # fmt: skip


def _is_corner_copy(f: str, line: int, fn: str) -> bool:
    from fv3core.stencils.transport import CornerCopy, FlatCopy

    codes = (CornerCopy.__call__.__code__, FlatCopy.__call__.__code__)
    return any(f == c.co_filename and line == c.co_firstlineno for c in codes)


#: profile categories: (name, predicate on (filename, line, function name)), first match wins
_CATEGORIES = (
    ("halo exchange", lambda f, line, fn: "mapping/cluster" in f),
    ("NumPy vertex fixes + corner copies",
     lambda f, line, fn: f.endswith("vertex_fixes.py") and fn in ("faces", "vertices")
     or _is_corner_copy(f, line, fn)),
    ("stencil kernels (backend run)",
     lambda f, line, fn: (fn == "run" and ("/gt4py/" in f or "cache" in f))
     or "run_computation" in fn),
)  # fmt: skip


def profile_step(model: Any, repeats: int) -> dict[str, float]:
    """Share of step time per category (cumulative time of the outermost matching calls)."""
    import cProfile
    import pstats

    prof = cProfile.Profile()
    prof.enable()
    for _ in range(repeats):
        model.step()
    prof.disable()
    stats = pstats.Stats(prof).stats  # (file, line, fn) -> (cc, nc, tt, ct, callers)
    total = sum(tt for (_, _, tt, _, _) in stats.values())
    shares: dict[str, float] = {}
    for name, match in _CATEGORIES:
        seconds = 0.0
        for (f, line, fn), (_, _, _, ct, callers) in stats.items():
            if match(f, line, fn) and not any(match(*caller) for caller in callers):
                seconds += ct
        shares[name] = seconds / total
    shares["rest (Python driver, bound calls)"] = max(0.0, 1.0 - sum(shares.values()))
    return shares


def kernel_times(
    model: Any, samples: int = 5, min_sample_s: float = 2e-3, steps: int = 10
) -> dict[str, dict]:
    """Per stencil name, the time of its launches per step, two ways:

    * inside the step (``in_step_seconds_per_step``): each launch timed where it runs in
      ``steps`` consecutive ``model.step()`` calls
      (:func:`stencils.launch.timed_launches`), median over the steps;
    * warm (``seconds_per_step``): each launch of the last of those steps repeated in place
      on its own (:func:`~benchmarks.common.time_interleaved` samples of at least
      ``min_sample_s``; best of ``samples``), so its fields are in the caches.

    The difference is what the step's sequence costs each launch (cold code and data).  Also:
    launches per step and warm seconds per launch.  The repeats change the model's state (in-place updates): time a
    model that is not used afterwards."""
    from stencils.launch import timed_launches

    runs = [timed_launches(model.step, time.perf_counter) for _ in range(steps)]
    if len({len(run) for run in runs}) != 1:
        raise BenchmarkError(f"--kernels: the step's launches changed between steps "
                             f"({sorted({len(run) for run in runs})} launches)")
    in_step = np.median([[seconds for _, seconds in run] for run in runs], axis=0)
    out: dict[str, dict] = {}
    for (launch, _), inside in zip(runs[-1], in_step):  # the steps warmed each launch up
        timing = time_interleaved({"launch": launch}, samples, warmup=0,
                                  min_round_seconds=min_sample_s)["launch"]  # fmt: skip
        entry = out.setdefault(launch.stencil.name, {"launches": 0, "seconds_per_step": 0.0,
                                                     "in_step_seconds_per_step": 0.0})
        entry["launches"] += 1
        entry["seconds_per_step"] += timing.min_s
        entry["in_step_seconds_per_step"] += float(inside)
    for entry in out.values():
        entry["seconds_per_launch"] = entry["seconds_per_step"] / entry["launches"]
    return dict(sorted(out.items(), key=lambda kv: -kv[1]["seconds_per_step"]))


def _kernel_table(results: dict[str, Any]) -> list[str]:
    """Markdown lines of the ``--kernels`` times, one column per row of the benchmark."""
    timed = {row: r["kernels"] for row, r in results.items() if r.get("kernels")}
    fastest = min(timed.values(), key=lambda k: sum(e["seconds_per_step"] for e in k.values()))
    names = list(fastest)  # ordered by the fastest row's time

    def cell(k: dict, name: str) -> str:
        e = k.get(name)
        return f"{1e3 * e['seconds_per_step']:.3f} / {1e3 * e['in_step_seconds_per_step']:.3f}" \
            if e else ""

    def total(k: dict, key: str) -> float:
        return 1e3 * sum(e[key] for e in k.values())

    rows = [[name, fastest[name]["launches"], *(cell(k, name) for k in timed.values())]
            for name in names]  # fmt: skip
    rows.append(["**all launches**", sum(r[1] for r in rows),
                 *(f"**{total(k, 'seconds_per_step'):.2f} / "
                   f"{total(k, 'in_step_seconds_per_step'):.2f}**" for k in timed.values())])
    return [
        "Kernel times (`--kernels`), ms per step summed over a stencil's launches, as "
        "*warm / inside the step*. Warm: each stencil launch of one step repeated on its own "
        "on its recorded arguments, best of 5, so its fields are in the caches. Inside the "
        "step: each launch timed where it runs, median of 10 steps (a phase runs stencil-"
        "major: one stencil for all six tiles, then the next). The difference is what a "
        "launch pays for what other code left in the caches and predictors: its fields, but "
        "also its code (see \"Inside the step vs warm\" below the table).",
        "",
        markdown_table(["stencil", "launches per step",
                        *(f"{row} (ms)" for row in timed)], rows),  # fmt: skip
        "",
    ]


def mpi_worker(backend: str, n: int, repeats: int, out: str, step: str = "dynamics") -> None:
    """Run under mpiexec -n 6: per-rank step time and halo-exchange time; rank 0 writes JSON."""
    decomposition = _decomposition(n, mpi=True)  # collective: all ranks at once
    comm = decomposition.communicator.comm_of(decomposition.ranks[0].rank)
    model, _, _ = decomposition.build_serially(lambda: _model(backend, n, decomposition, step))
    model.step()
    comm.barrier()
    for ex in model.exchanges:
        ex.reset_timers()
    t0 = time.perf_counter()
    for _ in range(repeats):
        model.step()
    comm.barrier()
    step = (time.perf_counter() - t0) / repeats
    halo = sum(sum(ex.timers.values()) for ex in model.exchanges) / repeats
    step_max = comm.allreduce_max(step)
    halo_max = comm.allreduce_max(halo)
    if comm.rank == 0:
        Path(out).write_text(json.dumps({"step_s": step_max, "halo_s": halo_max}))


def _mpi_share(backend: str, n: int, repeats: int, step: str) -> dict[str, float]:
    mpiexec = Path(sys.executable).with_name("mpiexec")
    if not mpiexec.exists():
        raise BenchmarkError(f"{mpiexec} not found: install the mpich wheel into the venv")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "mpi.json"
        code = (f"from benchmarks.fv3 import mpi_worker; "
                f"mpi_worker({backend!r}, {n}, {repeats}, {str(out)!r}, {step!r})")  # fmt: skip
        proc = subprocess.run([str(mpiexec), "-n", "6", sys.executable, "-c", code],
                              capture_output=True, text=True,
                              env={**os.environ, "OMP_NUM_THREADS": "1"})  # fmt: skip
        if proc.returncode != 0 or not out.exists():
            raise BenchmarkError(f"mpiexec -n 6 benchmark worker failed:\n{proc.stderr[-2000:]}")
        data = json.loads(out.read_text())
    data["halo_share"] = data["halo_s"] / data["step_s"]
    return data


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    if args.case == "baroclinic":
        from benchmarks.fv3_baroclinic import run as run_baroclinic

        return run_baroclinic(args)
    n = args.resolution
    backends = ["numpy"] + [b for b in args.backends if b != "numpy"]
    stream = stream_triad()
    results: dict[str, Any] = {}
    reference = None
    counting, factory, _ = _model("numpy", n, step=args.step, count=True)
    counting.step()
    factory.counter[0] = 0
    counting.step()
    bytes_per_step = factory.counter[0]  # every field a stencil touches, once per call
    del counting
    models = {}
    for backend in tqdm(backends, desc="fv3 bench: build", unit="backend", disable=None):
        model, _, ranks = _model(backend, n, step=args.step)
        model.step()  # builds/loads everything; also the validation step
        h = model.state()
        if reference is None:
            reference = h
        elif not np.allclose(h, reference, rtol=1e-12, atol=1e-9):
            raise BenchmarkError(f"{backend} disagrees with numpy after one step")
        models[backend] = model
    # one row per backend and OpenMP thread count
    rows_of: dict[str, tuple[str, int]] = {}
    for backend in models:
        for threads in [1] if backend == "numpy" else args.threads:
            rows_of[backend if threads == 1 else f"{backend}, {threads} threads"] = (backend, threads)

    def threaded(row: str, what: str) -> Any:
        backend, threads = rows_of[row]
        fn = getattr(models[backend], what)

        def call() -> None:
            set_openmp_threads(threads)
            fn()

        return call

    # all rows timed in interleaved rounds: drift of the shared machine hits all alike
    round_s = args.min_round_ms / 1e3
    steps = time_interleaved({r: threaded(r, "step") for r in rows_of}, args.repeats,
                             min_round_seconds=round_s)  # fmt: skip
    halos = time_interleaved({r: threaded(r, "halo") for r in rows_of}, args.repeats,
                             min_round_seconds=round_s)  # fmt: skip
    for row, (backend, threads) in rows_of.items():
        model = models[backend]
        t, t_halo = steps[row], halos[row]
        set_openmp_threads(threads)
        shares = profile_step(model, args.repeats) if args.profile else None
        cells = 6 * n * n
        gbs = bytes_per_step / t.median_s / 1e9
        results[row] = {
            "backend": backend, "openmp_threads": threads, "step_ms": t.median_ms, "spread": t.spread,
            "steps_per_sample": t.calls_per_sample, "cell_updates_per_s": cells / t.median_s,
            "bytes_per_step": bytes_per_step, "achieved_GBs": gbs,
            "fraction_of_stream": gbs / stream.triad_gbs,
            "halo_share_in_process": t_halo.median_s / t.median_s, "profile": shares,
        }  # fmt: skip
    if args.kernels:  # last: the repeated launches change the models' states
        for row, (backend, threads) in rows_of.items():
            set_openmp_threads(threads)
            results[row]["kernels"] = kernel_times(models[backend])
    base = results["numpy"]["step_ms"]
    for r in results.values():
        r["speedup_vs_numpy"] = base / r["step_ms"]
    best = min(results, key=lambda b: results[b]["step_ms"])
    best_backend = results[best]["backend"]
    mpi = _mpi_share(best_backend, n, args.repeats, args.step) if args.mpi_ranks else None
    payload = {
        "benchmark": NAME, "step": args.step, "resolution": n, "machine": machine_info(),
        "stream_triad_GBs": stream.triad_gbs, "backends": results, "mpi_6_ranks": mpi,
        "best_backend": best,
    }  # fmt: skip
    write_json(args.json, payload)
    rows = [
        [b, f"{r['step_ms']:.1f}", f"{r['speedup_vs_numpy']:.1f}x", f"{r['cell_updates_per_s']:.3g}",
         f"{r['bytes_per_step'] / 1e6:.1f}", f"{r['achieved_GBs']:.2f}",
         f"{100 * r['fraction_of_stream']:.1f}%", f"{100 * r['halo_share_in_process']:.0f}%"]
        for b, r in results.items()
    ]  # fmt: skip
    md = [
        "# fv3core benchmark: one " + (
            "Williamson TC2 shallow-water dynamics step (d2a2c, c_sw, d_sw with two fvtp2d, "
            "hord 8, divergence damping, 4 halo updates)" if args.step == "dynamics"
            else "Williamson TC1 transport step (fvtp2d, hord 8)"),
        "",
        f"C{n}, 6 tiles, all ranks in one process; `stratoflow bench fv3 --resolution {n} "
        f"--step {args.step} --threads {' '.join(map(str, args.threads))} "
        f"--min-round-ms {args.min_round_ms:g} --json FILE`; "
        "rows without a thread count: 1 OpenMP thread. Each row's turn in a round is "
        f"consecutive steps lasting >= {args.min_round_ms:g} ms (steps per sample: "
        + ", ".join(f"{b} {r['steps_per_sample']}" for b, r in results.items())
        + "), all rows interleaved round by round. STREAM triad in the same run: "
        f"**{stream.triad_gbs:.1f} GB/s** "
        f"({stream.threads} threads). Machine: {payload['machine'].get('cpu', '?')}; "
        "shared and noisy (other jobs ran concurrently), so read ratios, not absolute times.",
        "",
        markdown_table(
            ["backend", "step (ms)", "vs numpy", "cell updates/s", "field MB/step",
             "GB/s", "of STREAM", "halo share (in-process)"], rows),  # fmt: skip
        "",
    ]
    if args.profile:
        cats = list(next(iter(results.values()))["profile"])
        md += [
            "Where a step's time goes (cProfile, cumulative, share of the profiled step; "
            "profiling inflates the Python parts):",
            "",
            markdown_table(["backend", *cats],
                           [[b, *(f"{100 * r['profile'][c]:.0f}%" for c in cats)]
                            for b, r in results.items()]),  # fmt: skip
            "",
        ]
    if args.kernels:
        md += _kernel_table(results)
    if mpi:
        md += [
            f"Under `mpiexec -n 6` ({best_backend}, 1 thread per rank): step "
            f"{1e3 * mpi['step_s']:.1f} ms, halo exchange {1e3 * mpi['halo_s']:.1f} ms = **{100 * mpi['halo_share']:.0f}%** of the step "
            "(max over ranks; 6 ranks on the machine's cores, MPICH busy-waits).",
            "",
        ]
    target = results[best]["speedup_vs_numpy"]
    md += [f"Target: best backend >= 20x numpy per step. Measured: {best} {target:.1f}x "
           f"({'met' if target >= 20 else 'not met'}).", ""]  # fmt: skip
    write_markdown(args.markdown, "\n".join(md))
    sys.stdout.write("\n".join(md) + "\n")
    return 0

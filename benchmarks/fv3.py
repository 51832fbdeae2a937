"""FV3 core performance: one large step of FV3's shallow-water core (Williamson TC2: per
acoustic step c_sw, p_grad_c, d_sw with fv_tp_2d and divergence damping, one_grad_p and their halo
updates) or of FV3's TC1 (d_sw's advection of delp), on the 6-tile sphere; and FV3's scheme on a
reference run's namelist next to GFDL's Fortran FV3.

Measures in one run: the STREAM triad; per backend the median time of a full step (all halo
exchanges included) on all 6 ranks in-process; cell updates per second; the field traffic per
step (every field a stencil touches counted once over its compute domain) as a fraction of the
triad bandwidth; and, under ``mpiexec -n 6`` (or 24), the share of step time spent in halo
exchange. Results are checked against the numpy backend first.

Then, on the fastest backend, fv3core's port of FV3's shallow-water ``dyn_core`` built from a
Fortran reference run's ``input.nml`` (``--fortran-run``): its large step under ``mpiexec -n 6``
and in-process against the Fortran run's ``FV_DYNAMICS`` clock, both per acoustic step
(:mod:`benchmarks.fortran_reference`); weak scaling on 6 and 24 ranks (C48 per rank); the peak
resident memory per rank at C48, C96, C192 and of the main job (:mod:`benchmarks.memory`).
Everything lands in ``--json``; the Markdown block is rendered from that JSON alone.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import shlex
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
    measured_or_loaded,
    set_openmp_threads,
    shown_path,
    stream_triad,
    time_call,
    time_interleaved,
    write_markdown,
)
from benchmarks.fortran_baroclinic import DEFAULT_MPIRUN as FORTRAN_MPIRUN
from benchmarks.fortran_baroclinic import check_executables, chosen_executable
from benchmarks.fortran_reference import DEFAULT_RUN, read_run
from benchmarks.fv3_mpi import fv3_mpi, mpi_python, one_thread_env

NAME = "fv3"
HELP = ("FV3 dynamics (or transport) step per backend vs numpy and STREAM; FV3's scheme vs "
        "GFDL's Fortran FV3; weak scaling on 6/24 ranks; peak memory per rank")
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
                   help="dynamics: FV3's TC2 shallow-water large step (default); transport: FV3's "
                   "TC1 large step (d_sw's advection of delp)")
    p.add_argument("--case", choices=["williamson2", "baroclinic"], default="williamson2",
                   help="williamson2: the shallow-water step of --step (default); baroclinic: "
                   "one large step of FV3's hydrostatic 3-D core on the JW06 wave with FV3's "
                   "JW options (time per step, halo share, memory per rank; its table is the "
                   "'baroclinic' block of --markdown)")
    p.add_argument("--levels", type=int, default=30,
                   help="--case baroclinic: FV3's npz (default 30)")
    p.add_argument("--non-hydrostatic", dest="hydrostatic", action="store_false",
                   help="--case baroclinic: FV3's non-hydrostatic core (hydrostatic = .false., "
                   "a_imp 0.75), against the Fortran run of the same namelist (its table is the "
                   "'baroclinic_nonhydrostatic' block of --markdown)")
    p.add_argument("--rtol", type=float, default=1e-9,
                   help="--case baroclinic: the largest relative difference from numpy after "
                   "one step a backend may have (default 1e-9)")
    p.add_argument("--mpi-ranks", type=int, default=6, choices=[0, 6, 24],
                   help="measure the halo-exchange share under mpiexec -n 6 (layout 1) or 24 "
                   "(layout 2) at --resolution (0 = skip; 0 also runs the FV3 peer in-process only)")
    p.add_argument("--fortran-run", type=Path, default=DEFAULT_RUN,
                   help="the Fortran FV3 reference run (input.nml + stdout.txt) to compare FV3's "
                   "scheme with, on its own namelist (default ../shared/fv3-reference/tc2_C48_d5)")
    p.add_argument("--no-peer", dest="fortran_run", action="store_const", const=None,
                   help="skip the comparison with the Fortran run")
    p.add_argument("--fortran-sw-exe", type=Path, default=None,
                   help="GFDL's Fortran FV3 shallow-water executable (benchmarks/fortran_fv3/"
                   "build.sh) to rerun --fortran-run's inputs with on this machine, before and "
                   "after fv3core's FV3-scheme timings: the ratio is then to the rerun's clock, "
                   "and the stored run's is shown for context (default "
                   "/work/fortran_fv3/bin/fv3_sw.x when it exists, else the stored clock alone)")
    p.add_argument("--fortran-exe", type=Path, default=None,
                   help="--case baroclinic: GFDL's Fortran FV3 hydrostatic executable to run "
                   "on the same case in the same run (DYCORE=hydrostatic "
                   "benchmarks/fortran_fv3/build.sh; default "
                   "/work/fortran_fv3_hydro/bin/fv3_hydro.x when it exists, else no Fortran "
                   "row); --no-peer skips it")
    p.add_argument("--fortran-mpirun", type=Path, default=FORTRAN_MPIRUN,
                   help="the Open MPI mpirun the Fortran models were built with (default "
                   "/usr/bin/mpirun)")
    p.add_argument("--fortran-days", type=int, default=1,
                   help="--case baroclinic: length of the Fortran run in days; its FV_DYNAMICS "
                   "clock is divided by its large steps (default 1)")
    p.add_argument("--peer-repeats", type=int, default=5,
                   help="timed large steps (dt_atmos) of FV3's scheme per run (default 5)")
    p.add_argument("--weak-layouts", type=int, nargs="*", default=[1, 2],
                   help="weak scaling of FV3's scheme under mpiexec: the Fortran run's C<N> per "
                   "rank on 6 layout^2 ranks, C<N*layout> (default 1 2; none: skip)")
    p.add_argument("--memory-resolutions", type=int, nargs="*", default=[48, 96, 192],
                   help="peak RSS per rank of FV3's scheme under mpiexec -n 6 at these C<N> "
                   "(default 48 96 192; none: skip)")
    p.add_argument("--memory-steps", type=int, default=2,
                   help="large steps of each memory run not already timed (default 2)")
    p.add_argument("--main-job", action="store_true",
                   help="also the peak memory of the main job (`stratoflow run`, every step, in "
                   "a fresh runs folder)")
    p.add_argument("--main-job-timeout", type=float, default=3600.0,
                   help="seconds before the main job is stopped (default 3600)")
    p.add_argument("--render-only", action="store_true",
                   help="no measurement: write the Markdown block from --json")
    p.add_argument("--profile", action="store_true",
                   help="also break each backend's step time down (cProfile, cumulative): "
                   "stencil kernels, halo exchange, NumPy vertex fixes/corner copies, rest")
    p.add_argument("--kernels", action="store_true",
                   help="also time every stencil launch, summed per stencil, twice: inside the "
                   "step (median of 10 steps) and warm (each repeated in place on its recorded "
                   "arguments); the difference is what the step's sequence costs each launch "
                   "(mostly its code starting cold, also its fields); --case baroclinic: every "
                   "stencil call of 3 large steps, timed where it runs, per stencil")
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


def _decomposition(n: int, mpi: bool = False, layout: int = 1):
    from fv3core.grid.decomposition import decompose

    return decompose(n, layout, mpi=mpi)


def _model(backend: str, n: int, decomposition=None, step: str = "dynamics", count: bool = False):
    """FV3's shallow-water core on ``backend`` for ``step``: ``dynamics`` the TC2 large step,
    ``transport`` FV3's TC1 (``d_sw``'s advection of ``delp``), with the defaults of ``fv3 run``
    (dt_atmos 1200 s in 4 acoustic steps); ``count``: its stencils count the bytes of the fields
    they touch (a wrapper that disables the bound fast path -- never timed)."""
    from fv3core.config import FV3Config
    from fv3core.experiments.driver import experiment_for
    from stencils.factory import StencilFactory

    decomposition = decomposition or _decomposition(n)
    factory = _CountingFactory(StencilFactory(backend)) if count else StencilFactory(backend)
    case = "williamson1" if step == "transport" else "williamson2"
    config = FV3Config.from_dict({"case": case, "resolution": n, "backend": backend},
                                 source="bench fv3")  # fmt: skip
    model = experiment_for(config).build(factory, decomposition, config.dt)
    return _ShallowWaterStep(model.dynamics), factory, decomposition.ranks


class _ShallowWaterStep:
    """Uniform view of FV3's shallow-water dynamics for the benchmark: one step is one large
    step (``n_split`` acoustic steps); :meth:`halo` runs each of its halo updaters once."""

    def __init__(self, dynamics: Any) -> None:
        self.model = dynamics
        h = dynamics.halos
        self.updaters = [g for g in (h.scalars, h.d_winds, h.c_winds, h.divergence, h.boundary)
                         if g is not None]  # fmt: skip
        self.exchanges = [ex for group in self.updaters for ex in group.exchanges]

    def step(self) -> None:
        self.model.step()

    def halo(self) -> None:
        for updater in self.updaters:
            updater.update()

    def state(self) -> np.ndarray:
        return np.concatenate([np.concatenate([d.arrays()["delp"].ravel(), d.arrays()["u"].ravel()])
                               for d in self.model.ranks.values()])  # fmt: skip


def _is_corner_copy(f: str, line: int, fn: str) -> bool:
    from fv3core.stencils.fv_tp_2d import CornerCopy, FlatCopy

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


def mpi_worker(backend: str, n: int, repeats: int, out: str, step: str = "dynamics",
               layout: int = 1) -> None:  # fmt: skip
    """Run under mpiexec -n 6 layout^2: per-rank step time and halo-exchange time; rank 0
    writes JSON."""
    decomposition = _decomposition(n, mpi=True, layout=layout)  # collective: all ranks at once
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


def _mpi_share(backend: str, n: int, repeats: int, step: str, layout: int = 1) -> dict[str, float]:
    ranks = 6 * layout**2
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "mpi.json"
        code = (f"from benchmarks.fv3 import mpi_worker; "
                f"mpi_worker({backend!r}, {n}, {repeats}, {str(out)!r}, {step!r}, {layout})")  # fmt: skip
        proc = subprocess.run(mpi_python(ranks, code), capture_output=True, text=True, env=one_thread_env())
        if proc.returncode != 0 or not out.exists():
            raise BenchmarkError(f"mpiexec -n {ranks} benchmark worker failed:\n"
                                 f"{proc.stderr[-2000:]}")  # fmt: skip
        data = json.loads(out.read_text())
    data["halo_share"] = data["halo_s"] / data["step_s"]
    data["ranks"], data["layout"], data["backend"] = ranks, layout, backend
    return data


def run(args: argparse.Namespace) -> int:
    if args.case == "baroclinic":
        from benchmarks.fv3_baroclinic import run as run_baroclinic

        return run_baroclinic(args)
    text = markdown(measured_or_loaded(args, measure))
    write_markdown(args.markdown, text)
    sys.stdout.write(text + "\n")
    return 0


def command_line(args: argparse.Namespace) -> str:
    """The ``stratoflow bench fv3`` command that reproduces ``args`` (every option given)."""
    parts = ["stratoflow", "bench", "fv3", "--resolution", str(args.resolution), "--step",
             args.step, "--backends", *args.backends, "--threads", *map(str, args.threads),
             "--repeats", str(args.repeats), "--min-round-ms", f"{args.min_round_ms:g}",
             "--mpi-ranks", str(args.mpi_ranks)]  # fmt: skip
    parts += ["--profile"] if args.profile else []
    parts += ["--kernels"] if args.kernels else []
    if args.fortran_run is not None:
        parts += ["--fortran-run", shown_path(args.fortran_run), "--peer-repeats",
                  str(args.peer_repeats)]  # fmt: skip
        sw_exe = fortran_sw_exe(args, warn=False)
        if sw_exe is not None:
            parts += ["--fortran-sw-exe", shown_path(sw_exe)]
    else:
        parts += ["--no-peer"]
    parts += ["--weak-layouts", *map(str, args.weak_layouts)]
    parts += ["--memory-resolutions", *map(str, args.memory_resolutions),
              "--memory-steps", str(args.memory_steps)]  # fmt: skip
    parts += ["--main-job"] if args.main_job else []
    parts += ["--json", shown_path(args.json)]
    return "OMP_NUM_THREADS=1 " + shlex.join(parts)


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Every measurement of ``args``: the payload of the JSON and the page."""
    from tqdm import tqdm

    n = args.resolution
    namelist_dir = args.fortran_run if args.fortran_run is not None else DEFAULT_RUN
    needs = args.fortran_run is not None or args.weak_layouts or args.memory_resolutions
    if needs and not (namelist_dir / "input.nml").is_file():
        raise BenchmarkError(f"{namelist_dir / 'input.nml'} not found: the FV3 peer, weak scaling "
                             "and memory runs use the Fortran reference run's namelist; pass "
                             "--fortran-run DIR, or --no-peer --weak-layouts --memory-resolutions "
                             "(no values) to skip them")  # fmt: skip
    sw_exe = fortran_sw_exe(args)
    if sw_exe is not None:  # before the long part: a missing executable fails at once
        check_executables(sw_exe, args.fortran_mpirun, build="benchmarks/fortran_fv3/build.sh",
                          exe_option="--fortran-sw-exe")  # fmt: skip
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
    models.clear()  # free the geometric models before the FV3 runs
    base = results["numpy"]["step_ms"]
    for r in results.values():
        r["speedup_vs_numpy"] = base / r["step_ms"]
    best = min(results, key=lambda b: results[b]["step_ms"])
    best_backend = results[best]["backend"]
    set_openmp_threads(1)
    mpi = None
    if args.mpi_ranks:
        layout = {6: 1, 24: 2}[args.mpi_ranks]
        mpi = _mpi_share(best_backend, n, args.repeats, args.step, layout)
    payload: dict[str, Any] = {
        "benchmark": NAME, "step": args.step, "resolution": n, "machine": machine_info(),
        "command": command_line(args), "arguments": {
            "threads": args.threads, "min_round_ms": args.min_round_ms, "repeats": args.repeats,
            "profile": args.profile, "kernels": args.kernels},
        "stream_triad_GBs": stream.triad_gbs, "stream_threads": stream.threads,
        "backends": results, "mpi": mpi, "best_backend": best,
    }  # fmt: skip
    done: dict[tuple[int, int], dict[str, Any]] = {}
    run_dir = args.fortran_run
    if run_dir is not None:
        rerun = None if sw_exe is None else (sw_exe, args.fortran_mpirun)
        payload["fortran_peer"] = fortran_peer(run_dir, best_backend, args.peer_repeats,
                                               mpi=bool(args.mpi_ranks), rerun=rerun)  # fmt: skip
        for row in payload["fortran_peer"]["rows"]:
            if row["processes"] > 1:
                done[(row["resolution"], row["layout"])] = row
    if args.weak_layouts:
        per_rank = read_run(namelist_dir).resolution
        payload["weak_scaling"] = weak_scaling(namelist_dir, best_backend, per_rank,
                                               args.weak_layouts, args.peer_repeats, done)  # fmt: skip
    if args.memory_resolutions:
        payload["memory"] = memory_runs(namelist_dir, best_backend, args.memory_resolutions,
                                        args.memory_steps, done)  # fmt: skip
    if args.main_job:
        payload["main_job_memory"] = main_job_memory(args.main_job_timeout)
    return payload



# --- FV3's scheme on the Fortran reference's namelist: the peer, memory per rank, weak scaling


def fv3_config(namelist: Path | str, backend: str, resolution: int | None = None,
               layout: int = 1) -> Any:  # fmt: skip
    """The Fortran reference run's namelist with FV3's scheme on
    ``backend``; another ``resolution`` scales ``n_split`` with it (the namelist's acoustic
    Courant number, as the reference runs do: C24 2, C48 4, C96 8)."""
    from fv3core.config import FV3Config
    from fv3core.namelist import read_namelist

    nml = read_namelist(namelist, check_supported=False)
    overrides: dict[str, Any] = {"backend": backend, "layout": layout}
    if resolution and resolution != nml.resolution:
        overrides.update(resolution=resolution,
                         n_split=max(1, nml.acoustic_steps * resolution // nml.resolution))  # fmt: skip
    return FV3Config.from_namelist(namelist, **overrides)


def _fv3_outputs(model: Any) -> np.ndarray:
    fields = model.output_fields()
    return np.concatenate([np.concatenate([f[k].ravel() for k in ("h", "u", "v")])
                           for _, f in sorted(fields.items())])  # fmt: skip


def fv3_in_process(config: Any, repeats: int) -> dict[str, Any]:
    """Median time of one large step (``dt_atmos``: ``n_split`` acoustic steps) of FV3's
    scheme, all ``6 * layout^2`` ranks in this process; checked against numpy first (other
    backends)."""
    from fv3core.experiments.driver import build_model

    _, _, model, _, dt = build_model(config)
    model.step()  # builds/loads everything; the validation step
    if config.backend != "numpy":
        _, _, reference, _, _ = build_model(dataclasses.replace(config, backend="numpy"))
        reference.step()
        if not np.allclose(_fv3_outputs(model), _fv3_outputs(reference), rtol=1e-12, atol=1e-9):
            raise BenchmarkError(f"FV3 scheme on {config.backend} disagrees with numpy after one "
                                 "large step")  # fmt: skip
        del reference
    halo0 = model.dynamics.halo_seconds
    t = time_call(model.step, repeats, warmup=0)
    halo = (model.dynamics.halo_seconds - halo0) / repeats
    return {"step_s": t.median_s, "min_s": t.min_s, "max_s": t.max_s, "repeats": repeats,
            "halo_s": halo, "halo_share": halo / t.median_s, "dt_atmos": dt}  # fmt: skip


def fortran_sw_exe(args: argparse.Namespace, warn: bool = True) -> Path | None:
    """The shallow-water executable to rerun the Fortran run with: ``--fortran-sw-exe``, else
    the default build's when it exists; None with ``--no-peer`` or when none is built (then the
    ratio is to the stored run's clock; logged with ``warn``)."""
    from benchmarks.fortran_rerun import DEFAULT_SW_EXE

    if args.fortran_run is None:
        return None
    return chosen_executable(args.fortran_sw_exe, DEFAULT_SW_EXE, "--fortran-sw-exe",
                             "benchmarks/fortran_fv3/build.sh", warn)  # fmt: skip


def fortran_peer(run_dir: Path, backend: str, repeats: int, mpi: bool,
                 rerun: tuple[Path, Path] | None = None) -> dict[str, Any]:  # fmt: skip
    """Our step of FV3's scheme on the Fortran run's own namelist (C<N>, ``dt_atmos``,
    ``n_split``), under ``mpiexec -n 6`` (``mpi``) and with the 6 ranks in this process, next
    to the Fortran ``FV_DYNAMICS`` clock per acoustic step (both exclude diagnostics).

    With ``rerun`` (the shallow-water executable and its ``mpirun``) the Fortran model reruns
    the run's inputs here before and after our timings, and the ratio is to the mean of the
    two reruns' clocks (``reruns``); ``fortran`` is always the stored run. Without it the
    ratio is to the stored run's clock."""
    from benchmarks.fortran_reference import read_run
    from benchmarks.fortran_rerun import rerun_reference

    stored = read_run(run_dir)
    config = fv3_config(stored.namelist, backend)
    reruns = [rerun_reference(run_dir, *rerun)] if rerun else []
    rows = []
    local = fv3_in_process(config, repeats)
    if mpi:
        row = fv3_mpi(config, repeats)
        rows.append({"label": f"mpiexec -n {row['ranks']}", "processes": row["ranks"], **row})
    if rerun:
        reruns.append(rerun_reference(run_dir, *rerun))
    clocks = [r["run"]["per_acoustic_step_s"]["FV_DYNAMICS"] for r in reruns]
    reference_s = float(np.mean(clocks)) if reruns else stored.per_acoustic_step("FV_DYNAMICS")
    rows.append({"label": "6 ranks in one process", "processes": 1, "ranks": 6,
                 "resolution": config.resolution, "layout": 1, "n_split": config.n_split,
                 "backend": backend, "acoustic_step_s": local["step_s"] / config.n_split,
                 **local})  # fmt: skip
    for row in rows:
        row["ratio_vs_fortran"] = row["acoustic_step_s"] / reference_s
    out = {"fortran": stored.to_json(), "fortran_acoustic_step_s": reference_s, "rows": rows}
    if reruns:
        out["reruns"] = reruns
    return out


def weak_scaling(run_dir: Path, backend: str, per_rank: int, layouts: list[int], repeats: int,
                 done: dict[tuple[int, int], dict[str, Any]]) -> list[dict[str, Any]]:  # fmt: skip
    """FV3's step under ``mpiexec -n 6 layout^2`` at C``per_rank * layout`` (the same cells per
    rank; ``n_split`` scaled with the resolution, so the time per acoustic step is the
    comparable one); ``done``: runs already made, keyed by (resolution, layout)."""
    rows = []
    for layout in layouts:
        n = per_rank * layout
        row = done.get((n, layout)) or fv3_mpi(fv3_config(run_dir / "input.nml", backend, n,
                                                          layout), repeats)  # fmt: skip
        done[(n, layout)] = row
        rows.append(row)
    base = rows[0]["acoustic_step_s"]
    for row in rows:
        row["cells_per_rank"] = (row["resolution"] // row["layout"]) ** 2
        row["weak_efficiency"] = base / row["acoustic_step_s"]
    return rows


def memory_runs(run_dir: Path, backend: str, resolutions: list[int], steps: int,
                done: dict[tuple[int, int], dict[str, Any]]) -> list[dict[str, Any]]:  # fmt: skip
    """Peak RSS per rank of FV3's scheme under ``mpiexec -n 6`` at each resolution (``steps``
    timed large steps; the runs of ``done`` are reused)."""
    rows = []
    for n in resolutions:
        row = done.get((n, 1)) or fv3_mpi(fv3_config(run_dir / "input.nml", backend, n), steps)
        done[(n, 1)] = row
        rows.append(row)
    return rows


def _largest_from(run: dict[str, Any]) -> str:
    """How a run's largest-process figure was taken (runs before the sampled ``VmHWM`` read
    ``wait4``'s ``ru_maxrss``, which includes the benchmark's own RSS when it started the job)."""
    if run.get("largest_process_from") == "VmHWM":
        return "the largest `VmHWM` of the tree's processes, sampled"
    return ("`wait4`'s `ru_maxrss`: an upper bound that includes this benchmark process's own "
            "RSS when it started the job")


def main_job_memory(timeout: float) -> dict[str, Any]:
    """Peak memory of the main job (``stratoflow run``, no arguments: what ``make run`` runs)
    in a fresh runs folder and database, so every step runs."""
    from benchmarks.memory import peak_memory

    exe = Path(sys.executable).with_name("stratoflow")
    with tempfile.TemporaryDirectory(prefix="stratoflow-main-job-") as tmp:
        cmd = [str(exe), "run", "--no-progress", "--runs-dir", tmp, "--db", f"{tmp}/stratoflow.db"]
        env = {**os.environ, "PATH": f"{exe.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
        usage, _, err = peak_memory(cmd, env=env, timeout=timeout)
    if usage.returncode != 0:
        raise BenchmarkError(f"the main job ({' '.join(cmd)}) failed:\n{err[-2000:]}")
    return {**usage.to_json(), "command": "stratoflow run", "largest_process_from": "VmHWM"}


# --- the generated Markdown block: every figure from the payload (the JSON)


def markdown(payload: dict[str, Any]) -> str:
    """The ``benchmark`` block of docs/benchmarks/fv3core.md from a payload of :func:`measure`
    (the JSON), so that the block can be rebuilt from the JSON alone (``--render-only``)."""
    md = _step_section(payload)
    if payload.get("fortran_peer"):
        md += _peer_section(payload["fortran_peer"])
    if payload.get("weak_scaling"):
        md += _weak_section(payload["weak_scaling"], payload["machine"])
    if payload.get("memory") or payload.get("main_job_memory"):
        md += _memory_section(payload.get("memory") or [], payload.get("main_job_memory"))
    md += [f"Reproduce: `{payload['command']}`", ""]
    return "\n".join(md)


def _step_section(payload: dict[str, Any]) -> list[str]:
    results, a, n = payload["backends"], payload["arguments"], payload["resolution"]
    rows = [
        [b, f"{r['step_ms']:.1f}", f"{r['speedup_vs_numpy']:.1f}x", f"{r['cell_updates_per_s']:.3g}",
         f"{r['bytes_per_step'] / 1e6:.1f}", f"{r['achieved_GBs']:.2f}",
         f"{100 * r['fraction_of_stream']:.1f}%", f"{100 * r['halo_share_in_process']:.0f}%"]
        for b, r in results.items()
    ]  # fmt: skip
    md = [
        "# fv3core benchmark: one " + (
            "Williamson TC2 large step of FV3's shallow-water core (4 acoustic steps of c_sw, "
            "p_grad_c, d_sw with fv_tp_2d hord 8 and nord 2 divergence damping, one_grad_p; "
            "their halo updates)"
            if payload["step"] == "dynamics" else "FV3's TC1 large step (d_sw's advection of delp, hord 8)"),
        "",
        f"C{n}, 6 tiles, all ranks in one process; rows without a thread count: 1 OpenMP "
        f"thread. Each row's turn in a round is consecutive steps lasting >= "
        f"{a['min_round_ms']:g} ms (steps per sample: "
        + ", ".join(f"{b} {r['steps_per_sample']}" for b, r in results.items())
        + f"), {a['repeats']} rounds, all rows interleaved round by round. STREAM triad in the "
        f"same run: **{payload['stream_triad_GBs']:.1f} GB/s** ({payload.get('stream_threads', '?')} "
        f"threads). Machine: {payload['machine'].get('cpu', '?')}, "
        f"{payload['machine'].get('cores', '?')} cores, load {payload['machine'].get('load_avg_1min', 0):.1f} "
        f"at the start; read ratios, not absolute times.",
        "",
        markdown_table(["backend", "step (ms)", "vs numpy", "cell updates/s", "field MB/step",
                        "GB/s", "of STREAM", "halo share (in-process)"], rows),  # fmt: skip
        "",
    ]
    if a.get("profile"):
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
    if a.get("kernels"):
        md += _kernel_table(results)
    mpi = payload.get("mpi")
    if mpi:
        md += [
            f"Under `mpiexec -n {mpi.get('ranks', 6)}` ({mpi.get('backend', payload['best_backend'])}, "
            f"1 thread per rank): step {1e3 * mpi['step_s']:.1f} ms, halo exchange "
            f"{1e3 * mpi['halo_s']:.1f} ms = **{100 * mpi['halo_share']:.0f}%** of the step (max "
            "over ranks; the ranks share the machine's cores, MPICH busy-waits).",
            "",
        ]  # fmt: skip
    best = payload["best_backend"]
    target = results[best]["speedup_vs_numpy"]
    md += [f"Target: best backend >= 20x numpy per step. Measured: {best} {target:.1f}x "
           f"({'met' if target >= 20 else 'not met'}).", ""]  # fmt: skip
    return md


def _fortran_rows(f: dict[str, Any], label: str, reference: bool) -> list[list[str]]:
    """The ``FV_DYNAMICS`` and ``MAIN: time loop`` rows of one Fortran run (JSON of
    :meth:`FortranRun.to_json`)."""
    per = f["per_acoustic_step_s"]
    return [
        [f"GFDL Fortran FV3, {label}, `FV_DYNAMICS` clock", f"{f['ranks']} MPI", "gfortran -O2",
         f"{1e3 * per['FV_DYNAMICS'] * f['n_split']:.2f}", f"**{1e3 * per['FV_DYNAMICS']:.2f}**",
         "", "1 (reference)" if reference else ""],
        [f"GFDL Fortran FV3, {label}, `MAIN: time loop` (diagnostics and output included)",
         f"{f['ranks']} MPI", "gfortran -O2", f"{1e3 * per['MAIN: time loop'] * f['n_split']:.2f}",
         f"{1e3 * per['MAIN: time loop']:.2f}", "", ""],
    ]  # fmt: skip


def _peer_section(peer: dict[str, Any]) -> list[str]:
    reruns = peer.get("reruns") or []
    f = peer["fortran"]
    clocks = f["clocks"]
    dyn, loop = clocks["FV_DYNAMICS"], clocks["MAIN: time loop"]
    rows: list[list[str]] = []
    for when, rerun in zip(("before", "after"), reruns):
        rows += _fortran_rows(rerun["run"], f"rerun here {when} ours", reference=False)
    if reruns:
        rows.append(["GFDL Fortran FV3, the reruns' mean `FV_DYNAMICS`", f"{f['ranks']} MPI",
                     "gfortran -O2", f"{1e3 * peer['fortran_acoustic_step_s'] * f['n_split']:.2f}",
                     f"**{1e3 * peer['fortran_acoustic_step_s']:.2f}**", "", "1 (reference)"])  # fmt: skip
    rows += _fortran_rows(f, "the stored run" if reruns else "the stored run, reference",
                          reference=not reruns)  # fmt: skip
    for r in peer["rows"]:
        rows.append([f"fv3core, FV3 scheme, {r['label']}",
                     f"{r['ranks']} ({r['processes']} process{'es' if r['processes'] > 1 else ''})",
                     r["backend"], f"{1e3 * r['step_s']:.1f}", f"**{1e3 * r['acoustic_step_s']:.2f}**",
                     f"{100 * r['halo_share']:.0f}%", f"**{r['ratio_vs_fortran']:.2f}x**"])  # fmt: skip
    md = [
        f"## FV3's scheme against GFDL's Fortran FV3: TC2 C{f['resolution']}, one acoustic step",
        "",
        f"The same configuration on both sides: Fortran run `{f['run']}` "
        f"(`{shown_path(f['namelist'])}`: C{f['resolution']}, layout {f['layout']}, dt_atmos "
        f"{f['dt_atmos']:g} s, n_split {f['n_split']}, so one acoustic step is "
        f"{f['acoustic_dt']:g} s; {f['run_seconds'] / 86400:g} days = {f['large_steps']} large "
        f"steps = {f['acoustic_steps']} acoustic steps) and fv3core's FV3 scheme "
        "(`dynamics: fv3`: c_sw, d_sw, FV3's halo updates) built from that `input.nml` "
        "(`FV3Config.from_namelist`). Our timed step is one large step (`fv_dynamics`: n_split "
        "acoustic steps of `dyn_core`, no diagnostics), median of "
        f"{peer['rows'][0]['repeats']} after one untimed step; the acoustic step is it / n_split. "
        "The Fortran acoustic step is its `FV_DYNAMICS` clock (every `fv_dynamics` call: the "
        "same work, diagnostics excluded) / the acoustic steps; the time loop (with `FV_DIAG`: "
        "norms every 6 h, netCDF output) is shown for context. Ratio: our acoustic step / "
        "Fortran's (< 1: faster).",
        "",
    ]
    if reruns:
        diffs = [r["output_vs_reference"] for r in reruns]
        same = all(d["identical"] for d in diffs)
        md += [
            f"The Fortran model (`{reruns[0]['exe']}`, built by `benchmarks/fortran_fv3/"
            "build.sh`) reran the stored run's inputs on this machine in this benchmark run, "
            "once before and once after fv3core's timings; the ratio is to the mean of the two "
            "reruns' clocks. Their output "
            + ("equals the stored run's bit for bit" if same else "differs from the stored run's")
            + f" ({diffs[0]['variables']} variables of {diffs[0]['files']} `atmos_out` tile "
            f"files, largest absolute difference {max(d['max_abs_difference'] for d in diffs):g}"
            + (f"; missing: {', '.join(diffs[0]['missing'])}" if diffs[0]["missing"] else "")
            + ("), so they are the stored run's model; its clock is shown for context." if same
               else "): the table's reference is a build that is not the stored run's model."),
            "",
        ]  # fmt: skip
    md += [
        markdown_table(["run", "ranks", "build", "large step (ms)", "acoustic step (ms)",
                        "halo share", "vs Fortran"], rows),  # fmt: skip
        "",
        f"Provenance of the stored Fortran figures: `{shown_path(f['stdout'])}` line {dyn['line']} "
        f"(`FV_DYNAMICS` {dyn['seconds']:g} s, root PE's `fv_timing` block) and line "
        f"{loop['line']} (`MAIN: time loop` tmax {loop['seconds']:g} s over {f['ranks']} PEs, "
        "`mpp_clock` table); step counts from the namelist. "
        + ("The reruns' figures come from the same two tables of their own stdout (kept in the "
           "JSON with their line numbers)." if reruns else
           "The stored run and ours ran at different times on different machines, so the "
           "ratio carries the noise of two shared machines."),
        "",
    ]  # fmt: skip
    return md


def _weak_section(rows: list[dict[str, Any]], machine: dict[str, Any]) -> list[str]:
    table = [[f"C{r['resolution']}", r["layout"], r["ranks"], r["cells_per_rank"], r["n_split"],
              f"{1e3 * r['acoustic_step_s']:.1f}", f"{100 * r['halo_share']:.0f}%",
              f"{r['weak_efficiency']:.2f}", f"{r['rss_per_rank_MB_max']:.0f}"]
             for r in rows]  # fmt: skip
    return [
        "## Weak scaling of FV3's scheme under mpiexec (oversubscribed)",
        "",
        f"The same cells per rank on 6 layout^2 ranks ({rows[0]['backend']}, 1 thread per rank, "
        "one process per rank, n_split scaled with the resolution so the acoustic Courant number "
        "is the Fortran namelist's; time per acoustic step, max over ranks). **Oversubscribed**: "
        f"the machine has {machine.get('cores', '?')} cores, so {rows[-1]['ranks']} ranks take "
        "turns on them and MPICH's ranks busy-wait; the efficiency (first row's acoustic step / "
        "this row's) measures the machine, not the code's scaling.",
        "",
        markdown_table(["grid", "layout", "ranks", "cells per rank", "n_split",
                        "acoustic step (ms)", "halo share", "weak efficiency",
                        "peak RSS per rank (MB)"], table),  # fmt: skip
        "",
    ]


def _memory_section(rows: list[dict[str, Any]], main_job: dict[str, Any] | None) -> list[str]:
    md = ["## Peak resident memory", ""]
    if rows:
        table = [[f"C{r['resolution']}", r["ranks"], r["repeats"] + 1,
                  f"{r['rss_per_rank_MB_max']:.0f}", f"{r['rss_per_rank_MB_min']:.0f}",
                  f"{r['process_tree']['tree_peak_MB']:.0f}"] for r in rows]  # fmt: skip
        md += [
            f"FV3's scheme under `mpiexec -n 6` ({rows[0]['backend']}): each rank's own peak RSS "
            "(`getrusage`, max and min over the ranks; the Python interpreter, NumPy, GT4Py and "
            "the loaded stencil modules included) and the largest sum of the RSS of the whole "
            "mpiexec process tree sampled every 0.1 s (`benchmarks/memory.py`).",
            "",
            markdown_table(["grid", "ranks", "large steps", "peak RSS per rank, max (MB)",
                            "min (MB)", "process tree peak (MB)"], table),  # fmt: skip
            "",
        ]
    if main_job:
        md += [
            f"The main job (`{main_job['command']}`, every step in a fresh runs folder, "
            f"{main_job['wall_s']:.0f} s): largest single process **"
            f"{main_job['largest_process_MB']:.0f} MB** peak RSS ({_largest_from(main_job)}), "
            f"whole process tree **{main_job['tree_peak_MB']:.0f} MB** at its sampled peak "
            f"({main_job['tree_peak_processes']} processes then).",
            "",
        ]
    return md

"""FV3's hydrostatic 3-D core on the JW06 baroclinic wave (``stratoflow bench fv3 --case
baroclinic``): one large step (``dt_atmos``: ``k_split`` x (``n_split`` acoustic steps of
``dyn_core``, tracer transport, vertical remapping)) with FV3's JW options at C<N> L<levels>.

Measures in one run, per backend: the median time of a large step with all 6 ranks in this
process (all backends interleaved round by round, after one validation step checked against
numpy), its spread, the share of ``dyn_core``'s halo updates in it, and the memory per rank (the
model's field storages per rank, and the process's peak resident set size divided by the
ranks); then the fastest backend's step under ``mpiexec -n 6`` (``--mpi-ranks``) and GFDL's
Fortran FV3 on the same case (:mod:`benchmarks.fortran_baroclinic`, where it is built).
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import resource
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import (
    BenchmarkError,
    git_revision,
    machine_info,
    markdown_table,
    measured_or_loaded,
    set_openmp_threads,
    stream_triad,
    time_interleaved,
)

log = logging.getLogger(__name__)

#: the outputs compared with numpy's after the validation step
CHECKED = ("ps", "temperature", "ua", "va", "delp")


class BaroclinicStep:
    """One backend's JW model, built as ``stratoflow fv3 run --case baroclinic`` builds it."""

    def __init__(self, backend: str, resolution: int, levels: int, days: float = 1.0,
                 hydrostatic: bool = True) -> None:  # fmt: skip
        from fv3core.config import FV3Config
        from fv3core.experiments.driver import build_model

        self.config = FV3Config.from_dict({"case": "baroclinic", "resolution": resolution,
                                           "nz": levels, "backend": backend, "days": days,
                                           "hydrostatic": hydrostatic}, source="bench")  # fmt: skip
        _, self.decomposition, self.model, _, self.dt = build_model(self.config)
        self.ranks = self.decomposition.total_ranks

    def step(self) -> None:
        self.model.step()

    @property
    def halo_seconds(self) -> float:
        return self.model.dynamics.halo_seconds

    def fields(self) -> dict[str, np.ndarray]:
        out = self.decomposition.gather_fields(self.model.output_fields())
        return {k: out[k] for k in CHECKED}

    def storage_bytes_per_rank(self) -> float:
        """Bytes of the field storages the model holds, per rank (arrays reachable from the
        ranks' state objects, each counted once)."""
        seen: set[int] = set()
        total = 0

        def visit(obj: Any, depth: int) -> None:
            nonlocal total
            if id(obj) in seen or depth > 4:
                return
            seen.add(id(obj))
            nbytes = getattr(obj, "nbytes", None)
            if isinstance(nbytes, int) and hasattr(obj, "shape"):
                total += nbytes
                return
            if isinstance(obj, dict):
                items = obj.values()
            elif isinstance(obj, list | tuple):
                items = obj
            elif hasattr(obj, "__dict__"):
                items = vars(obj).values()
            else:
                return
            for item in items:
                visit(item, depth + 1)

        dynamics = self.model.dynamics
        for r in dynamics.ranks.values():
            visit(r, 0)
        return total / self.ranks


def run(args: argparse.Namespace) -> int:
    text = markdown(measured_or_loaded(args, measure))
    if args.markdown is not None:
        from stencils.atomic import atomic_update_block

        atomic_update_block(args.markdown, block_name(args.hydrostatic), text)
    sys.stdout.write(text + "\n")
    return 0


def fortran_exe(args: argparse.Namespace) -> Path | None:
    """The Fortran executable to compare with: ``--fortran-exe``, else the default build's
    when it exists; None with ``--no-peer`` or when none is built (logged)."""
    from benchmarks.fortran_baroclinic import DEFAULT_EXE, chosen_executable

    if args.fortran_run is None:
        return None
    return chosen_executable(args.fortran_exe, DEFAULT_EXE, "--fortran-exe",
                             "DYCORE=hydrostatic benchmarks/fortran_fv3/build.sh")  # fmt: skip


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Every measurement of ``args``: the payload of the JSON and the page."""
    from tqdm import tqdm

    n, levels = args.resolution, args.levels
    exe = fortran_exe(args)
    if exe is not None:  # before the long part: a missing executable fails at once
        from benchmarks.fortran_baroclinic import check_executables

        check_executables(exe, args.fortran_mpirun)
    backends = ["numpy"] + [b for b in args.backends if b != "numpy"]
    models: dict[str, BaroclinicStep] = {}
    reference: dict[str, np.ndarray] | None = None
    deviation: dict[str, float] = {}
    for backend in tqdm(backends, desc="fv3 baroclinic bench: build", unit="backend",
                        disable=None):  # fmt: skip
        model = BaroclinicStep(backend, n, levels, hydrostatic=args.hydrostatic)
        model.step()  # builds/loads every stencil; the validation step
        fields = model.fields()
        if reference is None:
            reference = fields
        worst = max(float(np.abs(fields[k] - reference[k]).max() / np.abs(reference[k]).max())
                    for k in CHECKED)  # fmt: skip
        if not worst <= args.rtol:
            raise BenchmarkError(f"{backend} disagrees with numpy after one step: max relative "
                                 f"difference {worst:.3g} > --rtol {args.rtol:g}")  # fmt: skip
        deviation[backend] = worst
        models[backend] = model
    set_openmp_threads(1)
    halo_before = {b: m.halo_seconds for b, m in models.items()}
    # no warm-up and one step per turn: each backend steps args.repeats times
    steps = time_interleaved({b: m.step for b, m in models.items()}, args.repeats, warmup=0)
    triad = stream_triad(threads=1)  # the machine's limit for the 1-thread steps, this run
    results: dict[str, Any] = {}
    for backend, model in models.items():
        t = steps[backend]
        halo = (model.halo_seconds - halo_before[backend]) / args.repeats
        per_rank = model.storage_bytes_per_rank()
        results[backend] = {
            "step_s": t.median_s, "min_s": t.min_s, "max_s": t.max_s, "spread": t.spread,
            "repeats": t.repeats, "halo_share_in_process": halo / t.median_s,
            "max_relative_difference_vs_numpy": deviation[backend],
            "storage_MB_per_rank": per_rank / 1e6,
            # how often the whole model state could stream through memory in one step
            "state_passes_at_triad": t.median_s * triad.triad_gbs * 1e9 / (per_rank * model.ranks),
        }  # fmt: skip
    base = results["numpy"]["step_s"]
    for r in results.values():
        r["speedup_vs_numpy"] = base / r["step_s"]
    if args.kernels:  # after the timed steps: these steps run the models on
        for backend, model in models.items():
            results[backend]["kernels"] = stencil_times(model, KERNEL_STEPS)
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: kB
    best = min(results, key=lambda b: results[b]["step_s"])
    best_config = models[best].config
    cfg = models["numpy"].config
    payload: dict[str, Any] = {
        "benchmark": "fv3", "case": "baroclinic", "resolution": n, "levels": levels,
        "hydrostatic": args.hydrostatic,
        "dt_atmos": models["numpy"].dt, "k_split": cfg.k_split, "n_split": cfg.n_split,
        "repeats": args.repeats, "machine": machine_info(), "revision": git_revision(),
        "stream_triad_GBps_1_thread": triad.triad_gbs, "backends": results,
        "process_peak_rss_MB_per_rank": peak_rss / 1e6 / models["numpy"].ranks,
    }  # fmt: skip
    del models, reference  # the MPI ranks and the Fortran run get the machine's memory
    if args.mpi_ranks:
        from benchmarks.fv3_mpi import fv3_mpi

        layout = 1 if args.mpi_ranks == 6 else 2
        row = fv3_mpi(dataclasses.replace(best_config, layout=layout), args.repeats)
        payload["mpi"] = {k: v for k, v in row.items() if k != "process_tree"}
    if exe is not None:
        from benchmarks.fortran_baroclinic import run_fortran

        fortran = run_fortran(best_config, exe, args.fortran_mpirun, args.fortran_days)
        payload["fortran"] = fortran
        payload["stream_triad_GBps_1_thread_after_fortran"] = stream_triad(threads=1).triad_gbs
        for r in results.values():
            r["ratio_vs_fortran"] = r["step_s"] / fortran["step_s"]
        if "mpi" in payload:
            payload["mpi"]["ratio_vs_fortran"] = payload["mpi"]["step_s"] / fortran["step_s"]
    return payload


#: large steps whose stencil calls ``--kernels`` times
KERNEL_STEPS = 3
#: stencils shown in the ``--kernels`` table (the best backend's slowest)
KERNEL_ROWS = 20


def stencil_times(model: BaroclinicStep, steps: int) -> dict[str, Any]:
    """Per stencil name, its calls and seconds per large step, the mean over ``steps`` steps
    (:func:`stencils.profiling.stencil_call_times`: every call, bound or not), slowest first; and
    the share of those steps' wall time spent in stencil calls."""
    from stencils.profiling import stencil_call_times

    totals: dict[str, list[float]] = {}
    start = time.perf_counter()
    for _ in range(steps):
        for name, (calls, seconds) in stencil_call_times(model.step).items():
            entry = totals.setdefault(name, [0.0, 0.0])
            entry[0] += calls / steps
            entry[1] += seconds / steps
    step_s = (time.perf_counter() - start) / steps
    per_stencil = {name: {"calls_per_step": c, "seconds_per_step": t}
                   for name, (c, t) in sorted(totals.items(), key=lambda kv: -kv[1][1])}  # fmt: skip
    in_stencils = sum(e["seconds_per_step"] for e in per_stencil.values())
    return {"steps": steps, "step_s": step_s, "stencil_share": in_stencils / step_s,
            "stencils": per_stencil}  # fmt: skip


def _kernel_section(payload: dict[str, Any]) -> list[str]:
    timed = {b: r["kernels"] for b, r in payload["backends"].items() if r.get("kernels")}
    best = min(timed, key=lambda b: timed[b]["step_s"])
    names = list(timed[best]["stencils"])[:KERNEL_ROWS]
    rows = []
    for name in names:
        row = [f"`{name}`", f"{timed[best]['stencils'][name]['calls_per_step']:.0f}"]
        for k in timed.values():
            e = k["stencils"].get(name)
            row.append(f"{1e3 * e['seconds_per_step']:.1f} ({100 * e['seconds_per_step'] / k['step_s']:.0f}%)"
                       if e else "")  # fmt: skip
        rows.append(row)
    rows.append(["**all stencils**", f"{sum(e['calls_per_step'] for e in timed[best]['stencils'].values()):.0f}",
                 *(f"**{1e3 * k['step_s'] * k['stencil_share']:.0f} ({100 * k['stencil_share']:.0f}%)**"
                   for k in timed.values())])  # fmt: skip
    return [
        f"Where a step's time goes (`--kernels`): every stencil call of {timed[best]['steps']} "
        "large steps timed where it runs (bound or not; `stencils.profiling.stencil_call_times`), "
        "ms per step with its share of those steps' wall time; the rest is halo updates, "
        f"corner copies and Python. The {KERNEL_ROWS} slowest stencils on {best}:",
        "",
        markdown_table(["stencil", "calls per step", *(f"{b} ms (share)" for b in timed)], rows),
        "",
    ]


def block_name(hydrostatic: bool) -> str:
    """The block of docs/benchmarks/fv3core.md each core's table is."""
    return "baroclinic" if hydrostatic else "baroclinic_nonhydrostatic"


def markdown(payload: dict[str, Any]) -> str:
    """The generated block of ``payload`` (the ``baroclinic`` block of docs/benchmarks/fv3core.md)."""
    n, levels = payload["resolution"], payload["levels"]
    hydrostatic = payload.get("hydrostatic", True)
    core, option = ("hydrostatic", "") if hydrostatic else ("non-hydrostatic", " --non-hydrostatic")
    rows = [[b, f"{r['step_s']:.2f}", f"{100 * r['spread']:.0f}%", f"{r['speedup_vs_numpy']:.1f}x",
             f"{100 * r['halo_share_in_process']:.0f}%", f"{r['storage_MB_per_rank']:.0f}",
             f"{r['state_passes_at_triad']:.0f}", f"{r['max_relative_difference_vs_numpy']:.1e}"]
            for b, r in payload["backends"].items()]  # fmt: skip
    lines = [
        f"# fv3core benchmark: one large step of FV3's {core} 3-D core, JW06 baroclinic "
        f"wave, C{n} L{levels}",
        "",
        f"`stratoflow bench fv3 --case baroclinic{option} --resolution {n} --levels {levels} --repeats "
        f"{payload.get('repeats', '?')} --json FILE` (revision {payload.get('revision', '?')}): "
        f"dt_atmos {payload['dt_atmos']:g} s = k_split "
        f"{payload['k_split']} x n_split {payload['n_split']} acoustic steps, FV3's JW options "
        "(hord 10, hord_tr 8, kord 8/-8/8, nord 1, d4_bg 0.12), the 6 ranks in one process, 1 "
        "OpenMP thread; the median of the repeats, backends interleaved round by round; spread "
        "(max - min) / median. Halo share: dyn_core's halo updates (in-process copies) over the "
        "step. Storage: the model's field storages per rank. State passes: the step time x "
        f"the 1-thread STREAM triad measured in this run ({payload['stream_triad_GBps_1_thread']:.1f} "
        "GB/s) / the whole model state, i.e. how many times the step could have streamed every "
        "field through memory (1 would be bandwidth-bound on one sweep). Each backend's first step is "
        "compared with numpy's (max relative difference of ps, T, ua, va, delp). Machine: "
        f"{payload['machine'].get('cpu', '?')}; shared and noisy.",
        "",
        markdown_table(["backend", "step (s)", "spread", "vs numpy", "halo share",
                        "storage MB/rank", "state passes at triad", "vs numpy after 1 step"],
                       rows),  # fmt: skip
        f"Process peak RSS / 6 ranks: {payload['process_peak_rss_MB_per_rank']:.0f} MB (every "
        "backend's model in one process).",
        "",
    ]
    if any(r.get("kernels") for r in payload["backends"].values()):
        lines += _kernel_section(payload)
    if payload.get("mpi"):
        m = payload["mpi"]
        lines += [f"Under `mpiexec -n {m['ranks']}` ({m['backend']}, 1 thread per rank, "
                  f"{m['repeats']} steps): {m['step_s']:.2f} s per step (max over ranks), "
                  f"halo updates {100 * m['halo_share']:.0f}% of it, peak RSS per rank "
                  f"{m['rss_per_rank_MB_min']:.0f}-{m['rss_per_rank_MB_max']:.0f} MB.", ""]  # fmt: skip
    if payload.get("fortran"):
        lines += _fortran_section(payload)
    return "\n".join(lines)


def _fortran_section(payload: dict[str, Any]) -> list[str]:
    f = payload["fortran"]
    rows = [["GFDL Fortran FV3, `FV_DYNAMICS` clock", f"mpirun -np {f['ranks']} (Open MPI)",
             f"{f['step_s']:.2f}", "1.00x"],
            ["GFDL Fortran FV3, `MAIN: time loop` (diagnostics and output included)",
             f"mpirun -np {f['ranks']} (Open MPI)", f"{f['time_loop_step_s']:.2f}",
             f"{f['time_loop_step_s'] / f['step_s']:.2f}x"]]  # fmt: skip
    if payload.get("mpi"):
        m = payload["mpi"]
        rows.append([f"fv3core {m['backend']}", f"mpiexec -n {m['ranks']} (MPICH)",
                     f"{m['step_s']:.2f}", f"**{m['ratio_vs_fortran']:.2f}x**"])  # fmt: skip
    for b, r in payload["backends"].items():
        rows.append([f"fv3core {b}", "6 ranks in one process (1 core)", f"{r['step_s']:.2f}",
                     f"{r['ratio_vs_fortran']:.2f}x"])  # fmt: skip
    prov = f.get("provenance", {})
    return [
        f"## Against GFDL's Fortran FV3 in the same run: C{payload['resolution']} "
        f"L{payload['levels']}, one large step",
        "",
        f"The same case on both sides: `jw_cases.sh --row \"{f['case']}\"` wrote the Fortran "
        "run's namelist, and the benchmark checked that fv3core reads it as the model it timed "
        f"(every key but the run length). The Fortran run: {f['large_steps']} large steps, its "
        "root PE's `FV_DYNAMICS` clock (every `fv_dynamics` call, no diagnostics) over them; "
        f"gfortran -O2 (`{prov.get('fv3_flags', '?')}`), {prov.get('mpi', '?')}, FV3 "
        f"{prov.get('fv3', '?')[:10]}. Ratio: time per step over the Fortran model's (below 1: "
        "faster). The MPI rows put 6 ranks on the machine's cores (oversubscribed alike); the "
        "in-process rows use one core. STREAM triad (1 thread) before and after the Fortran "
        f"run: {payload['stream_triad_GBps_1_thread']:.1f} and "
        f"{payload.get('stream_triad_GBps_1_thread_after_fortran', float('nan')):.1f} GB/s.",
        "",
        markdown_table(["model", "processes", "step (s)", "vs Fortran"], rows),
    ]

"""Run an FV3 case end to end, whatever its model: decomposition, time step from the CFL
estimate, serial stencil-cache warm-up, time loop, gathered fields and diagnostics
(:func:`run`); :mod:`fv3core.output.netcdf` writes the result."""

from __future__ import annotations

import logging
import time
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fv3core.config import FV3Config
from fv3core.experiments.experiment import Experiment, GlobalGrid
from fv3core.grid.decomposition import decompose
from stencils.factory import StencilFactory

log = logging.getLogger(__name__)


@dataclass
class RunResult:
    """What a run produced (global fields only on the root rank)."""

    config: FV3Config
    steps: int
    dt: float
    seconds: float
    is_root: bool
    fields: dict[str, np.ndarray] = field(default_factory=dict)  # name -> (6, N, N)
    lon: np.ndarray | None = None  # (6, N, N) cell centres, degrees
    lat: np.ndarray | None = None
    area: np.ndarray | None = None
    diagnostics: dict[str, float] = field(default_factory=dict)
    #: (model time in s, global output fields) at t = 0 and every ``history_every_s`` (root only)
    history: list[tuple[float, dict[str, np.ndarray]]] = field(default_factory=list)
    #: (model time in s, diagnostics) at t = 0 and every ``config.print_freq`` (root only)
    printouts: list[tuple[float, dict[str, float]]] = field(default_factory=list)


def printout_steps(print_freq: int, dt: float) -> int:
    """Steps between FV3's diagnostic printouts: ``print_freq`` hours (> 0), every
    ``-print_freq`` steps (< 0), none (0)."""
    if print_freq < 0:
        return -print_freq
    return max(1, round(print_freq * 3600.0 / dt)) if print_freq > 0 else 0


def log_printout(case: str, seconds: float, diagnostics: dict[str, float]) -> None:
    """One printout: for a 3-D case FV3's printed extrema (``fv_diag``'s PS, UA, VA, TA max and
    min), the budgets and (``consv_te``) the energy fixer's deficit, otherwise the error norms
    and invariants as FV3's SWNORMS/SWINV lines."""
    d = diagnostics
    if "PS_min" in d:
        log.info("%s day=%.6f PS max=%.6f min=%.6f mean=%.6f hPa UA max=%.6f min=%.6f VA max=%.6f "
                 "min=%.6f TA max=%.6f min=%.6f dry_mass_n=%.3e energy_n=%.6e", case,
                 seconds / 86400.0, d["PS_max"], d["PS_min"], d["PS_mean"], d["UA_max"],
                 d["UA_min"], d["VA_max"], d["VA_min"], d["TA_max"], d["TA_min"],
                 d.get("dry_mass_relative_change", np.nan),
                 d.get("total_energy_relative_change", np.nan))  # fmt: skip
        if "energy_deficit_w_m2" in d:
            log.info("%s day=%.6f Energy_Deficit (W/m**2) = %.8e", case, seconds / 86400.0,
                     d["energy_deficit_w_m2"])  # fmt: skip
        return
    log.info("%s day=%.6f h l1=%.6e l2=%.6e linf=%.6e wind l1=%.6e l2=%.6e linf=%.6e "
             "mass_n=%.3e energy_n=%.6e enstr_n=%.6e Hmin=%.6f Hmax=%.6f", case,
             seconds / 86400.0, d.get("l1", np.nan), d.get("l2", np.nan), d.get("linf", np.nan),
             d.get("wind_l1", np.nan), d.get("wind_l2", np.nan), d.get("wind_linf", np.nan),
             d.get("mass_relative_change", np.nan), d.get("energy_relative_change", np.nan),
             d.get("enstrophy_relative_change", np.nan), d.get("h_min", np.nan),
             d.get("h_max", np.nan))  # fmt: skip


def experiment_for(config: FV3Config) -> Experiment:
    """The experiment of ``config.case``: the 3-D cases on FV3's hydrostatic core, the others on
    FV3's shallow-water core (TC1 too: FV3's ``test_case = 1``)."""
    if config.is_3d:
        from fv3core.experiments.baroclinic import BaroclinicExperiment

        return BaroclinicExperiment(config)
    from fv3core.experiments.shallow_water import ShallowWaterExperiment

    return ShallowWaterExperiment(config)


def build_model(config: FV3Config, *, factory: StencilFactory | None = None, mpi: bool = False
                ) -> tuple[Experiment, Any, Any, int, float]:  # fmt: skip
    """The experiment of ``config``, its decomposition, the model built on it (every rank of
    this process, ``factory`` or ``StencilFactory(config.backend)``), the number of steps and
    the step dt (``config.steps_for`` the experiment's CFL rate)."""
    experiment = experiment_for(config)
    n = config.resolution
    decomposition = decompose(n, config.layout, mpi=mpi)
    rate = decomposition.max_over_ranks(experiment.cfl_rate) / experiment.substeps
    steps, dt = config.steps_for(rate)
    log.info("%s C%d on %d ranks: %d steps of %.1f s (%d substeps each)", config.case, n,
             decomposition.total_ranks, steps, dt, experiment.substeps)  # fmt: skip
    factory = factory if factory is not None else StencilFactory(config.backend)
    model = decomposition.build_serially(lambda: experiment.build(factory, decomposition, dt))
    return experiment, decomposition, model, steps, dt


def run(
    config: FV3Config,
    *,
    factory: StencilFactory | None = None,
    mpi: bool = False,
    progress: bool = True,
    history_every_s: float = 0.0,
    history_fields: Collection[str] | None = None,
) -> RunResult:
    """Run ``config`` on all ranks in this process, or (``mpi``) as this MPI rank.

    ``factory`` builds the stencils (default: a plain ``StencilFactory(config.backend)``; pass
    a :class:`mapping.tuning.TunedStencilFactory` to build stencils with applied tuned
    schedules).  ``history_every_s`` > 0 also gathers the output fields at t = 0 and whenever
    the model time reaches a multiple of it (:attr:`RunResult.history`; only ``history_fields``
    if given, e.g. the 2-D fields of a long 3-D run); ``config.print_freq``
    logs the experiment's diagnostics at t = 0 and at FV3's printout times
    (:attr:`RunResult.printouts`).  Global fields and diagnostics arrive on the root rank only."""
    from tqdm import tqdm

    experiment, decomposition, model, steps, dt = build_model(config, factory=factory, mpi=mpi)
    geometry = decomposition.gather_fields(model.cell_geometry())
    start = decomposition.gather_fields(model.output_fields())

    def kept(fields: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        if history_fields is None:
            return fields
        return {k: v for k, v in fields.items() if k in history_fields}

    history = [(0.0, kept(start))] if history_every_s > 0 and start is not None else []
    printouts: list[tuple[float, dict[str, float]]] = []
    every = printout_steps(config.print_freq, dt)

    def printout(step: int, fields: dict[str, np.ndarray] | None) -> None:
        if fields is None or start is None or geometry is None:
            return
        grid = GlobalGrid(geometry["lon"], geometry["lat"], geometry["area"])
        diagnostics = {**model.run_diagnostics(),
                       **experiment.analyse(start, fields, grid, step * dt).diagnostics}
        printouts.append((step * dt, diagnostics))
        log_printout(config.case, step * dt, diagnostics)

    if every:
        printout(0, start)
    next_output = history_every_s
    seconds = 0.0
    for step in tqdm(range(1, steps + 1), desc=f"{config.case} C{config.resolution}", unit="step",
                     disable=not (progress and decomposition.is_root)):  # fmt: skip
        t0 = time.perf_counter()
        model.step()
        seconds += time.perf_counter() - t0
        keep = history_every_s > 0 and step * dt >= next_output * (1.0 - 1e-12)
        show = bool(every) and step % every == 0
        if keep or show:  # one collective gather for both
            fields = decomposition.gather_fields(model.output_fields())
            if keep:
                next_output += history_every_s
                if fields is not None:
                    history.append((step * dt, kept(fields)))
            if show:
                printout(step, fields)
    end = decomposition.gather_fields(model.output_fields())
    result = RunResult(config, steps, dt, seconds, decomposition.is_root, history=history,
                       printouts=printouts)  # fmt: skip
    if start is None or end is None or geometry is None:
        return result
    lon, lat, area = geometry["lon"], geometry["lat"], geometry["area"]
    analysis = experiment.analyse(start, end, GlobalGrid(lon, lat, area), steps * dt)
    result.fields = analysis.fields
    result.lon, result.lat, result.area = lon, lat, area
    result.diagnostics = {**analysis.diagnostics, "seconds_per_step": seconds / steps,
                          **model.run_diagnostics()}  # fmt: skip
    return result

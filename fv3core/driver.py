"""Run an FV3 case end to end, whatever its model: decomposition, time step from the CFL
estimate, serial stencil-cache warm-up, time loop, gathered fields, diagnostics, netCDF."""

from __future__ import annotations

import logging
import time
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from fv3core.config import FV3Config
from fv3core.decomposition import decompose
from fv3core.model import Experiment, GlobalGrid
from stencils.atomic import atomic_output
from stencils.factory import StencilFactory

log = logging.getLogger(__name__)


#: units and long names of the output fields
FIELD_ATTRS: dict[str, tuple[str, str]] = {
    "h": ("m", "fluid depth / transported height (TC1); free-surface height h + h_s (TC2, 5, 6)"),
    "h_exact": ("m", "analytic solution"),
    "h_initial": ("m", "free-surface height at t = 0"),
    "depth": ("m", "fluid depth"),
    "surface": ("m", "bottom topography h_s"),
    "u": ("m s-1", "eastward wind (A-grid, from the D-grid winds)"),
    "v": ("m s-1", "northward wind (A-grid, from the D-grid winds)"),
    "vorticity": ("s-1", "absolute vorticity (D-grid circulation / area + f)"),
    "ps": ("Pa", "surface pressure"),
    "ps_initial": ("Pa", "surface pressure at t = 0"),
    "t850": ("K", "temperature at 850 hPa (FV3's cs3_interpolator in ln p)"),
    "u850": ("m s-1", "eastward wind at 850 hPa (FV3's cs3_interpolator in p)"),
    "v850": ("m s-1", "northward wind at 850 hPa (FV3's cs3_interpolator in p)"),
    "vort850": ("s-1", "relative vorticity at 850 hPa (D-grid circulation, in ln p)"),
    "sphum_column": ("kg m-2", "column burden of the tracer sphum"),
    "checker_column": ("kg m-2", "column burden of FV3's checkerboard tracer"),
}
#: output fields on the regular lon-lat grid carry this suffix (dims lat, lon)
LATLON_SUFFIX = "_latlon"


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
    """The experiment of ``config.case``: the 3-D cases on FV3's hydrostatic core; with
    ``dynamics="fv3"`` FV3's scheme (TC1 too: FV3's ``test_case = 1``), otherwise TC1 transport or a shallow-water case of the geometric
    scheme."""
    if config.is_3d:
        from fv3core.baroclinic_model import BaroclinicExperiment

        return BaroclinicExperiment(config)
    if config.dynamics == "fv3":
        from fv3core.fv3_model import FV3ShallowWaterExperiment

        return FV3ShallowWaterExperiment(config)
    if config.is_dynamics:
        from fv3core.shallow_water_model import ShallowWaterExperiment

        return ShallowWaterExperiment(config)
    from fv3core.transport_model import TransportExperiment

    return TransportExperiment(config)


def build_model(config: FV3Config, *, factory: StencilFactory | None = None, mpi: bool = False
                ) -> tuple[Experiment, Any, Any, int, float]:  # fmt: skip
    """The experiment of ``config``, its decomposition, the model built on it (every rank of
    this process, ``factory`` or ``StencilFactory(config.backend)``), the number of steps and
    the step dt (``config.steps_for`` the experiment's CFL rate)."""
    experiment = experiment_for(config)
    n = config.resolution
    decomposition = decompose(n, config.layout, mpi=mpi, radius=experiment.radius,
                              alpha=experiment.coriolis_alpha)  # fmt: skip
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


def write_netcdf(result: RunResult, path: str | Path) -> Path:
    """CF-style netCDF (dims time, tile, y, x; lon/lat of cell centres), written atomically."""
    import xarray as xr

    path = Path(path)
    cfg = result.config
    t_end = result.steps * result.dt
    dims = ("time", "tile", "y", "x")

    def var(a: np.ndarray, units: str, long_name: str, **extra: str) -> xr.Variable:
        # global arrays are [tile, i, j] = [tile, x, y]; CF order is (tile, y, x)
        return xr.Variable(dims, a.transpose(0, 2, 1)[None], {"units": units,
                           "long_name": long_name, **extra})  # fmt: skip

    tiles = {n: a for n, a in result.fields.items() if not n.endswith(LATLON_SUFFIX)}
    data = {name: var(a, *FIELD_ATTRS.get(name, ("1", name))) for name, a in tiles.items()}
    latlon = {n: a for n, a in result.fields.items() if n.endswith(LATLON_SUFFIX)}
    coords_ll: dict[str, tuple] = {}
    if latlon:
        from fv3core.grid.latlon_regrid import regular_lonlat

        nlat, nlon = next(iter(latlon.values())).shape
        lon_ll, lat_ll = regular_lonlat(nlon, nlat)
        coords_ll = {"lon_ll": ("lon_ll", lon_ll, {"units": "degrees_east",
                                                  "standard_name": "longitude"}),
                     "lat_ll": ("lat_ll", lat_ll, {"units": "degrees_north",
                                                  "standard_name": "latitude"})}  # fmt: skip
        for name, a in latlon.items():
            units, long_name = FIELD_ATTRS.get(name[: -len(LATLON_SUFFIX)], ("1", name))
            data[name] = xr.Variable(("time", "lat_ll", "lon_ll"), a[None], {
                "units": units, "long_name": f"{long_name}, linearly interpolated to a regular "
                "lon-lat grid"})  # fmt: skip
    ds = xr.Dataset(
        data,
        coords={
            "time": ("time", [t_end / 86400.0], {"units": "days since 2000-01-01 00:00:00",
                                                  "standard_name": "time", "calendar": "standard"}),
            "tile": ("tile", np.arange(6), {"long_name": "cubed-sphere tile (FV3 tile - 1)"}),
            "lon": (("tile", "y", "x"), result.lon.transpose(0, 2, 1),
                    {"units": "degrees_east", "standard_name": "longitude"}),
            "lat": (("tile", "y", "x"), result.lat.transpose(0, 2, 1),
                    {"units": "degrees_north", "standard_name": "latitude"}),
            "area": (("tile", "y", "x"), result.area.transpose(0, 2, 1),
                     {"units": "m2", "standard_name": "cell_area"}),
            **coords_ll,
        },  # fmt: skip
        attrs={
            "Conventions": "CF-1.8",
            "title": f"stratoflow fv3core {cfg.case} C{cfg.resolution}",
            "source": "stratoflow fv3core (FV3's hydrostatic 3-D core, GT4Py)" if cfg.is_3d
            else "stratoflow fv3core (FV3 fvtp2d"
            + (", c_sw/d_sw shallow-water dynamics" if cfg.is_dynamics else "") + ", GT4Py)",
            "config": repr(cfg.to_dict()),
            **{f"diag_{k}": v for k, v in result.diagnostics.items()},
        },
    )
    for name in tiles:
        ds[name].attrs["coordinates"] = "lon lat"
        ds[name].attrs["cell_measures"] = "area: area"
    with atomic_output(path) as tmp:
        ds.to_netcdf(tmp)
    return path

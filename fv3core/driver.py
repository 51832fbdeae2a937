"""Run an FV3 case end to end: ranks, stencil-cache warm-up, time loop, diagnostics, output."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from fv3core.advection import Advection, AdvectionConfig
from fv3core.config import FV3Config
from fv3core.ranks import Rank, build_ranks
from fv3core.testcases.williamson import A_EARTH, CosineBell, SolidBodyFlow, normalized_errors
from stencils.atomic import atomic_output

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
}


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


def _max_speed_over_dx(ranks: list[Rank], flow: SolidBodyFlow, comm: Any) -> float:
    best = 0.0
    for r in ranks:
        m = r.metric
        u, v = flow.wind(*m.lonlat_agrid)
        h = r.spec.n_halo
        speed = np.hypot(u, v)[h:-h, h:-h]
        dmin = np.minimum(m.dxa, m.dya)[h:-h, h:-h]
        best = max(best, float((speed / dmin).max()))
    return comm.allreduce_max(best) if comm.size > 1 and not _is_local(comm) else best


def _is_local(comm: Any) -> bool:
    return type(comm).__name__ == "LocalComm"


def _gather(ranks: list[Rank], partitioner: Any, arrays: dict[int, np.ndarray], n: int):
    """Global (6, N, N) array on the root from each rank's interior (in-process or MPI)."""
    comm = ranks[0].comm
    if _is_local(comm) or comm.size == 1:
        out = np.empty((6, n, n))
        for r in ranks:
            s = r.spec
            out[s.tile, s.i0 : s.i1, s.j0 : s.j1] = arrays[r.rank]
        return out
    me = ranks[0]
    tag = 7919
    if me.rank != 0:
        req = comm.send_init(np.ascontiguousarray(arrays[me.rank]), 0, tag)
        comm.startall([req])
        comm.waitall([req])
        return None
    out = np.empty((6, n, n))
    bufs, reqs = {}, []
    for src in range(1, comm.size):
        i0, i1, j0, j1 = partitioner.subdomain_extent(src, n, n)
        bufs[src] = np.empty((i1 - i0, j1 - j0))
        reqs.append(comm.recv_init(bufs[src], src, tag))
    comm.startall(reqs)
    comm.waitall(reqs)
    bufs[0] = arrays[0]
    for src, buf in bufs.items():
        i0, i1, j0, j1 = partitioner.subdomain_extent(src, n, n)
        out[partitioner.tile_index(src), i0:i1, j0:j1] = buf
    return out


def run(config: FV3Config, mpi: bool = False, progress: bool = True) -> RunResult:
    """Run ``config`` on all ranks in this process, or (``mpi``) as this MPI rank."""
    if config.is_dynamics:
        from fv3core.shallow_water_run import run_shallow_water

        return run_shallow_water(config, mpi=mpi, progress=progress)
    return _run_advection(config, mpi=mpi, progress=progress)


def _run_advection(config: FV3Config, mpi: bool, progress: bool) -> RunResult:
    """Williamson TC1: fvtp2d with prescribed winds."""
    from tqdm import tqdm

    from fv3core.stencil_factory import stencil_factory

    n = config.resolution
    flow = SolidBodyFlow(alpha=config.alpha, radius=A_EARTH)
    bell = CosineBell(flow)
    part, ranks = build_ranks(n, config.layout, mpi=mpi, radius=A_EARTH, alpha=config.alpha)
    comm = ranks[0].comm
    is_root = ranks[0].rank == 0
    steps, dt = config.steps_for(_max_speed_over_dx(ranks, flow, comm))
    log.info("%s C%d on %d ranks: %d steps of %.1f s", config.case, n, part.total_ranks, steps, dt)
    factory = stencil_factory(config.backend)
    adv_cfg = AdvectionConfig(hord=config.hord, dt=dt, nz=config.nz)
    args = (flow.stream_function, lambda lon, lat: bell.height(lon, lat))
    if mpi and comm.size > 1:
        # warm the stencil cache serially: ranks build (or load) their stencils one after another
        for turn in range(comm.size):
            if comm.rank == turn:
                model = Advection(factory, part, ranks, adv_cfg, *args)
            comm.barrier()
    else:
        model = Advection(factory, part, ranks, adv_cfg, *args)
    area_glob = _gather(ranks, part, {r.rank: r.metric.interior_area for r in ranks}, n)
    h0 = _gather(ranks, part, {r.rank.rank: r.interior() for r in model.ranks}, n)
    mass0 = None if h0 is None else float(np.sum(h0 * area_glob))
    t0 = time.perf_counter()
    for _ in tqdm(range(steps), desc=f"{config.case} C{n}", unit="step",
                  disable=not (progress and is_root)):  # fmt: skip
        model.step()
    seconds = time.perf_counter() - t0
    h = _gather(ranks, part, {r.rank.rank: r.interior() for r in model.ranks}, n)
    lonlat = [
        _gather(ranks, part, {r.rank: np.rad2deg(x[3:-3, 3:-3])
                              for r, x in ((r, r.metric.lonlat_agrid[k]) for r in ranks)}, n)
        for k in (0, 1)
    ]  # fmt: skip
    result = RunResult(config, steps, dt, seconds, is_root)
    if not is_root:
        return result
    t_end = steps * dt
    h_true = bell.height(np.deg2rad(lonlat[0]), np.deg2rad(lonlat[1]), t=t_end)
    result.fields = {"h": h, "h_exact": h_true}
    result.lon, result.lat, result.area = lonlat[0], lonlat[1], area_glob
    result.diagnostics = {
        **normalized_errors(h, h_true, area_glob),
        "mass_relative_change": float(np.sum(h * area_glob) / mass0 - 1.0),
        "h_min": float(h.min()),
        "h_max": float(h.max()),
        "seconds_per_step": seconds / steps,
    }
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

    data = {name: var(a, *FIELD_ATTRS.get(name, ("1", name))) for name, a in result.fields.items()}
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
        },  # fmt: skip
        attrs={
            "Conventions": "CF-1.8",
            "title": f"stratoflow fv3core {cfg.case} C{cfg.resolution}",
            "source": "stratoflow fv3core (FV3 fvtp2d"
            + (", c_sw/d_sw shallow-water dynamics" if cfg.is_dynamics else "") + ", GT4Py)",
            "config": repr(cfg.to_dict()),
            **{f"diag_{k}": v for k, v in result.diagnostics.items()},
        },
    )
    for name in result.fields:
        ds[name].attrs["coordinates"] = "lon lat"
        ds[name].attrs["cell_measures"] = "area: area"
    with atomic_output(path) as tmp:
        ds.to_netcdf(tmp)
    return path

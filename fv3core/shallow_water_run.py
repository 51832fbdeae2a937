"""Run a Williamson shallow-water case (TC2, TC5, TC6) end to end: ranks, stencil-cache
warm-up, the n_split acoustic loop, global diagnostics (errors, mass, energy, potential
enstrophy) and the gathered output fields."""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np

from fv3core.config import FV3Config
from fv3core.driver import RunResult, _gather, _is_local
from fv3core.dynamics import DynamicsConfig, RankDynamics, ShallowWaterDynamics
from fv3core.grid.spherical import local_east_north
from fv3core.ranks import Rank, build_ranks
from fv3core.testcases.williamson import (
    A_EARTH,
    ShallowWaterCase,
    normalized_errors,
    shallow_water_case,
    vector_errors,
)

log = logging.getLogger(__name__)


def _reduce_max(comm: Any, value: float) -> float:
    return comm.allreduce_max(value) if comm.size > 1 and not _is_local(comm) else value


def wave_speed_over_dx(ranks: list[Rank], case: ShallowWaterCase, reduce: bool = True) -> float:
    """max over the interior of (|V| + sqrt(g * depth)) / min(dxa, dya) of the initial state
    (1/s): the acoustic CFL rate (``reduce``: over all MPI ranks, a collective call)."""
    best = 0.0
    for r in ranks:
        m, h = r.metric, r.spec.n_halo
        lon, lat = m.lonlat_agrid
        speed = np.hypot(*case.wind(lon, lat))
        depth = case.height(lon, lat) - case.surface(lon, lat)
        rate = (speed + np.sqrt(case.gravity * np.maximum(depth, 0.0))) / np.minimum(m.dxa, m.dya)
        best = max(best, float(rate[h:-h, h:-h].max()))
    return _reduce_max(ranks[0].comm, best) if reduce else best


def _rank_fields(r: RankDynamics) -> dict[str, np.ndarray]:
    m, h = r.rank.metric, r.spec.n_halo
    lon, lat = m.lonlat_agrid
    surface = r.case.surface(lon, lat)[h:-h, h:-h]
    depth = r.interior(r.h)
    wind = r.agrid_wind()
    east, north = local_east_north(m.xyz_agrid[h:-h, h:-h])
    return {
        "depth": depth,
        "surface": surface,
        "h": depth + surface,
        "wx": wind[..., 0], "wy": wind[..., 1], "wz": wind[..., 2],
        "u": np.sum(wind * east, -1),
        "v": np.sum(wind * north, -1),
        "vorticity": r.absolute_vorticity(),
    }  # fmt: skip


def _gather_fields(model: ShallowWaterDynamics, part: Any, n: int) -> dict[str, np.ndarray] | None:
    per_rank = {r.rank.rank: _rank_fields(r) for r in model.ranks}
    ranks = [r.rank for r in model.ranks]
    names = next(iter(per_rank.values())).keys()
    out = {k: _gather(ranks, part, {rk: f[k] for rk, f in per_rank.items()}, n) for k in names}
    return None if out["h"] is None else out


def integrals(f: dict[str, np.ndarray], area: np.ndarray, gravity: float) -> dict[str, float]:
    """Global mass, total energy and potential enstrophy (Williamson et al. 1992, sec. 5)."""
    depth, hs = f["depth"], f["surface"]
    v2 = f["wx"] ** 2 + f["wy"] ** 2 + f["wz"] ** 2
    energy = 0.5 * depth * v2 + 0.5 * gravity * ((depth + hs) ** 2 - hs**2)
    return {
        "mass": float(np.sum(depth * area)),
        "energy": float(np.sum(energy * area)),
        "enstrophy": float(np.sum(0.5 * f["vorticity"] ** 2 / depth * area)),
    }


def run_shallow_water(config: FV3Config, mpi: bool = False, progress: bool = True) -> RunResult:
    """Run the shallow-water case of ``config`` (all ranks in-process, or this MPI rank)."""
    from tqdm import tqdm

    from fv3core.stencil_factory import stencil_factory

    n = config.resolution
    case = shallow_water_case(config.case, alpha=config.alpha)
    coriolis_alpha = config.alpha if config.case == "williamson2" else 0.0
    part, ranks = build_ranks(n, config.layout, mpi=mpi, radius=A_EARTH, alpha=coriolis_alpha)
    comm = ranks[0].comm
    is_root = ranks[0].rank == 0
    steps, dt = config.steps_for(wave_speed_over_dx(ranks, case) / config.n_split)
    dt_acoustic = dt / config.n_split
    log.info("%s C%d on %d ranks: %d steps of %.1f s (n_split %d)", config.case, n,
             part.total_ranks, steps, dt, config.n_split)  # fmt: skip
    factory = stencil_factory(config.backend)
    dyn_cfg = DynamicsConfig(dt=dt_acoustic, hord=config.hord, dddmp=config.dddmp, nz=config.nz,
                             nord=config.nord, d4_bg=config.d4_bg)
    if mpi and comm.size > 1:
        # warm the stencil cache serially: ranks build (or load) their stencils one after another
        for turn in range(comm.size):
            if comm.rank == turn:
                model = ShallowWaterDynamics(factory, part, ranks, dyn_cfg, case)
            comm.barrier()
    else:
        model = ShallowWaterDynamics(factory, part, ranks, dyn_cfg, case)
    area = _gather(ranks, part, {r.rank: r.metric.interior_area for r in ranks}, n)
    start = _gather_fields(model, part, n)
    t0 = time.perf_counter()
    for _ in tqdm(range(steps), desc=f"{config.case} C{n}", unit="step",
                  disable=not (progress and is_root)):  # fmt: skip
        for _ in range(config.n_split):
            model.step()
    seconds = time.perf_counter() - t0
    end = _gather_fields(model, part, n)
    lonlat = [
        _gather(ranks, part, {r.rank: np.rad2deg(r.metric.lonlat_agrid[k][3:-3, 3:-3])
                              for r in ranks}, n)
        for k in (0, 1)
    ]  # fmt: skip
    result = RunResult(config, steps, dt, seconds, is_root)
    if not is_root or start is None or end is None:
        return result
    lon, lat = np.deg2rad(lonlat[0]), np.deg2rad(lonlat[1])
    first, last = integrals(start, area, case.gravity), integrals(end, area, case.gravity)
    diag: dict[str, float] = {
        "mass_relative_change": last["mass"] / first["mass"] - 1.0,
        "energy_relative_change": last["energy"] / first["energy"] - 1.0,
        "enstrophy_relative_change": last["enstrophy"] / first["enstrophy"] - 1.0,
        "h_min": float(end["h"].min()),
        "h_max": float(end["h"].max()),
        "seconds_per_step": seconds / steps,
        "acoustic_dt": dt_acoustic,
        "halo_seconds": model.halo_seconds,
    }
    fields = {"h": end["h"], "u": end["u"], "v": end["v"], "vorticity": end["vorticity"]}
    if case.steady:
        h_true = case.height(lon, lat)
        xyz = np.stack([np.cos(lat) * np.cos(lon), np.cos(lat) * np.sin(lon), np.sin(lat)], -1)
        wind = np.stack([end["wx"], end["wy"], end["wz"]], -1)
        diag.update(normalized_errors(end["h"], h_true, area))
        diag.update({f"wind_{k}": v for k, v in
                     vector_errors(wind, case.wind_xyz(xyz), area).items()})  # fmt: skip
        fields["h_exact"] = h_true
    else:
        fields["h_initial"] = start["h"]
        fields["surface"] = end["surface"]
    result.fields = fields
    result.lon, result.lat, result.area = lonlat[0], lonlat[1], area
    result.diagnostics = diag
    return result

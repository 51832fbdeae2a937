"""The shallow-water model and its Williamson experiments (TC2, TC5, TC6): CFL rate, model,
global diagnostics (errors against the analytic state, mass, energy, potential enstrophy)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from fv3core.config import FV3Config
from fv3core.decomposition import Decomposition, Rank
from fv3core.dynamics import DynamicsConfig, RankDynamics, ShallowWaterDynamics
from fv3core.grid.shallow_water_geometry import agrid_winds_numpy
from fv3core.grid.spherical import local_east_north
from fv3core.model import Analysis, GlobalGrid, RankFields, metric_geometry
from fv3core.testcases.williamson import (
    ShallowWaterCase,
    normalized_errors,
    shallow_water_case,
    vector_errors,
)
from stencils.factory import StencilFactory


def wave_speed_over_dx(rank: Rank, case: ShallowWaterCase) -> float:
    """max over the compute cells of (|V| + sqrt(g * depth)) / min(dxa, dya) of the initial
    state (1/s): the rate of the acoustic CFL condition."""
    m, h = rank.metric, rank.spec.n_halo
    lon, lat = m.lonlat_agrid
    speed = np.hypot(*case.wind(lon, lat))
    depth = case.height(lon, lat) - case.surface(lon, lat)
    rate = (speed + np.sqrt(case.gravity * np.maximum(depth, 0.0))) / np.minimum(m.dxa, m.dya)
    return float(rate[h:-h, h:-h].max())


def absolute_vorticity(r: RankDynamics) -> np.ndarray:
    """Absolute vorticity of the compute cells from the D-grid circulation (NumPy)."""
    m = r.rank.metric
    u, v = np.asarray(r.state.u)[..., 0], np.asarray(r.state.v)[..., 0]
    circ = u[:, :-1] * m.dx[:, :-1] - u[:, 1:] * m.dx[:, 1:] - v[:-1] * m.dy[:-1] + v[1:] * m.dy[1:]
    return r.rank.interior(m.f0 + circ * m.rarea)


def rank_fields(r: RankDynamics) -> dict[str, np.ndarray]:
    """Depth, topography, free-surface height, A-grid winds (3-D and east/north) and absolute
    vorticity of one rank's compute cells."""
    m, h = r.rank.metric, r.spec.n_halo
    lon, lat = m.lonlat_agrid
    surface = r.case.surface(lon, lat)[h:-h, h:-h]
    depth = r.rank.interior(np.asarray(r.state.h)[..., 0])
    wind = r.rank.interior(agrid_winds_numpy(m, np.asarray(r.state.u)[..., 0],
                                             np.asarray(r.state.v)[..., 0]))  # fmt: skip
    east, north = local_east_north(m.xyz_agrid[h:-h, h:-h])
    return {
        "depth": depth,
        "surface": surface,
        "h": depth + surface,
        "wx": wind[..., 0], "wy": wind[..., 1], "wz": wind[..., 2],
        "u": np.sum(wind * east, -1),
        "v": np.sum(wind * north, -1),
        "vorticity": absolute_vorticity(r),
    }  # fmt: skip


def integrals(f: Mapping[str, np.ndarray], area: np.ndarray, gravity: float) -> dict[str, float]:
    """Global mass, total energy and potential enstrophy (Williamson et al. 1992, sec. 5)."""
    depth, hs = f["depth"], f["surface"]
    v2 = f["wx"] ** 2 + f["wy"] ** 2 + f["wz"] ** 2
    energy = 0.5 * depth * v2 + 0.5 * gravity * ((depth + hs) ** 2 - hs**2)
    return {
        "mass": float(np.sum(depth * area)),
        "energy": float(np.sum(energy * area)),
        "enstrophy": float(np.sum(0.5 * f["vorticity"] ** 2 / depth * area)),
    }


class ShallowWaterModel:
    """:class:`ShallowWaterDynamics` as a :class:`~fv3core.model.Model`: one time step is
    ``n_split`` acoustic steps."""

    def __init__(self, dynamics: ShallowWaterDynamics, n_split: int) -> None:
        self.dynamics, self.n_split = dynamics, n_split

    def step(self) -> None:
        for _ in range(self.n_split):
            self.dynamics.step()

    def output_fields(self) -> RankFields:
        return {r.rank.rank: rank_fields(r) for r in self.dynamics.ranks}

    def cell_geometry(self) -> RankFields:
        return metric_geometry(r.rank for r in self.dynamics.ranks)

    def run_diagnostics(self) -> dict[str, float]:
        return {"acoustic_dt": self.dynamics.ranks[0].config.dt,
                "halo_seconds": self.dynamics.halo_seconds}  # fmt: skip


class ShallowWaterExperiment:
    """A Williamson shallow-water case (TC2, TC5, TC6) of an :class:`FV3Config`."""

    def __init__(self, config: FV3Config) -> None:
        self.config = config
        self.case = shallow_water_case(config.case, alpha=config.alpha)
        self.radius = self.case.radius
        self.coriolis_alpha = config.alpha if config.case == "williamson2" else 0.0
        self.substeps = config.n_split

    def cfl_rate(self, rank: Rank) -> float:
        return wave_speed_over_dx(rank, self.case)

    def build(self, factory: StencilFactory, decomposition: Decomposition, dt: float
              ) -> ShallowWaterModel:  # fmt: skip
        c = self.config
        dynamics = DynamicsConfig(dt=dt / c.n_split, hord=c.hord, dddmp=c.dddmp, nz=c.nz,
                                  nord=c.nord, d4_bg=c.d4_bg)  # fmt: skip
        return ShallowWaterModel(ShallowWaterDynamics(factory, decomposition, dynamics, self.case),
                                 c.n_split)  # fmt: skip

    def analyse(self, start: Mapping[str, np.ndarray], end: Mapping[str, np.ndarray],
                grid: GlobalGrid, t_end: float) -> Analysis:  # fmt: skip
        case, area = self.case, grid.area
        lon, lat = np.deg2rad(grid.lon), np.deg2rad(grid.lat)
        first, last = integrals(start, area, case.gravity), integrals(end, area, case.gravity)
        diag: dict[str, float] = {
            "mass_relative_change": last["mass"] / first["mass"] - 1.0,
            "energy_relative_change": last["energy"] / first["energy"] - 1.0,
            "enstrophy_relative_change": last["enstrophy"] / first["enstrophy"] - 1.0,
            "h_min": float(end["h"].min()),
            "h_max": float(end["h"].max()),
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
        return Analysis(fields, diag)

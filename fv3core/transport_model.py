"""The transport model and Williamson TC1 (a cosine bell carried once around the sphere by
solid-body rotation in 12 days): CFL rate, model, errors against the rotated bell."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from fv3core.advection import Advection, AdvectionConfig
from fv3core.config import FV3Config
from fv3core.decomposition import Decomposition, Rank
from fv3core.model import Analysis, GlobalGrid, RankFields, metric_geometry
from fv3core.testcases.williamson import A_EARTH, CosineBell, SolidBodyFlow, normalized_errors
from stencils.factory import StencilFactory


class TransportModel:
    """:class:`Advection` as a :class:`~fv3core.model.Model`; its output is the scalar ``h``."""

    def __init__(self, advection: Advection) -> None:
        self.advection = advection

    def step(self) -> None:
        self.advection.step()

    def output_fields(self) -> RankFields:
        return {r.rank.rank: {"h": r.interior()} for r in self.advection.ranks}

    def cell_geometry(self) -> RankFields:
        return metric_geometry(r.rank for r in self.advection.ranks)

    def run_diagnostics(self) -> dict[str, float]:
        return {}


class TransportExperiment:
    """Williamson TC1 of an :class:`FV3Config` (``alpha``: the flow's angle to the polar axis)."""

    substeps = 1

    def __init__(self, config: FV3Config) -> None:
        self.config = config
        self.radius = A_EARTH
        self.flow = SolidBodyFlow(alpha=config.alpha, radius=A_EARTH)
        self.bell = CosineBell(self.flow)
        self.coriolis_alpha = config.alpha

    def cfl_rate(self, rank: Rank) -> float:
        m, h = rank.metric, rank.spec.n_halo
        u, v = self.flow.wind(*m.lonlat_agrid)
        speed = np.hypot(u, v)[h:-h, h:-h]
        dmin = np.minimum(m.dxa, m.dya)[h:-h, h:-h]
        return float((speed / dmin).max())

    def build(self, factory: StencilFactory, decomposition: Decomposition, dt: float
              ) -> TransportModel:  # fmt: skip
        c = self.config
        advection = Advection(factory, decomposition, AdvectionConfig(hord=c.hord, dt=dt, nz=c.nz),
                              self.flow.stream_function,
                              lambda lon, lat: self.bell.height(lon, lat))  # fmt: skip
        return TransportModel(advection)

    def analyse(self, start: Mapping[str, np.ndarray], end: Mapping[str, np.ndarray],
                grid: GlobalGrid, t_end: float) -> Analysis:  # fmt: skip
        h, area = end["h"], grid.area
        h_true = self.bell.height(np.deg2rad(grid.lon), np.deg2rad(grid.lat), t=t_end)
        mass0 = float(np.sum(start["h"] * area))
        return Analysis(
            {"h": h, "h_exact": h_true},
            {
                **normalized_errors(h, h_true, area),
                "mass_relative_change": float(np.sum(h * area) / mass0 - 1.0),
                "h_min": float(h.min()),
                "h_max": float(h.max()),
            },
        )

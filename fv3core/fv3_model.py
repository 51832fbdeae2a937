"""FV3's shallow-water scheme as an experiment of :mod:`fv3core.driver` (``dynamics="fv3"``):
FV3's grid (:class:`~fv3core.grid.fv3_metric.FV3Cube`), FV3's initial conditions
(:func:`~fv3core.testcases.fv3_initial.init_case`), FV3's acoustic loop, and FV3's own
diagnostics (the ``SWNORMS``/``SWINV`` of the reference runs: errors against the state at t = 0,
A-grid winds by ``c2l_ord4``), with the physical constants of ``config.constants``."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from fv3core.config import FV3Config
from fv3core.decomposition import Decomposition, Rank
from fv3core.errors import FV3ConfigError
from fv3core.fv3_dynamics import FV3ShallowWaterDynamics
from fv3core.grid.cubed_to_latlon import c2l_ord4
from fv3core.grid.fv3_metric import FV3Cube, FV3MetricTerms
from fv3core.model import Analysis, GlobalGrid, RankFields
from fv3core.testcases.fv3_initial import FV3InitialState, init_case
from fv3core.validation.norms import ShallowWaterFields, dgrid_vorticity, sw_norms
from stencils.factory import StencilFactory

#: FV3's ``test_case`` of each fv3core case name (tools/test_cases.F90)
FV3_TEST_CASES: dict[str, int] = {"williamson2": 2, "williamson5": 5, "williamson6": 6,
                                  "galewsky": 7}  # fmt: skip


class FV3ShallowWaterModel:
    """FV3's shallow-water dynamics on the ranks of this process; one :meth:`step` is one
    large time step ``dt_atmos`` (``n_split`` acoustic steps)."""

    def __init__(self, dynamics: FV3ShallowWaterDynamics, grav: float) -> None:
        self.dynamics, self.grav = dynamics, grav
        self.metrics = {r: d.metric for r, d in dynamics.ranks.items()}

    def step(self) -> None:
        self.dynamics.step()

    def output_fields(self) -> RankFields:
        """Depth ``delp * (1/grav)``, surface height, free-surface height, A-grid east/north
        winds (FV3's ``c2l_ord4``) and absolute vorticity (D-grid circulation + f0) of each
        rank's compute cells."""
        out = {}
        agrav = 1.0 / self.grav
        for r, m in self.metrics.items():
            f = self.dynamics.ranks[r].arrays()
            h, nx, ny = m.spec.n_halo, m.spec.nx, m.spec.ny
            cells = (slice(h, h + nx), slice(h, h + ny))
            u, v = f["u"], f["v"]
            ua, va = c2l_ord4(u, v, m)
            depth = (f["delp"] * agrav)[cells]
            surface = (f["phis"] * agrav)[cells]
            y_faces = (None, slice(h, h + nx), slice(h, h + ny + 1))  # one-tile stack
            x_faces = (None, slice(h, h + nx + 1), slice(h, h + ny))
            vort = dgrid_vorticity(u[y_faces], v[x_faces], m.dx[y_faces], m.dy[x_faces],
                                   m.rarea[(None, *cells)])[0]  # fmt: skip
            out[r] = {"depth": depth, "surface": surface, "h": depth + surface, "u": ua[cells],
                      "v": va[cells], "vorticity": vort + m.f0[cells]}  # fmt: skip
        return out

    def cell_geometry(self) -> RankFields:
        """FV3's cell centres (``agrid``) and areas of each rank's compute cells."""
        return {r: {"lon": np.rad2deg(m.interior("agrid")[..., 0]),
                    "lat": np.rad2deg(m.interior("agrid")[..., 1]),
                    "area": m.interior("area")} for r, m in self.metrics.items()}  # fmt: skip

    def run_diagnostics(self) -> dict[str, float]:
        return {"acoustic_dt": self.dynamics.acoustic_dt,
                "halo_seconds": self.dynamics.halo_seconds}  # fmt: skip


class FV3ShallowWaterExperiment:
    """A shallow-water test case run with FV3's scheme, grid and initial conditions."""

    def __init__(self, config: FV3Config) -> None:
        if config.case not in FV3_TEST_CASES:
            raise FV3ConfigError(
                f"case={config.case!r} has no FV3 initial condition in fv3core: dynamics='fv3' "
                f"runs {', '.join(FV3_TEST_CASES)}"
            )
        self.config = config
        self.constants = c = config.physical_constants
        self.radius = c.radius
        self.coriolis_alpha = config.alpha
        self.substeps = config.n_split  # the model's step is FV3's large step dt_atmos
        self._initial: FV3InitialState | None = None
        self._metrics: dict[int, FV3MetricTerms] = {}

    @property
    def initial(self) -> FV3InitialState:
        """FV3's initial state on FV3's grid (built on first use)."""
        if self._initial is None:
            cfg, c = self.config, self.constants
            cube = FV3Cube.build(cfg.resolution, radius=c.radius, omega=c.omega, alpha=cfg.alpha)
            self._initial = init_case(cube, FV3_TEST_CASES[cfg.case], grav=c.grav)
        return self._initial

    def metric(self, rank: Rank) -> FV3MetricTerms:
        if rank.rank not in self._metrics:
            self._metrics[rank.rank] = self.initial.cube.metric_terms(rank.spec)
        return self._metrics[rank.rank]

    def cfl_rate(self, rank: Rank) -> float:
        """max over the rank's compute cells of ``(|V| + sqrt(g D)) / min(dxa, dya)`` of FV3's
        initial state (1/s): the acoustic CFL rate, for the automatic time step and the
        stability check of ``dt``."""
        m, state = self.metric(rank), self.initial.for_rank(rank.spec)
        h, nx, ny = rank.spec.n_halo, rank.spec.nx, rank.spec.ny
        cells = (slice(h, h + nx), slice(h, h + ny))
        speed = np.hypot(state.ua[cells], state.va[cells]) + np.sqrt(state.delp[cells])
        return float((speed / np.minimum(m.dxa[cells], m.dya[cells])).max())

    def build(self, factory: StencilFactory, decomposition: Decomposition, dt: float
              ) -> FV3ShallowWaterModel:  # fmt: skip
        metrics = {r.rank: self.metric(r) for r in decomposition.ranks}
        states = {r.rank: self.initial.for_rank(r.spec) for r in decomposition.ranks}
        dynamics = FV3ShallowWaterDynamics(factory, metrics, states, self.config, dt,
                                           decomposition.communicator)  # fmt: skip
        return FV3ShallowWaterModel(dynamics, self.constants.grav)

    def analyse(self, start: Mapping[str, np.ndarray], end: Mapping[str, np.ndarray],
                grid: GlobalGrid, t_end: float) -> Analysis:  # fmt: skip
        """FV3's SWNORMS/SWINV against the state at t = 0 (under fv3core's diagnostic names:
        ``l1``/``l2``/``linf`` of the free-surface height, ``wind_*`` of the A-grid wind,
        ``*_relative_change`` of mass, energy and potential enstrophy, ``h_min``/``h_max``)."""
        norms = sw_norms(ShallowWaterFields.from_output(end), ShallowWaterFields.from_output(start),
                         grid.area, gravity=self.constants.grav)  # fmt: skip
        names = {"h_l1": "l1", "h_l2": "l2", "h_linf": "linf", "v_l1": "wind_l1",
                 "v_l2": "wind_l2", "v_linf": "wind_linf", "mass_n": "mass_relative_change",
                 "energy_n": "energy_relative_change", "enstr_n": "enstrophy_relative_change",
                 "Hmin": "h_min", "Hmax": "h_max"}  # fmt: skip
        diagnostics = {ours: float(norms[fv3]) for fv3, ours in names.items()}
        fields = {"h": end["h"], "u": end["u"], "v": end["v"], "vorticity": end["vorticity"],
                  "h_initial": start["h"], "surface": end["surface"]}  # fmt: skip
        return Analysis(fields, diagnostics)

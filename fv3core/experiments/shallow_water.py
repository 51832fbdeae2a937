"""FV3's shallow-water scheme as an experiment of :mod:`fv3core.experiments.driver`:
FV3's grid (:class:`~fv3core.grid.metric_terms.CubedSphere`), FV3's initial conditions
(:func:`~fv3core.testcases.shallow_water.init_case`), FV3's acoustic loop, and FV3's own
diagnostics (the ``SWNORMS``/``SWINV`` of the reference runs: errors against the state at t = 0,
A-grid winds by ``c2l_ord4``), with the physical constants of ``config.constants``.  FV3's
``test_case = 1`` (``williamson1``: ``delp`` advected by the prescribed C-grid winds) is
diagnosed against its exact solution instead, the initial bell rotated rigidly
(:func:`~fv3core.testcases.shallow_water.cosine_bell`)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from fv3core.config import FV3Config
from fv3core.dycore.shallow_water import ShallowWaterDynamics
from fv3core.errors import FV3ConfigError
from fv3core.experiments.experiment import Analysis, GlobalGrid, RankFields, agrid_geometry
from fv3core.grid.cubed_to_latlon import c2l_ord4
from fv3core.grid.decomposition import Decomposition, Rank
from fv3core.grid.metric_terms import CubedSphere, MetricTerms
from fv3core.testcases.shallow_water import InitialState, cosine_bell, init_case
from fv3core.testcases.williamson import SteadyGeostrophic, normalized_errors, vector_errors
from fv3core.validation.norms import ShallowWaterFields, dgrid_vorticity, invariants, sw_norms
from stencils.factory import StencilFactory

#: FV3's ``test_case`` of each fv3core case name (tools/test_cases.F90)
FV3_TEST_CASES: dict[str, int] = {"williamson1": 1, "williamson2": 2, "williamson5": 5,
                                  "williamson6": 6, "galewsky": 7}  # fmt: skip


class ShallowWaterModel:
    """FV3's shallow-water dynamics on the ranks of this process; one :meth:`step` is one
    large time step ``dt_atmos`` (``n_split`` acoustic steps)."""

    def __init__(self, dynamics: ShallowWaterDynamics, grav: float) -> None:
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
        return agrid_geometry(self.metrics)

    def run_diagnostics(self) -> dict[str, float]:
        return {"acoustic_dt": self.dynamics.acoustic_dt,
                "halo_seconds": self.dynamics.halo_seconds}  # fmt: skip


class ShallowWaterExperiment:
    """A shallow-water test case run with FV3's scheme, grid and initial conditions."""

    def __init__(self, config: FV3Config) -> None:
        if config.case not in FV3_TEST_CASES:
            raise FV3ConfigError(
                f"case={config.case!r} has no FV3 initial condition in fv3core: FV3's shallow-water core "
                f"runs {', '.join(FV3_TEST_CASES)}"
            )
        self.config = config
        self.constants = config.physical_constants
        self.substeps = config.n_split  # the model's step is FV3's large step dt_atmos
        self._initial: InitialState | None = None
        self._metrics: dict[int, MetricTerms] = {}

    @property
    def initial(self) -> InitialState:
        """FV3's initial state on FV3's grid (built on first use)."""
        if self._initial is None:
            cfg, c = self.config, self.constants
            cube = CubedSphere.build(cfg.resolution, radius=c.radius, omega=c.omega, alpha=cfg.alpha)
            self._initial = init_case(cube, FV3_TEST_CASES[cfg.case], grav=c.grav)
        return self._initial

    def metric(self, rank: Rank) -> MetricTerms:
        if rank.rank not in self._metrics:
            self._metrics[rank.rank] = self.initial.cube.metric_terms(rank.spec)
        return self._metrics[rank.rank]

    def cfl_rate(self, rank: Rank) -> float:
        """max over the rank's compute cells of ``(|V| + sqrt(g D)) / min(dxa, dya)`` of FV3's
        initial state (1/s): the acoustic CFL rate, for the automatic time step and the
        stability check of ``dt``; ``test_case = 1``: the largest |Courant number| per second of
        ``d_sw``'s advection, ``|uc| / sina_u * rdxa`` of either cell beside each compute face
        (y: ``vc``, ``sina_v``, ``rdya``)."""
        m, state = self.metric(rank), self.initial.for_rank(rank.spec)
        h, nx, ny = rank.spec.n_halo, rank.spec.nx, rank.spec.ny
        cells = (slice(h, h + nx), slice(h, h + ny))
        if state.uc is not None and state.vc is not None:
            fx, fy = (slice(h, h + nx + 1), cells[1]), (cells[0], slice(h, h + ny + 1))
            rx = np.maximum(m.rdxa[h - 1 : h + nx, h : h + ny], m.rdxa[h : h + nx + 1, h : h + ny])
            ry = np.maximum(m.rdya[h : h + nx, h - 1 : h + ny], m.rdya[h : h + nx, h : h + ny + 1])
            return float(max((np.abs(state.uc[fx]) / m.sina_u[fx] * rx).max(),
                             (np.abs(state.vc[fy]) / m.sina_v[fy] * ry).max()))  # fmt: skip
        speed = np.hypot(state.ua[cells], state.va[cells]) + np.sqrt(state.delp[cells])
        return float((speed / np.minimum(m.dxa[cells], m.dya[cells])).max())

    def build(self, factory: StencilFactory, decomposition: Decomposition, dt: float
              ) -> ShallowWaterModel:  # fmt: skip
        metrics = {r.rank: self.metric(r) for r in decomposition.ranks}
        states = {r.rank: self.initial.for_rank(r.spec) for r in decomposition.ranks}
        dynamics = ShallowWaterDynamics(factory, metrics, states, self.config, dt,
                                           decomposition.communicator)  # fmt: skip
        return ShallowWaterModel(dynamics, self.constants.grav)

    def analyse(self, start: Mapping[str, np.ndarray], end: Mapping[str, np.ndarray],
                grid: GlobalGrid, t_end: float) -> Analysis:  # fmt: skip
        """FV3's SWNORMS/SWINV against the state at t = 0 (under fv3core's diagnostic names:
        ``l1``/``l2``/``linf`` of the free-surface height, ``wind_*`` of the A-grid wind,
        ``*_relative_change`` of mass, energy and potential enstrophy, ``h_min``/``h_max``);
        TC2 also the Williamson et al. (1992) errors against its analytic solution
        (:meth:`analytic_errors`); ``test_case = 1``: :meth:`analyse_advection`."""
        if FV3_TEST_CASES[self.config.case] == 1:
            return self.analyse_advection(start, end, grid, t_end)
        norms = sw_norms(ShallowWaterFields.from_output(end), ShallowWaterFields.from_output(start),
                         grid.area, gravity=self.constants.grav)  # fmt: skip
        names = {"h_l1": "l1", "h_l2": "l2", "h_linf": "linf", "v_l1": "wind_l1",
                 "v_l2": "wind_l2", "v_linf": "wind_linf", "mass_n": "mass_relative_change",
                 "energy_n": "energy_relative_change", "enstr_n": "enstrophy_relative_change",
                 "Hmin": "h_min", "Hmax": "h_max"}  # fmt: skip
        diagnostics = {ours: float(norms[fv3]) for fv3, ours in names.items()}
        fields = {"h": end["h"], "u": end["u"], "v": end["v"], "vorticity": end["vorticity"],
                  "h_initial": start["h"], "surface": end["surface"]}  # fmt: skip
        if FV3_TEST_CASES[self.config.case] == 2:
            exact, errors = self.analytic_errors(end, grid)
            fields["h_exact"] = exact
            diagnostics.update(errors)
        return Analysis(fields, diagnostics)

    def analytic_errors(self, end: Mapping[str, np.ndarray], grid: GlobalGrid
                        ) -> tuple[np.ndarray, dict[str, float]]:  # fmt: skip
        """TC2's analytic solution (the steady state of Williamson et al. 1992, eqs. 90-95, at
        the cell centres, with ``config.alpha`` and the run's constants) and the normalised
        errors against it (eqs. 82-84): ``exact_l1``/``exact_l2``/``exact_linf`` of the
        free-surface height, ``exact_wind_*`` of the A-grid wind vector."""
        c = self.constants
        case = SteadyGeostrophic(radius=c.radius, omega=c.omega, gravity=c.grav,
                                 alpha=self.config.alpha)  # fmt: skip
        lon, lat = np.deg2rad(grid.lon), np.deg2rad(grid.lat)
        exact = case.height(lon, lat)
        east, north = case.wind(lon, lat)
        zero = np.zeros_like(east)
        wind = np.stack([end["u"], end["v"], zero], -1)
        wind_exact = np.stack([east, north, zero], -1)
        errors = {f"exact_{k}": v for k, v in normalized_errors(end["h"], exact, grid.area).items()}
        errors.update({f"exact_wind_{k}": v
                       for k, v in vector_errors(wind, wind_exact, grid.area).items()})  # fmt: skip
        return exact, errors

    def analyse_advection(self, start: Mapping[str, np.ndarray], end: Mapping[str, np.ndarray],
                          grid: GlobalGrid, t_end: float) -> Analysis:  # fmt: skip
        """TC1's SWNORMS-style diagnostics at ``t_end`` (s): ``l1``/``l2``/``linf`` of the depth
        against the exact solution :func:`~fv3core.testcases.shallow_water.cosine_bell` at the cell
        centres (Williamson et al. 1992, eqs. 82-84, sums in FV3's order), ``wind_*`` of the
        A-grid wind against t = 0 (the winds are prescribed: 0), ``mass_relative_change`` against
        t = 0, ``h_min``/``h_max``; field ``h_exact``."""
        cube, g = self.initial.cube, self.constants.grav
        h, n = cube.n_halo, cube.resolution
        agrid = cube.fields["agrid"][:, h : h + n, h : h + n]
        exact = cosine_bell((agrid[..., 0], agrid[..., 1]), cube.radius, cube.alpha, t_end)
        exact = exact * (1.0 / g)  # FV3's depth: delp * (1/grav)
        now = ShallowWaterFields(end["depth"], end["surface"], end["u"], end["v"])
        then = ShallowWaterFields(start["depth"], start["surface"], start["u"], start["v"])
        truth = ShallowWaterFields(exact, start["surface"], start["u"], start["v"])
        norms = sw_norms(now, truth, grid.area, gravity=g,
                         initial_invariants=invariants(then, grid.area, g))  # fmt: skip
        names = {"h_l1": "l1", "h_l2": "l2", "h_linf": "linf", "v_l1": "wind_l1",
                 "v_l2": "wind_l2", "v_linf": "wind_linf", "mass_n": "mass_relative_change",
                 "Hmin": "h_min", "Hmax": "h_max"}  # fmt: skip
        diagnostics = {ours: float(norms[fv3]) for fv3, ours in names.items()}
        fields = {"h": end["h"], "h_exact": exact + start["surface"], "u": end["u"],
                  "v": end["v"], "h_initial": start["h"], "surface": end["surface"]}  # fmt: skip
        return Analysis(fields, diagnostics)

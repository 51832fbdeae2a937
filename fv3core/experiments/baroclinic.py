"""FV3's 3-D core (hydrostatic or not) as an experiment of :mod:`fv3core.experiments.driver`: the Jablonowski &
Williamson (2006) baroclinic wave (``case="baroclinic"``, FV3's ``test_case = 13``) and its
balanced steady state (``"baroclinic_steady"``, ``test_case = 12``) on FV3's grid, FV3's
initial state (:func:`~fv3core.testcases.jablonowski_williamson.init_jw`), FV3's
``fv_dynamics`` (:class:`~fv3core.dycore.fv_dynamics.DynamicalCore`) and FV3's
diagnostics: ``ps``, ``t850``, ``u850``, ``v850`` and ``vort850`` as ``fv_diagnostics`` computes
them (:mod:`fv3core.validation.pressure_levels`), the tracers' column burdens, JW06's l2 norm of
the zonal-mean wind change, the dry-air, tracer and total-energy budgets
(:mod:`fv3core.validation.baroclinic_norms`), and the same fields regridded to a regular
lon-lat grid (:class:`~fv3core.grid.latlon_regrid.LatLonRegridder`).

Tracers: FV3's field_table of the reference runs has ``sphum`` (0 in an adiabatic run); with
``checker_tr`` a second tracer ``checker`` carries FV3's checkerboard (``test_case_nml
checker_tr``), the passive tracer of the runs (JW06 define none).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from fv3core.config import FV3Config
from fv3core.dycore.fv_dynamics import DynamicalCore
from fv3core.errors import FV3ConfigError
from fv3core.experiments.experiment import Analysis, GlobalGrid, RankFields, agrid_geometry
from fv3core.grid.cubed_to_latlon import c2l_ord4
from fv3core.grid.decomposition import Decomposition, Rank
from fv3core.grid.metric_terms import CubedSphere, MetricTerms
from fv3core.testcases.jablonowski_williamson import JWInitialState, init_jw
from fv3core.validation.baroclinic_norms import (
    dry_air_mass,
    extrema,
    printed_extrema,
    total_energy,
    tracer_mass,
    zonal_mean_wind_l2,
)
from fv3core.validation.norms import dgrid_vorticity
from fv3core.validation.pressure_levels import fields_at_850
from fv3core.vertical.eta import set_eta
from stencils.factory import StencilFactory

#: FV3's test_case of each 3-D case name (tools/test_cases.F90)
BAROCLINIC_TEST_CASES = {"baroclinic": 13, "baroclinic_steady": 12}
#: the 2-D output fields (units and long names: fv3core.output.netcdf.FIELD_ATTRS)
FIELDS_2D = ("ps", "t850", "u850", "v850", "vort850")
#: the lon-lat grid of the regridded output (1 degree)
LATLON = (360, 180)


def _interior(a: np.ndarray, h: int, nx: int, ny: int) -> np.ndarray:
    return a[h : h + nx, h : h + ny]


class BaroclinicModel:
    """FV3's 3-D core on the ranks of this process; :meth:`step` is one ``dt_atmos``."""

    def __init__(self, dynamics: DynamicalCore, metrics: dict[int, MetricTerms],
                 phis: dict[int, np.ndarray], config: FV3Config) -> None:  # fmt: skip
        self.dynamics, self.metrics, self.phis = dynamics, metrics, phis
        self.constants = config.physical_constants

    def step(self) -> None:
        self.dynamics.step()

    def output_fields(self) -> RankFields:
        """Per rank (compute cells): ``ps``, ``t850``, ``u850``, ``v850``, ``vort850``; the 3-D
        ``ua``, ``va`` (A-grid winds, FV3's ``c2l_ord4``), ``temperature``, ``delp``, the
        interfaces' ``pe`` and, non-hydrostatic, ``w`` and the layer thickness ``delz`` (m,
        positive: FV3's diagnostic ``delz``, minus the state's); per tracer its mixing ratio and its column burden
        ``<name>_column`` (kg m-2); ``phis``.  Collective: first the D-grid winds' halo update
        that FV3's ``cubed_to_latlon`` does before ``c2l_ord4`` (the next step updates them
        again before reading them, so the dynamics is not changed)."""
        self.dynamics.dyn_core.halos.d_winds.update()
        out = {}
        for r, rank in self.dynamics.ranks.items():
            m, a = self.metrics[r], rank.arrays()
            h, nx, ny = m.spec.n_halo, m.spec.nx, m.spec.ny

            def cells(x: np.ndarray, h: int = h, nx: int = nx, ny: int = ny) -> np.ndarray:
                return _interior(x, h, nx, ny)

            ua, va = c2l_ord4(a["u"], a["v"], m)
            u_faces = (None, slice(h, h + nx), slice(h, h + ny + 1))
            v_faces = (None, slice(h, h + nx + 1), slice(h, h + ny))
            vort = np.stack([dgrid_vorticity(a["u"][(*u_faces, k)], a["v"][(*v_faces, k)],
                                             m.dx[u_faces], m.dy[v_faces],
                                             m.rarea[(None, slice(h, h + nx), slice(h, h + ny))])[0]
                             for k in range(a["delp"].shape[2])], axis=-1)  # fmt: skip
            pe = cells(a["pe"])
            peln = np.log(pe)
            f850 = fields_at_850(cells(ua), cells(va), cells(a["pt"]), vort, pe, peln,
                                 cells(self.phis[r]), constants=self.constants)  # fmt: skip
            fields = {"ps": cells(a["ps"]), **f850, "ua": cells(ua), "va": cells(va),
                      "temperature": cells(a["pt"]), "delp": cells(a["delp"]), "pe": pe,
                      "phis": cells(self.phis[r])}  # fmt: skip
            if "w" in a:  # non-hydrostatic; delz positive, as FV3's diagnostics write it
                fields["w"], fields["delz"] = cells(a["w"]), -cells(a["delz"])
            for name in rank.tracer_names:
                q = cells(a[name])
                fields[name] = q
                fields[f"{name}_column"] = (q * fields["delp"]).sum(axis=2) / self.constants.grav
            out[r] = fields
        return out

    def cell_geometry(self) -> RankFields:
        """FV3's cell centres (``agrid``) and areas of each rank's compute cells."""
        return agrid_geometry(self.metrics)

    def run_diagnostics(self) -> dict[str, float]:
        """The acoustic step, the halo-update time, the most tracer subcycles of the last step
        and, with ``consv_te``, FV3's ``Energy_Deficit`` of the last step (W/m^2)."""
        d = self.dynamics
        out = {"acoustic_dt": d.dyn_core.acoustic_dt, "halo_seconds": d.halo_seconds,
               "tracer_subcycles_max": float(np.max(d.tracer_subcycles))
               if d.tracer_subcycles is not None else 0.0}  # fmt: skip
        if d.energy_fixer is not None and d.energy_fixer.active:
            out["energy_deficit_w_m2"] = d.energy_fixer.energy_deficit
        return out


class BaroclinicExperiment:
    """The JW06 baroclinic wave (or its steady state) on FV3's 3-D core."""

    def __init__(self, config: FV3Config) -> None:
        if config.case not in BAROCLINIC_TEST_CASES:
            raise FV3ConfigError(f"case={config.case!r} is not a 3-D case: use one of "
                                 f"{', '.join(BAROCLINIC_TEST_CASES)}")  # fmt: skip
        self.config = config
        self.constants = c = config.physical_constants
        self.substeps = config.k_split * config.n_split
        self.levels = set_eta(config.nz, constants=c)
        self.tracer_names = ("sphum", "checker") if config.checker_tr else ("sphum",)
        self._initial: JWInitialState | None = None
        self._metrics: dict[int, MetricTerms] = {}
        self._regridder = None

    @property
    def initial(self) -> JWInitialState:
        if self._initial is None:
            cfg, c = self.config, self.constants
            cube = CubedSphere.build(cfg.resolution, radius=c.radius, omega=c.omega)
            self._initial = init_jw(cube, self.levels, constants=c,
                                    perturbation=BAROCLINIC_TEST_CASES[cfg.case] == 13,
                                    tracer_names=self.tracer_names, checker_tr=cfg.checker_tr,
                                    hydrostatic=cfg.hydrostatic)  # fmt: skip
        return self._initial

    def metric(self, rank: Rank) -> MetricTerms:
        if rank.rank not in self._metrics:
            self._metrics[rank.rank] = self.initial.cube.metric_terms(rank.spec)
        return self._metrics[rank.rank]

    def cfl_rate(self, rank: Rank) -> float:
        """max over the rank's compute cells and layers of ``(|V| + c_s) / min(dxa, dya)`` of
        the initial state (1/s), ``c_s = sqrt(cp/cv R T)`` the speed of the Lamb wave the
        hydrostatic acoustic steps resolve."""
        m, s = self.metric(rank), self.initial.for_rank(rank.spec)
        c = self.constants
        h, nx, ny = rank.spec.n_halo, rank.spec.nx, rank.spec.ny
        speed = np.hypot(_interior(s.ua, h, nx, ny), _interior(s.va, h, nx, ny))
        gamma = c.cp_air / (c.cp_air - c.rdgas)
        sound = np.sqrt(gamma * c.rdgas * _interior(s.pt, h, nx, ny))
        dx = np.minimum(_interior(m.dxa, h, nx, ny), _interior(m.dya, h, nx, ny))[:, :, None]
        return float(((speed + sound) / dx).max())

    def build(self, factory: StencilFactory, decomposition: Decomposition, dt: float
              ) -> BaroclinicModel:  # fmt: skip
        metrics = {r.rank: self.metric(r) for r in decomposition.ranks}
        states, tracers, phis = {}, {}, {}
        for r in decomposition.ranks:
            s = self.initial.for_rank(r.spec)
            names = ("delp", "pt", "u", "v", "phis", "pe", "peln", "pk", "pkz", "ps")
            states[r.rank] = {k: getattr(s, k) for k in names + (() if self.config.hydrostatic
                                                                  else ("w", "delz"))}  # fmt: skip
            tracers[r.rank] = s.q
            phis[r.rank] = s.phis
        c = self.constants
        dynamics = DynamicalCore(factory, metrics, states, tracers,
                                          self.config.dynamics_options(), dt,
                                          decomposition.communicator, ak=self.levels.ak,
                                          bk=self.levels.bk, akap=c.kappa, cp_air=c.cp_air,
                                          constants=c)  # fmt: skip
        return BaroclinicModel(dynamics, metrics, phis, self.config)

    def regridder(self, grid: GlobalGrid):
        """The lon-lat regridder of the gathered cell centres (built once)."""
        from fv3core.grid.latlon_regrid import LatLonRegridder

        if self._regridder is None:
            self._regridder = LatLonRegridder.build(grid.lon, grid.lat, nlon=LATLON[0],
                                                    nlat=LATLON[1])  # fmt: skip
        return self._regridder

    def budgets(self, fields: Mapping[str, np.ndarray], grid: GlobalGrid) -> dict[str, float]:
        """Dry-air mass (kg), each tracer's mass (kg) and the total energy (J, FV3's
        ``compute_total_energy`` with the A-grid kinetic energy) of gathered output fields."""
        c = self.constants
        pe = fields["pe"]
        kinetic = 0.5 * (fields["ua"] ** 2 + fields["va"] ** 2)
        out = {"dry_mass": dry_air_mass(fields["delp"], grid.area, constants=c),
               "total_energy": total_energy(fields["temperature"], fields["delp"], pe,
                                            np.log(pe), fields["phis"], kinetic, grid.area,
                                            constants=c)}  # fmt: skip
        for name in self.tracer_names:
            out[f"{name}_mass"] = tracer_mass(fields[name], fields["delp"], grid.area, constants=c)
        return out

    def analyse(self, start: Mapping[str, np.ndarray], end: Mapping[str, np.ndarray],
                grid: GlobalGrid, t_end: float) -> Analysis:  # fmt: skip
        """The 2-D output fields (and ``ps_initial``), ``ps`` min/max with their lon/lat, the
        changes of dry-air mass, tracer masses and total energy (``*_change`` in kg and J,
        ``*_relative_change`` where the initial value is not 0), the total-energy
        drift per day, JW06's ``l2`` of the zonal-mean zonal wind change (on model levels,
        1-degree grid), FV3's printed extrema (``PS_max``, ``UA_mean``, ...:
        :func:`~fv3core.validation.baroclinic_norms.printed_extrema`), each tracer's ``<name>_min``
        and ``<name>_max`` over every cell and layer, and the lon-lat fields
        ``<name>_latlon``."""
        regrid = self.regridder(grid)
        before, after = self.budgets(start, grid), self.budgets(end, grid)
        days = t_end / 86400.0
        d: dict[str, float] = {}
        for key, value in after.items():
            d[f"{key}_change"] = value - before[key]
            if before[key]:  # a tracer that is 0 (sphum of an adiabatic run) has no relative change
                d[f"{key}_relative_change"] = (value - before[key]) / before[key]
        d["total_energy_drift_per_day"] = d["total_energy_relative_change"] / days if days else 0.0
        ps = end["ps"]
        for key, value in extrema(ps, grid.lon, grid.lat).items():
            d[f"ps_{key}"] = value
        d.update(printed_extrema(end, grid.area))
        for name in self.tracer_names:
            d[f"{name}_min"], d[f"{name}_max"] = float(end[name].min()), float(end[name].max())
        u_ll = np.stack([regrid(end["ua"][..., k]) for k in range(end["ua"].shape[-1])], -1)
        u0_ll = np.stack([regrid(start["ua"][..., k]) for k in range(start["ua"].shape[-1])], -1)
        dp = np.diff(self.levels.interface_pressure(1.0e5))
        d["u_zonal_mean_l2"] = zonal_mean_wind_l2(u_ll, u0_ll, regrid.lat, dp)
        fields = {name: end[name] for name in FIELDS_2D}
        fields["ps_initial"] = start["ps"]
        if "w" in end:  # non-hydrostatic: w and delz on the model layers, FV3's w extremes
            fields["w"], fields["delz"] = end["w"], end["delz"]
            d["w_min"], d["w_max"] = float(end["w"].min()), float(end["w"].max())
        for name in self.tracer_names:
            fields[f"{name}_column"] = end[f"{name}_column"]
        latlon = {f"{name}_latlon": regrid(fields[name]) for name in FIELDS_2D}
        return Analysis({**fields, **latlon}, d)

"""FV3's shallow-water dynamics in GTScript: one large time step of ``dyn_core.F90``
(``SW_DYNAMICS``, hydrostatic) for every rank of this process, with FV3's halo updates.

Per acoustic step (``dt = dt_atmos / n_split``), as FV3:

1. ``c_sw`` (:class:`~fv3core.stencils.c_sw.CGridShallowWaterDynamics`: ``d2a2c_vect``, the
   corner divergence for ``nord > 0``, the half-step ``delpc`` and C-grid winds);
2. ``nord > 0``: corner update of ``divg_d`` (no edge synchronisation);
3. ``geopk`` on the C grid and ``p_grad_c``
   (:class:`~fv3core.stencils.p_grad.Geopotential`,
   :class:`~fv3core.stencils.p_grad.CGridPressureGradient`);
4. C-grid vector update of ``uc``, ``vc``;
5. ``d_sw`` (:class:`~fv3core.stencils.d_sw.DGridShallowWaterLagrangianDynamics` with
   :class:`~fv3core.stencils.divergence_damping.DivergenceDamping` and, with
   ``do_vort_damp``, the vorticity damping of order ``min(2, nord)`` and coefficient ``vtdm4``);
6. scalar update of ``delp``; ``geopk`` on the D grid and ``one_grad_p`` (``beta > 0``: the
   off-centred ``grad1_p_update``, ``beta_d = 0`` in the first acoustic step)
   (:class:`~fv3core.stencils.p_grad.DGridPressureGradient`);
7. D-grid vector update of ``u``, ``v`` (no edge synchronisation), or after the last acoustic
   step FV3's ``mpp_get_boundary``: the shared boundary points from the neighbour.

The large step starts with the scalar update of ``delp`` and the D-grid update of ``u``, ``v``
(FV3's ``fv_dynamics``).  FV3's ``test_case = 1`` (Williamson TC1, the state's prescribed C-grid
winds ``uc``, ``vc``) skips everything of ``dyn_core``'s ``test_case > 1`` blocks: per acoustic
step only ``d_sw``'s advection of ``delp``
(:class:`~fv3core.stencils.d_sw_advection.DelpAdvection`) and the scalar update of
``delp``; the large step's updates are never completed there, the winds never change.  Halo
updates go through :class:`mapping.cluster.Communicator` halo updaters, which reproduce FMS's
``mpp_update_domains`` value for value, so one process with all ranks, 6 or 24 ranks and
``mpiexec`` give bitwise the same fields.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fv3core.dycore.acoustic_halos import AcousticHalos, run_phase
from fv3core.dycore.options import ShallowWaterKeys
from fv3core.grid.metric_terms import MetricTerms
from fv3core.grid.storages import GridStorages
from fv3core.stencils.c_sw import CGridShallowWaterDynamics
from fv3core.stencils.d_sw import DGridShallowWaterLagrangianDynamics
from fv3core.stencils.d_sw_advection import DelpAdvection
from fv3core.stencils.divergence_damping import DivergenceDamping
from fv3core.stencils.geopk import Geopotential
from fv3core.stencils.p_grad import (
    CGridPressureGradient,
    DGridPressureGradient,
)
from fv3core.testcases.shallow_water import RankState
from mapping.cluster import Communicator
from stencils.dims import (
    CELL_DIMS,
    CORNER_DIMS,
    X_DIM,
    Y_DIM,
    Z_INTERFACE_DIM,
    GridIndexing,
    face_dims,
)
from stencils.directions import X, Y
from stencils.factory import StencilFactory
from stencils.launch import Launch
from stencils.storage import from_numpy, to_numpy, zeros

#: the prognostic fields of FV3's shallow-water state, with their staggering
PROGNOSTICS = {"delp": CELL_DIMS, "phis": CELL_DIMS, "u": face_dims(Y), "v": face_dims(X)}


class ShallowWaterRank:
    """One rank's storages (FV3's names and shapes, 3-point halo) and the bound launches of its
    routines; the halo updates between them are :class:`ShallowWaterDynamics`'."""

    def __init__(self, factory: StencilFactory, metric: MetricTerms, state: RankState,
                 config: ShallowWaterKeys, dt: float) -> None:  # fmt: skip
        """``dt``: the acoustic time step (s), ``dt_atmos / n_split``."""
        spec = metric.spec
        self.spec, self.metric = spec, metric
        indexing = GridIndexing(spec.nx, spec.ny, config.nz, spec.n_halo)
        grid_factory = factory.on_grid(indexing)
        backend = factory.backend
        grid = self.grid = GridStorages(metric, backend)

        def alloc(dims: tuple[str, ...]) -> Any:
            return zeros(indexing.domain_of(dims), backend)

        def initial(a: np.ndarray, dims: tuple[str, ...]) -> Any:
            out = to_numpy(alloc(dims))
            out[: a.shape[0], : a.shape[1], :] = np.asarray(a, dtype=np.float64)[:, :, None]
            return from_numpy(out, backend)

        self.delp, self.phis = initial(state.delp, CELL_DIMS), initial(state.phis, CELL_DIMS)
        self.u, self.v = initial(state.u, face_dims(Y)), initial(state.v, face_dims(X))
        self.pt = initial(np.ones(indexing.domain_of(CELL_DIMS).shape[:2]), CELL_DIMS)
        self.uc, self.vt = alloc(face_dims(X)), alloc(face_dims(Y))
        self.vc, self.ut = alloc(face_dims(Y)), alloc(face_dims(X))
        self.ua, self.va = alloc(CELL_DIMS), alloc(CELL_DIMS)
        self.delpc, self.ptc = alloc(CELL_DIMS), alloc(CELL_DIMS)
        self.divg_d = alloc(CORNER_DIMS)
        self.pk, self.gz = alloc((X_DIM, Y_DIM, Z_INTERFACE_DIM)), alloc((X_DIM, Y_DIM, Z_INTERFACE_DIM))
        phis_2d = from_numpy(np.ascontiguousarray(to_numpy(self.phis)[:, :, 0]), backend)
        #: FV3's test_case = 1: only d_sw's advection of delp by the prescribed uc, vc
        self.advection_only = state.test_case == 1
        # dyn_core's vorticity damping of one layer (no sponge): nord_v, damp_vt
        nord_v, damp_v = min(2, config.nord), config.vtdm4 if config.do_vort_damp else 0.0
        if self.advection_only:
            self.uc, self.vc = initial(state.uc, face_dims(X)), initial(state.vc, face_dims(Y))
            advection = DelpAdvection(grid_factory, grid, spec, dt, config.hord_dp,
                                         nord_v=nord_v, damp_v=damp_v)  # fmt: skip
            self.d_grid = advection.bind(self.delp, self.uc, self.vc)
            self.c_grid = self.c_grid_pressure = self.d_grid_pressure = []
            self.start = self.d_grid_pressure_first = []
            return

        dt2 = 0.5 * dt
        c_sw = CGridShallowWaterDynamics(grid_factory, grid, spec, config.nord, dt2)
        damping = DivergenceDamping(grid_factory, grid, spec, config.nord, config.dddmp,
                                       config.d2_bg, config.d4_bg, dt)  # fmt: skip
        d_sw = DGridShallowWaterLagrangianDynamics(grid_factory, grid, spec, dt, config.hord_dp, config.hord_mt,
                                    config.hord_vt, damping, nord_v=nord_v, damp_v=damp_v)  # fmt: skip
        geopk_c = Geopotential(grid_factory, cgrid=True)
        geopk_d = Geopotential(grid_factory, cgrid=False)
        #: FV3's sequence, cut where a halo update comes between
        self.c_grid: list[Launch] = c_sw.bind(
            self.delp, self.pt, self.u, self.v, self.uc, self.vc, self.ua, self.va, self.ut,
            self.vt, self.delpc, self.ptc, self.divg_d if config.nord > 0 else None)  # fmt: skip
        self.c_grid_pressure: list[Launch] = [
            *geopk_c.bind(self.delpc, self.ptc, phis_2d, self.pk, self.gz),
            *CGridPressureGradient(grid_factory, grid, dt2).bind(self.uc, self.vc, self.pk, self.gz),
        ]  # fmt: skip
        self.d_grid: list[Launch] = d_sw.bind(self.delp, self.u, self.v, self.uc, self.vc,
                                              self.ua, self.va, self.divg_d)  # fmt: skip
        pgrad_d = DGridPressureGradient(grid_factory, grid, spec, dt, beta=config.beta)
        # beta > 0: grad1_p_update's increments du (u points), dv (v points)
        increments = (alloc(face_dims(Y)), alloc(face_dims(X))) if config.beta > 0 else None
        #: the large step's start (beta > 0: du, dv := 0)
        self.start = pgrad_d.bind_reset(increments) if increments else []
        geopk = geopk_d.bind(self.delp, self.pt, phis_2d, self.pk, self.gz)
        self.d_grid_pressure: list[Launch] = [
            *geopk, *pgrad_d.bind(self.u, self.v, self.pk, self.gz, increments)]
        #: the same in the first acoustic step (beta > 0: FV3's beta_d = 0)
        self.d_grid_pressure_first: list[Launch] = (
            [*geopk, *pgrad_d.bind(self.u, self.v, self.pk, self.gz, increments, first=True)]
            if increments else self.d_grid_pressure)  # fmt: skip

    def arrays(self) -> dict[str, np.ndarray]:
        """The prognostic fields (:data:`PROGNOSTICS`) as NumPy copies of the first level,
        FV3's 2-D shapes with the halo."""
        return {name: to_numpy(getattr(self, name))[:, :, 0] for name in PROGNOSTICS}


def _first_step_pressure(d: ShallowWaterRank) -> list[Launch]:
    return d.d_grid_pressure_first


def _step_pressure(d: ShallowWaterRank) -> list[Launch]:
    return d.d_grid_pressure


class ShallowWaterDynamics:
    """FV3's shallow-water dynamics on the ranks of this process: :meth:`step` is one large
    time step (``n_split`` acoustic steps of ``dt_atmos / n_split``)."""

    def __init__(self, factory: StencilFactory, metrics: dict[int, MetricTerms],
                 states: dict[int, RankState], config: ShallowWaterKeys, dt_atmos: float,
                 communicator: Communicator) -> None:  # fmt: skip
        self.n_split, self.dt_atmos = config.n_split, dt_atmos
        self.acoustic_dt = dt_atmos / config.n_split
        self.ranks = {r: ShallowWaterRank(factory, m, states[r], config, self.acoustic_dt)
                      for r, m in sorted(metrics.items())}  # fmt: skip
        h = next(iter(metrics.values())).spec.n_halo
        self.advection_only = all(d.advection_only for d in self.ranks.values())
        self.halos = AcousticHalos(communicator, self.ranks, h, config.nord, lambda d: [d.delp])

    @property
    def halo_seconds(self) -> float:
        """Seconds spent in halo updates (all steps)."""
        return self.halos.seconds

    def step(self) -> None:
        """One large time step."""
        halos, ranks = self.halos, self.ranks
        if self.advection_only:  # test_case = 1
            for _ in range(self.n_split):
                run_phase(ranks, lambda d: d.d_grid)
                halos.exchange(halos.scalars)
            return
        run_phase(ranks, lambda d: d.start)
        halos.exchange(halos.scalars)
        halos.exchange(halos.d_winds)
        for it in range(1, self.n_split + 1):
            run_phase(ranks, lambda d: d.c_grid)
            halos.exchange(halos.divergence)
            run_phase(ranks, lambda d: d.c_grid_pressure)
            halos.exchange(halos.c_winds)
            run_phase(ranks, lambda d: d.d_grid)
            halos.exchange(halos.scalars)
            run_phase(ranks, _first_step_pressure if it == 1 else _step_pressure)
            halos.exchange(halos.boundary if it == self.n_split else halos.d_winds)

"""FV3's non-hydrostatic 3-D ``dyn_core`` in GTScript (``hydrostatic = .false.``, dry: no
``q_con``, ``d_con = 0``, ``d_ext = 0``, ``do_vort_damp = .false.``, cubed sphere with square
rank domains): the ``n_split`` acoustic steps of one remapping step for every rank of this
process, with FV3's halo updates.

Per acoustic step, as FV3's ``dyn_core.F90``:

1. the halo update of ``w``; the first step also makes the interface heights from ``delz``
   (``gz(npz+1) = zs``, ``gz(k) = gz(k+1) - delz(k)`` on the compute cells) and updates their
   halo;
2. ``c_sw`` on all layers with ``w`` transported into ``wc`` (FV3's ``omga``); ``nord > 0``: the
   corner update of ``divg_d``;
3. ``zh`` := ``gz`` (first step) or ``gz`` := ``zh``; ``update_dz_c``, ``Riem_Solver_c`` (the
   full pressure ``pkc`` and the geopotential ``gz`` of the C grid's half step) and ``p_grad_c``
   weighted by ``delpc``; the C-grid wind update;
4. ``d_sw`` per group of layers with equal damping, with the transport of ``w`` (the sponge
   layers damp it with del2, :func:`~fv3core.dycore.options.layer_damping`); the halo update of
   ``delp`` and ``pt``;
5. ``update_dz_d`` and ``Riem_Solver3`` (``w``, ``delz``, ``zh``, the perturbation pressure
   ``pkc`` and ``pk3``; the last acoustic step, FV3's ``remap_step``, also ``pe``, ``peln``,
   ``pk``); the halo updates of ``zh`` and (two points) ``pkc``; ``pe_halo`` (last step) and
   ``pk3_halo`` (``use_logp``: ``pln_halo``); ``gz = zh grav`` on the compute cells + 2;
6. ``nh_p_grad`` (``beta > 0``: ``split_p_grad``); the D-grid wind update, or after the last
   step FV3's ``mpp_get_boundary``.

Reference: :mod:`tests.fv3core.transliteration.dyn_core_nonhydrostatic` (FV3's loops), bit for
bit on numpy (tests/fv3core/test_fv3_dyn_core_nonhydrostatic.py).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import BACKWARD, PARALLEL, computation, interval

from fv3core.dycore.acoustic_halos import AcousticHalos, run_phase
from fv3core.dycore.dyn_core import INTERFACE_DIMS, PROGNOSTICS, AcousticDynCore, AcousticRank
from fv3core.dycore.options import DynCoreOptions, NonHydrostaticOptions
from fv3core.errors import FV3ConfigError
from fv3core.grid.metric_terms import MetricTerms
from fv3core.stencils.halo_pressure import HaloPressure
from fv3core.stencils.nh_p_grad import NonHydrostaticPressureGradient
from fv3core.stencils.p_grad import CGridPressureGradient, set_value
from fv3core.stencils.riem_solver import RiemannSolver3, RiemannSolverC
from fv3core.stencils.sim_solver import rayleigh_w_factors
from fv3core.stencils.update_dz_c import UpdateDzC, copy_interfaces
from fv3core.stencils.update_dz_d import UpdateDzD
from mapping.cluster import Communicator, ScalarHalo
from stencils.dims import CELL_DIMS, face_dims
from stencils.directions import X, Y
from stencils.factory import StencilFactory
from stencils.launch import Launch
from stencils.storage import from_numpy

FloatField = gtscript.Field[np.float64]
FloatFieldIJ = gtscript.Field[gtscript.IJ, np.float64]

#: the non-hydrostatic state: the hydrostatic core's plus w (m/s) and delz (m, < 0)
NONHYDROSTATIC_PROGNOSTICS = {**PROGNOSTICS, "w": CELL_DIMS, "delz": CELL_DIMS}


def heights_from_thickness(gz: FloatField, delz: FloatField, zs: FloatFieldIJ):
    """FV3 ``dyn_core``'s first acoustic step: the interface heights from the surface up."""
    with computation(BACKWARD):
        with interval(-1, None):
            gz = zs
        with interval(0, -1):
            gz = gz[0, 0, 1] - delz


def geopotential_of_heights(zh: FloatField, gz: FloatField, grav: float):
    """``gz = zh grav`` (FV3 after ``Riem_Solver3``)."""
    with computation(PARALLEL), interval(...):
        gz = zh * grav


def reference_thickness(ak: np.ndarray, bk: np.ndarray) -> np.ndarray:
    """FV3's ``dp_ref``: the layers' pressure thickness at a surface pressure of 1000 hPa."""
    return (ak[1:] - ak[:-1]) + (bk[1:] - bk[:-1]) * 1.0e5


def full_level_pressure(ak: np.ndarray, bk: np.ndarray) -> np.ndarray:
    """FV3 ``fv_dynamics``' ``pfull`` (Pa): the layers' mean pressure at 1000 hPa."""
    ph = ak + bk * 1.0e5
    return (ph[1:] - ph[:-1]) / np.log(ph[1:] / ph[:-1])


class NonHydrostaticRank(AcousticRank):
    """One rank's storages and bound launches of FV3's non-hydrostatic ``dyn_core``
    (:class:`~fv3core.dycore.dyn_core.AcousticRank` with ``w``, ``delz``); the halo updates
    between them are :class:`NonHydrostaticDynCore`'s.  ``ak``, ``bk``: the hybrid levels
    (``npz + 1`` interfaces, ``ptop = ak[0]``); ``akap``, ``rdgas``, ``grav``: the run's
    constants."""

    prognostics = NONHYDROSTATIC_PROGNOSTICS

    def __init__(self, factory: StencilFactory, metric: MetricTerms,
                 state: Mapping[str, np.ndarray], options: DynCoreOptions,
                 nonhydrostatic: NonHydrostaticOptions, dt: float, *, ak: np.ndarray,
                 bk: np.ndarray, akap: float, rdgas: float, grav: float) -> None:  # fmt: skip
        super().__init__(factory, metric, state, options, dt, hydrostatic=False)
        nh, o, spec, grid, alloc = nonhydrostatic, options, self.spec, self.grid, self.alloc
        if o.beta < 0.0:
            raise FV3ConfigError(f"beta={o.beta}: the non-hydrostatic one_grad_p (beta < -0.1) "
                                 "is not ported; use 0 <= beta < 1")  # fmt: skip
        npz, backend = self.npz, factory.backend
        grid_factory = factory.on_grid(self.indexing)
        ptop, dt2 = float(ak[0]), 0.5 * dt
        dp_ref = reference_thickness(ak, bk)
        zs2d = np.asarray(state["phis"], dtype=np.float64) * (1.0 / grav)
        #: FV3's zs: the surface height (m)
        self.zs = from_numpy(np.ascontiguousarray(zs2d), backend)
        self.zh = alloc(INTERFACE_DIMS)
        self.pk3 = alloc(INTERFACE_DIMS)
        self.ws = from_numpy(np.zeros(self.indexing.domain_of(CELL_DIMS).shape[:2]), backend)
        self.ws3 = from_numpy(np.zeros(self.indexing.domain_of(CELL_DIMS).shape[:2]), backend)
        pfull = full_level_pressure(ak, bk)

        def rff(step: float) -> np.ndarray | None:
            if nh.fast_tau_w_sec <= 0.0:
                return None
            return rayleigh_w_factors(step, nh.fast_tau_w_sec, nh.rf_cutoff, ptop, pfull)

        solver = {"a_imp": nh.a_imp, "akap": akap, "ptop": ptop, "rgas": rdgas, "grav": grav,
                  "p_fac": nh.p_fac}  # fmt: skip
        #: the first acoustic step: the interface heights from delz
        self.heights = [grid_factory.from_dims(heights_from_thickness, INTERFACE_DIMS).bind(
            gz=self.gz, delz=self.delz, zs=self.zs)]  # fmt: skip
        copy = grid_factory.from_dims(copy_interfaces, INTERFACE_DIMS, spec.n_halo,
                                      name="dyn_core_copy_heights")  # fmt: skip
        c_pressure = [
            *UpdateDzC(grid_factory, grid, spec, dp_ref, dt2).bind(self.gz, self.ut, self.vt, self.zs, self.ws3),
            *RiemannSolverC(grid_factory, dt=dt2, rff=rff(dt2), **solver).bind(
                self.omga, self.ptc, self.delpc, self.gz, self.phis, self.ws3, self.pkc),
            *CGridPressureGradient(grid_factory, grid, dt2, hydrostatic=False).bind(
                self.uc, self.vc, self.pkc, self.gz, delpc=self.delpc),
        ]  # fmt: skip
        #: the C grid's pressure step: first acoustic step? -> launches
        self.c_grid_pressure: dict[bool, list[Launch]] = {
            True: [copy.bind(src=self.gz, dst=self.zh), *c_pressure],
            False: [copy.bind(src=self.zh, dst=self.gz), *c_pressure],
        }
        nord_v = [min(2, o.nord)] * npz
        update_dz_d = UpdateDzD(factory, grid, spec, npz, dp0=dp_ref, hord_tm=o.hord_tm, nord_v=nord_v,
                                damp_vt=[0.0] * npz, rdt=1.0 / dt)  # fmt: skip
        riem = {last: RiemannSolver3(grid_factory, dt=dt, d2bg_zq=nh.d2bg_zq, use_logp=nh.use_logp,
                                     last_call=last, rff=rff(dt), **solver)
                for last in (False, True)}  # fmt: skip
        #: the vertical solve after d_sw: last acoustic step? -> launches
        self.vertical_solve: dict[bool, list[Launch]] = {
            last: [*update_dz_d.bind(self.zh, *self.courant, self.zs, self.ws),
                   *riem[last].bind(self.w, self.delz, self.pt, self.delp, self.zh, self.zs, self.ws,
                                    self.pkc, self.pk3, self.pe, self.peln, self.pk)]
            for last in (False, True)
        }  # fmt: skip
        pe_halo = HaloPressure(grid_factory, "pe_halo", ptop=ptop).bind(self.delp, self.pe)
        pk3_halo = HaloPressure(grid_factory, "pln_halo" if nh.use_logp else "pk3_halo", ptop=ptop,
                                akap=akap).bind(self.delp, self.pk3)  # fmt: skip
        to_gz = grid_factory.from_dims(geopotential_of_heights, INTERFACE_DIMS, 2).bind(
            zh=self.zh, gz=self.gz, grav=float(grav))  # fmt: skip
        top_value = math.log(ptop) if nh.use_logp else ptop**akap
        pgrad = NonHydrostaticPressureGradient(grid_factory, grid, spec, dt, top_value, beta=o.beta)
        increments = (alloc(face_dims(Y)), alloc(face_dims(X))) if o.beta > 0 else None
        zero = {d: grid_factory.from_dims(set_value, face_dims(d), spec.n_halo, name=f"zero_increment_{d.name}")
                for d in (X, Y)}  # fmt: skip
        #: the first dyn_core call of a large step (beta > 0: du, dv := 0)
        self.init_step: list[Launch] = ([zero[Y].bind(q=increments[0], value=0.0),
                                         zero[X].bind(q=increments[1], value=0.0)]
                                        if increments else [])  # fmt: skip
        #: the D grid's pressure step after the zh, pkc halo updates: (first, last) -> launches
        self.d_grid_pressure: dict[tuple[bool, bool], list[Launch]] = {
            (first, last): [*([pe_halo] if last else []), pk3_halo, to_gz,
                            *pgrad.bind(self.u, self.v, self.pkc, self.gz, self.delp, self.pk3,
                                        increments, first=first and increments is not None)]
            for first in (False, True) for last in (False, True)
        }  # fmt: skip


class NonHydrostaticDynCore(AcousticDynCore):
    """FV3's non-hydrostatic ``dyn_core`` on the ranks of this process: :meth:`step` is one
    call, ``n_split`` acoustic steps of ``mdt / n_split`` (see the module)."""

    def __init__(self, factory: StencilFactory, metrics: dict[int, MetricTerms],
                 states: Mapping[int, Mapping[str, np.ndarray]], options: DynCoreOptions,
                 nonhydrostatic: NonHydrostaticOptions, mdt: float, communicator: Communicator, *,
                 ak: Sequence[float], bk: Sequence[float], akap: float, rdgas: float,
                 grav: float) -> None:  # fmt: skip
        self.options, self.mdt = options, mdt
        self.acoustic_dt = mdt / options.n_split
        ak_, bk_ = np.asarray(ak, dtype=np.float64), np.asarray(bk, dtype=np.float64)
        self.ranks = {r: NonHydrostaticRank(factory, m, states[r], options, nonhydrostatic,
                                            self.acoustic_dt, ak=ak_, bk=bk_, akap=akap,
                                            rdgas=rdgas, grav=grav)
                      for r, m in sorted(metrics.items())}  # fmt: skip
        h = next(iter(metrics.values())).spec.n_halo
        halos = self.halos = AcousticHalos(communicator, self.ranks, h, options.nord,
                                           lambda d: [d.delp, d.pt])  # fmt: skip
        self.w_halo = halos.updater(lambda d: [ScalarHalo(d.w, h)])
        self.gz_halo = halos.updater(lambda d: [ScalarHalo(d.gz, h)])
        # FV3 (square rank domains): zh in full, pkc two points deep
        self.solve_halos = halos.updater(lambda d: [ScalarHalo(d.zh, h), ScalarHalo(d.pkc, h, depth=2)])

    def step(self, init_step: bool) -> None:
        """One ``dyn_core`` call; ``init_step``: the large step's first (FV3's ``n_map == 1``)."""
        halos, ranks = self.halos, self.ranks
        self.begin(init_step)
        n = self.options.n_split
        for it in range(1, n + 1):
            first, last = it == 1, it == n
            halos.exchange(self.w_halo)
            if first:
                run_phase(ranks, lambda d: d.heights)
                halos.exchange(self.gz_halo)
            run_phase(ranks, lambda d: d.c_grid)
            halos.exchange(halos.divergence)
            run_phase(ranks, lambda d, first=first: d.c_grid_pressure[first])
            halos.exchange(halos.c_winds)
            run_phase(ranks, lambda d: d.d_grid)
            halos.exchange(halos.scalars)
            run_phase(ranks, lambda d, last=last: d.vertical_solve[last])
            halos.exchange(self.solve_halos)
            run_phase(ranks, lambda d, key=(first, last): d.d_grid_pressure[key])
            halos.exchange(halos.boundary if last else halos.d_winds)

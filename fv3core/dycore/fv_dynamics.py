"""FV3's 3-D dynamical core in GTScript: one large time step of ``fv_dynamics``
(``fv_dynamics.F90``, adiabatic, dry; hydrostatic or non-hydrostatic) for every rank of this
process.

One step of ``dt_atmos``, as FV3:

1. ``pt`` := ``pt / pkz``: the temperature to FV3's (dry, so virtual = plain) potential
   temperature with the layer-mean ``pkz`` the state carries (non-hydrostatic: ``pkz`` of the
   gas law from ``delz`` first, ``exp(kappa log(-rdgas/grav delp T / delz))``);
2. ``k_split`` times (``mdt = dt_atmos / k_split``):

   a. ``dp1`` := ``delp`` (the mass before the acoustic steps, for the tracers);
   b. ``dyn_core``: ``n_split`` acoustic steps (:class:`~fv3core.dycore.dyn_core
      .HydrostaticDynCore` or :class:`~fv3core.dycore.dyn_core_nonhydrostatic
      .NonHydrostaticDynCore`; its first call of the step is FV3's ``init_step``);
   c. tracers (``nq > 0``): ``tracer_2d`` (``z_tracer``: ``tracer_2d_1L``) with the flux
      capacitor (:class:`~fv3core.stencils.tracer_2d.MultiRankTracerAdvection`,
      ``hord_tr``);
   d. ``npz > 4``: the vertical remapping to the hybrid levels
      (:class:`~fv3core.vertical.remapping.LagrangianToEulerian`, ``kord_mt``, ``kord_tm``,
      ``kord_tr``; non-hydrostatic also ``w`` with ``kord_wz`` and ``delz`` through the specific
      volume); the last one leaves ``pt`` as the temperature again and ``ps``, ``pe``,
      ``peln``, ``pk``, ``pkz`` on the Eulerian levels;
   e. after the last one, ``consv_te``: the total-energy fixer
      (:class:`~fv3core.vertical.energy_fixer.TotalEnergyFixer`, its column energies taken
      before step 1; hydrostatic only).

Not implemented (refused by name where a key asks for them): moisture (``nwat > 0``),
Rayleigh friction, ``d_con`` heating, external-mode damping ``d_ext``, vorticity damping in 3-D,
the energy fixer of the non-hydrostatic core.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import PARALLEL, computation, exp, interval, log

from fv3core.constants import Constants
from fv3core.dycore.acoustic_halos import run_phase
from fv3core.dycore.dyn_core import AcousticRank, HydrostaticDynCore
from fv3core.dycore.dyn_core_nonhydrostatic import NonHydrostaticDynCore
from fv3core.dycore.options import DynCoreOptions, NonHydrostaticOptions
from fv3core.errors import FV3ConfigError
from fv3core.grid.metric_terms import MetricTerms
from fv3core.stencils.divergence_damping import copy_field
from fv3core.stencils.tracer_2d import MultiRankTracerAdvection, TracerFields
from fv3core.vertical.energy_fixer import TotalEnergyFixer
from fv3core.vertical.remapping import LagrangianToEulerian, NonHydrostaticRemap, to_potential
from mapping.cluster import Communicator
from stencils.dims import CELL_DIMS, GridIndexing
from stencils.factory import StencilFactory
from stencils.launch import Launch
from stencils.storage import from_numpy, to_numpy, zeros

FloatField = gtscript.Field[np.float64]

#: the fewest layers FV3 remaps (``fv_dynamics``: ``if (npz > 4)``)
MIN_REMAP_LAYERS = 5


@dataclass(frozen=True)
class DynamicsOptions:
    """The keys ``fv_dynamics`` reads besides ``dyn_core``'s (FV3's names): ``k_split``
    remapping steps per ``dt_atmos``; ``hord_tr`` (tracers' PPM); ``kord_mt``, ``kord_tm``
    (< 0: remap the temperature), ``kord_tr``: the remapping schemes; ``fill``: ``fillz`` of
    the tracers after remapping; ``z_tracer``: FV3's choice of ``tracer_2d_1L`` (true) or
    ``tracer_2d`` (false, FV3's default; ``q_split = 0``); ``consv_te``: the fraction of the
    total energy lost over a step that is restored (FV3's energy fixer; 0: none);
    ``nonhydrostatic``: FV3's ``hydrostatic = .false.`` with these keys, None: hydrostatic."""

    dyn_core: DynCoreOptions
    k_split: int = 1
    hord_tr: int = 8
    kord_mt: int = 8
    kord_tm: int = -8
    kord_tr: int = 8
    fill: bool = True
    z_tracer: bool = False
    consv_te: float = 0.0
    nonhydrostatic: NonHydrostaticOptions | None = None

    def __post_init__(self) -> None:
        if self.k_split < 1:
            raise FV3ConfigError(f"k_split={self.k_split}: use a positive integer")
        if not np.isfinite(self.consv_te):
            raise FV3ConfigError(f"consv_te={self.consv_te}: must be a finite number")
        if self.nonhydrostatic is not None and self.consv_te != 0.0:
            raise FV3ConfigError(
                f"consv_te={self.consv_te} with hydrostatic=False: the energy fixer's non-"
                "hydrostatic total energy (with w and delz) is not ported; use consv_te=0")

    @property
    def hydrostatic(self) -> bool:
        return self.nonhydrostatic is None


def gas_law_pkz(pt: FloatField, delp: FloatField, delz: FloatField, pkz: FloatField, akap: float,
                rdg: float):  # fmt: skip
    """``fv_dynamics``' non-hydrostatic ``pkz = exp(kappa log(rdg delp T / delz))`` (dry: FV3's
    ``1 + dp1`` is 1), ``rdg = -rdgas / grav``, from the temperature ``pt``."""
    with computation(PARALLEL), interval(...):
        pkz = exp(akap * log(rdg * delp * pt / delz))


class DynamicsRankState:
    """One rank's model state beyond ``dyn_core``'s storages: the tracers, ``dp1``, ``ps``
    and the remapping, all on the rank's ``dyn_core`` grid."""

    def __init__(self, factory: StencilFactory, core: AcousticRank,
                 tracers: Mapping[str, np.ndarray], options: DynamicsOptions,
                 ak: np.ndarray, bk: np.ndarray, akap: float,
                 remap_nonhydrostatic: NonHydrostaticRemap | None = None) -> None:  # fmt: skip
        backend = factory.backend
        indexing: GridIndexing = core.indexing
        grid_factory = factory.on_grid(indexing)
        self.core = core
        self.tracer_names = list(tracers)
        self.q = [from_numpy(np.array(a, dtype=np.float64), backend) for a in tracers.values()]
        self.dp1 = zeros(indexing.domain_of(CELL_DIMS), backend)
        self.ps = from_numpy(np.zeros(indexing.domain_of(CELL_DIMS).shape[:2]), backend)
        self.remap = (
            LagrangianToEulerian(grid_factory, ak, bk, kord_mt=options.kord_mt,
                                 kord_tm=options.kord_tm, kord_tr=options.kord_tr,
                                 nq=len(self.q), fill=options.fill, akap=akap,
                                 nonhydrostatic=remap_nonhydrostatic)
            if core.npz >= MIN_REMAP_LAYERS else None)  # fmt: skip
        c = core
        #: fv_dynamics' entry: the temperature to potential temperature (non-hydrostatic: with
        #: the pkz of the gas law, from delz)
        self.to_potential: list[Launch] = [grid_factory.from_dims(to_potential, CELL_DIMS).bind(
            pt=c.pt, pkz=c.pkz)]  # fmt: skip
        nh = remap_nonhydrostatic
        if nh is not None:
            self.to_potential.insert(0, grid_factory.from_dims(gas_law_pkz, CELL_DIMS).bind(
                pt=c.pt, delp=c.delp, delz=c.delz, pkz=c.pkz, akap=akap, rdg=nh.rrg))  # fmt: skip
        #: each remapping step's start: dp1 := delp (all points)
        self.save_dp1: list[Launch] = [grid_factory.from_dims(
            copy_field, CELL_DIMS, indexing.n_halo, name="fv_dynamics_dp1").bind(
            q=c.delp, out=self.dp1)]  # fmt: skip
        self.remapping: dict[bool, list[Launch]] = {
            last: (self.remap.bind(c.pe, c.delp, c.pt, c.u, c.v, self.q, self.ps, c.pk, c.peln,
                                   c.pkz, last_step=last,
                                   # ws: the surface's w (update_dz_d's), below the remapped w
                                   vertical=None if nh is None else (c.w, c.delz, c.ws))
                   if self.remap else [])
            for last in (False, True)
        }  # fmt: skip

    def tracer_fields(self) -> TracerFields:
        c = self.core
        return TracerFields(q=self.q, dp1=self.dp1, mfx=c.mfx, mfy=c.mfy, cx=c.cx, cy=c.cy)

    def arrays(self) -> dict[str, np.ndarray]:
        """The state as NumPy copies (FV3's shapes with the halo): ``dyn_core``'s prognostic
        and pressure fields, ``ps`` and the tracers under their names."""
        out = self.core.arrays()
        out["ps"] = to_numpy(self.ps)
        out.update({name: to_numpy(q) for name, q in zip(self.tracer_names, self.q)})
        return out


class DynamicalCore:
    """FV3's ``fv_dynamics`` (adiabatic, dry; hydrostatic or, with ``options.nonhydrostatic``,
    not) on the ranks of this process: :meth:`step` is one large time step ``dt_atmos``.

    ``states[rank]``: the rank's initial arrays (FV3's shapes with the halo, level 0 the
    model top): ``delp`` (Pa), ``pt`` (the temperature, K), ``u``, ``v`` (D grid, m/s),
    ``phis`` (m^2/s^2), ``pe``, ``peln``, ``pk``, ``pkz`` (FV3's ``p_var``: ``pkz`` is read
    on the compute cells at the first step; non-hydrostatic: made from ``delz``), ``ps`` (Pa)
    and, non-hydrostatic, ``w`` (m/s) and ``delz`` (m, < 0); ``tracers[rank]``: name ->
    mixing-ratio array (cells).  ``ak``, ``bk``: the hybrid levels' coefficients (``nz + 1``
    interfaces, ``ptop = ak[0]``); ``akap``, ``cp_air``: kappa and the heat capacity;
    ``constants``: the run's physical constants (``rdgas``, ``grav``, ``radius``), needed by
    the energy fixer (``consv_te != 0``) and the non-hydrostatic core."""

    def __init__(self, factory: StencilFactory, metrics: dict[int, MetricTerms],
                 states: Mapping[int, Mapping[str, np.ndarray]],
                 tracers: Mapping[int, Mapping[str, np.ndarray]], options: DynamicsOptions,
                 dt_atmos: float, communicator: Communicator, *, ak: Sequence[float],
                 bk: Sequence[float], akap: float, cp_air: float,
                 constants: Constants | None = None) -> None:  # fmt: skip
        self.options, self.dt_atmos = options, float(dt_atmos)
        self.mdt = self.dt_atmos / options.k_split
        ak, bk = np.asarray(ak, dtype=np.float64), np.asarray(bk, dtype=np.float64)
        #: the hybrid levels' coefficients (Pa, 1), nz + 1 interfaces top down
        self.ak, self.bk = ak, bk
        if ak.size - 1 < MIN_REMAP_LAYERS:
            raise FV3ConfigError(
                f"npz={ak.size - 1}: FV3's 3-D core remaps to its levels only with npz > 4 "
                f"(fv_dynamics); use at least {MIN_REMAP_LAYERS} layers")
        nh = options.nonhydrostatic
        remap_nh = None
        self.dyn_core: HydrostaticDynCore | NonHydrostaticDynCore
        if nh is None:
            self.dyn_core = HydrostaticDynCore(factory, metrics, states, options.dyn_core,
                                               self.mdt, communicator, akap=akap, cp_air=cp_air,
                                               ptop=float(ak[0]))  # fmt: skip
        else:
            if constants is None:
                raise FV3ConfigError("hydrostatic = .false.: the non-hydrostatic core needs the "
                                     "run's constants (rdgas, grav)")  # fmt: skip
            self.dyn_core = NonHydrostaticDynCore(factory, metrics, states, options.dyn_core, nh,
                                                  self.mdt, communicator, ak=ak, bk=bk, akap=akap,
                                                  rdgas=constants.rdgas, grav=constants.grav)  # fmt: skip
            remap_nh = NonHydrostaticRemap(nh.kord_wz, constants.rdgas, constants.grav, cp_air)
        self.ranks: dict[int, DynamicsRankState] = {}
        for r, core in self.dyn_core.ranks.items():
            s = states[r]
            for name in ("pe", "peln", "pk", "pkz"):
                getattr(core, name)[...] = np.asarray(s[name], dtype=np.float64)
            rank = self.ranks[r] = DynamicsRankState(factory, core, tracers.get(r, {}), options, ak, bk,
                                                     akap, remap_nh)  # fmt: skip
            rank.ps[...] = np.asarray(s["ps"], dtype=np.float64)
        nq = {len(r.q) for r in self.ranks.values()}
        if len(nq) != 1:
            raise FV3ConfigError(f"the ranks carry different numbers of tracers: {sorted(nq)}")
        self.nq = nq.pop()
        self.tracer_transport = (
            MultiRankTracerAdvection(factory, {r: c.grid for r, c in self.dyn_core.ranks.items()},
                                        {r: s.tracer_fields() for r, s in self.ranks.items()},
                                        communicator, options.hord_tr,
                                        z_tracer=options.z_tracer)
            if self.nq else None)  # fmt: skip
        #: nsplt(k) of the last tracer transport (FV3's subcycles per layer)
        self.tracer_subcycles: np.ndarray | None = None
        self.energy_fixer = (self._energy_fixer(factory, communicator, constants, cp_air)
                             if options.consv_te != 0.0 else None)  # fmt: skip

    def _energy_fixer(self, factory: StencilFactory, communicator: Communicator,
                      constants: Constants | None, cp_air: float) -> TotalEnergyFixer:
        if constants is None:
            raise FV3ConfigError(f"consv_te={self.options.consv_te}: the energy fixer needs "
                                 "the run's constants (rdgas, grav, radius)")  # fmt: skip
        if constants.cp_air != cp_air:
            raise FV3ConfigError(f"cp_air={cp_air} differs from constants "
                                 f"{constants.name!r}' {constants.cp_air}")  # fmt: skip
        cores = self.dyn_core.ranks
        fields = {r: {"pt": c.pt, "delp": c.delp, "pe": c.pe, "peln": c.peln, "pk": c.pk,
                      "pkz": c.pkz, "u": c.u, "v": c.v, "phis": c.phis,
                      "rsin2": c.grid.rsin2, "cosa_s": c.grid.cosa_s}
                  for r, c in cores.items()}  # fmt: skip
        areas = {r: np.asarray(c.metric.area, dtype=np.float64)[c.indexing.interior(CELL_DIMS)]
                 for r, c in cores.items()}  # fmt: skip
        return TotalEnergyFixer({r: factory.on_grid(c.indexing) for r, c in cores.items()},
                                fields, areas, communicator, consv=self.options.consv_te,
                                dt_atmos=self.dt_atmos, ptop=float(self.ak[0]),
                                constants=constants)  # fmt: skip

    @property
    def halo_seconds(self) -> float:
        return self.dyn_core.halo_seconds

    def step(self) -> None:
        """One large time step ``dt_atmos``."""
        ranks, fixer = self.ranks, self.energy_fixer
        if fixer is not None:
            run_phase({r: r for r in ranks}, fixer.start)
        run_phase(ranks, lambda r: r.to_potential)
        k_split = self.options.k_split
        for n_map in range(1, k_split + 1):
            run_phase(ranks, lambda r: r.save_dp1)
            self.dyn_core.step(init_step=n_map == 1)
            if self.tracer_transport is not None:
                self.tracer_subcycles = self.tracer_transport()
            run_phase(ranks, lambda r, last=n_map == k_split: r.remapping[last])
        if fixer is not None:
            run_phase({r: r for r in ranks}, fixer.deficit)
            fixer.heat()

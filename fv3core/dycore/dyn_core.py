"""FV3's hydrostatic 3-D ``dyn_core`` in GTScript: the ``n_split`` acoustic steps of one
remapping step (``fv_dynamics``' ``mdt = dt_atmos / k_split``) for every rank of this process,
with FV3's halo updates (FV3 built without ``SW_DYNAMICS``, ``hydrostatic = .true.``, dry:
no ``q_con``, ``d_con = 0``, ``d_ext = 0``, ``do_vort_damp = .false.``).

Per acoustic step, as FV3:

1. ``c_sw`` on all layers (:class:`~fv3core.stencils.c_sw.CGridShallowWaterDynamics`, the
   3-D core's upwind transport of ``pt`` into ``ptc``);
2. ``nord > 0``: corner update of ``divg_d``;
3. ``geopk`` on the C grid from ``delpc``, ``ptc`` (``cp_air``, ``ptop``, kappa) and
   ``p_grad_c``; the C-grid vector update of ``uc``, ``vc``;
4. ``d_sw`` per group of layers with equal damping (:func:`~fv3core.dycore.options
   .layer_damping`: del2 in the sponge layers at the top), each transporting ``pt`` with
   ``hord_tm`` and adding its fluxes to FV3's flux capacitor ``mfx``, ``mfy``, ``cx``, ``cy``;
5. the scalar update of ``delp`` and ``pt``; ``geopk`` on the D grid with FV3's ``pe``,
   ``peln``, ``pkz`` (the last acoustic step: ``pk`` := ``pkc`` on the compute cells, FV3's
   ``remap_step``) and ``one_grad_p`` (``beta > 0``: ``grad1_p_update``);
6. the D-grid vector update of ``u``, ``v``, or after the last acoustic step FV3's
   ``mpp_get_boundary``.

Each ``dyn_core`` call starts by emptying the flux capacitor and with the halo updates of
``delp``, ``pt`` and the D-grid winds that ``fv_dynamics`` starts; the first call of a large
step (FV3's ``init_step``) also zeroes ``beta``'s increments.  Reference:
:mod:`tests.fv3core.transliteration.dyn_core_hydrostatic` (FV3's loops), bit for bit on numpy
(tests/fv3core/test_fv3_dyn_core.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from fv3core.dycore.acoustic_halos import AcousticHalos, run_phase
from fv3core.dycore.options import DynCoreOptions, layer_damping
from fv3core.errors import FV3ConfigError
from fv3core.grid.metric_terms import MetricTerms
from fv3core.grid.storages import GridStorages
from fv3core.stencils.c_sw import CGridShallowWaterDynamics
from fv3core.stencils.d_sw import DGridShallowWaterLagrangianDynamics
from fv3core.stencils.d_sw_vertical import DGridVerticalWind
from fv3core.stencils.divergence_damping import DivergenceDamping, copy_field
from fv3core.stencils.geopk import Geopotential
from fv3core.stencils.p_grad import (
    CGridPressureGradient,
    DGridPressureGradient,
    set_value,
)
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
from stencils.directions import DIRECTIONS, X, Y
from stencils.factory import StencilFactory
from stencils.launch import Launch
from stencils.storage import from_numpy, to_numpy, zeros

INTERFACE_DIMS = (X_DIM, Y_DIM, Z_INTERFACE_DIM)
#: the 3-D state a rank's dynamics reads and writes, with its staggering
PROGNOSTICS = {"delp": CELL_DIMS, "pt": CELL_DIMS, "u": face_dims(Y), "v": face_dims(X)}
#: FV3's pressure arrays the dynamics leaves for the remapping (interfaces, and pkz on layers)
PRESSURES = {"pe": INTERFACE_DIMS, "peln": INTERFACE_DIMS, "pk": INTERFACE_DIMS,
             "pkz": CELL_DIMS}  # fmt: skip
#: FV3's flux capacitor: the mass fluxes and Courant numbers summed over the acoustic steps,
#: each on the faces crossed along its direction
CAPACITOR = {"mfx": X, "mfy": Y, "cx": X, "cy": Y}


class AcousticRank:
    """What FV3's hydrostatic and non-hydrostatic ``dyn_core`` share on one rank: the storages
    (FV3's names and shapes, 3-point halo, ``npz`` layers), ``c_sw`` on all layers, ``d_sw``
    per group of layers with equal damping and the flux capacitor; the pressure steps are the
    subclasses'.

    ``state``: the rank's arrays with FV3's shapes and halo, ``npz`` layers top down: ``delp``
    (Pa), ``pt`` (FV3's potential temperature inside the dynamics: temperature over ``pkz``,
    K Pa**-kappa), ``u``, ``v`` (D grid, m/s), non-hydrostatic also ``w`` (m/s) and ``delz``
    (m, < 0); ``phis`` (2-D, m^2/s^2).  ``dt``: the acoustic time step (s)."""

    #: the 3-D state a rank's dynamics reads and writes
    prognostics: dict[str, tuple[str, ...]] = PROGNOSTICS

    def __init__(self, factory: StencilFactory, metric: MetricTerms,
                 state: Mapping[str, np.ndarray], options: DynCoreOptions, dt: float, *,
                 hydrostatic: bool = True) -> None:  # fmt: skip
        spec = metric.spec
        self.spec, self.metric, self.options = spec, metric, options
        npz = self.npz = int(np.asarray(state["delp"]).shape[2])
        indexing = GridIndexing(spec.nx, spec.ny, npz, spec.n_halo)
        self.indexing = indexing
        grid_factory = factory.on_grid(indexing)
        backend = factory.backend
        grid = self.grid = GridStorages(metric, backend)
        self.alloc = alloc = self._allocator(indexing, backend)
        for name, dims in self.prognostics.items():
            if name not in state:
                raise FV3ConfigError(f"the rank's state has no {name!r}")
            a = np.asarray(state[name], dtype=np.float64)
            expected = indexing.domain_of(dims).shape
            if a.shape != expected:
                raise FV3ConfigError(f"state[{name!r}] has shape {a.shape}; the rank's {name} "
                                     f"is {expected} (FV3's shape with the halo)")  # fmt: skip
            setattr(self, name, from_numpy(a.copy(), backend))
        self.phis = from_numpy(np.ascontiguousarray(state["phis"], dtype=np.float64), backend)
        for name, dims in PRESSURES.items():
            setattr(self, name, alloc(dims))
        for name, d in CAPACITOR.items():
            setattr(self, name, alloc(face_dims(d)))
        self.uc, self.vt = alloc(face_dims(X)), alloc(face_dims(Y))
        self.vc, self.ut = alloc(face_dims(Y)), alloc(face_dims(X))
        self.ua, self.va = alloc(CELL_DIMS), alloc(CELL_DIMS)
        self.delpc, self.ptc = alloc(CELL_DIMS), alloc(CELL_DIMS)
        self.divg_d = alloc(CORNER_DIMS)
        self.pkc, self.gz = alloc(INTERFACE_DIMS), alloc(INTERFACE_DIMS)
        if not hydrostatic:
            #: FV3's omga: c_sw's ``wc``, the C grid's w at the half step
            self.omga = alloc(CELL_DIMS)
            #: d_sw's heating by the damping of w (read only with FV3's d_con > 0)
            self.heat_source, self.diss_est = alloc(CELL_DIMS), alloc(CELL_DIMS)
            #: d_sw's crx, cry, xfx, yfx of all layers, for update_dz_d
            self.courant = (alloc(face_dims(X)), alloc(face_dims(Y)), alloc(face_dims(X)),
                            alloc(face_dims(Y)))  # fmt: skip
        o = options
        c_sw = CGridShallowWaterDynamics(grid_factory, grid, spec, o.nord, 0.5 * dt,
                                         sw_dynamics=False, hydrostatic=hydrostatic)  # fmt: skip
        w_terms = {} if hydrostatic else {"w": self.w, "wc": self.omga}
        self.c_grid: list[Launch] = c_sw.bind(
            self.delp, self.pt, self.u, self.v, self.uc, self.vc, self.ua, self.va, self.ut,
            self.vt, self.delpc, self.ptc, self.divg_d if o.nord > 0 else None, **w_terms)  # fmt: skip
        #: d_sw per group of layers with equal damping, on views of the layers
        self.d_grid: list[Launch] = []
        self.layer_groups = layer_damping(o, npz, nonhydrostatic=not hydrostatic)
        # FV3 empties cx on is:ie+1, jsd:jed and cy on isd:ied, js:je+1 (mfx, mfy: the compute
        # faces, inside those ranges)
        zero = {d: grid_factory.from_dims(set_value, face_dims(d), d.halo_across(spec.n_halo),
                                          name=f"zero_capacitor_{d.name}") for d in DIRECTIONS}  # fmt: skip
        #: the start of each dyn_core call: the flux capacitor emptied
        self.start: list[Launch] = [zero[d].bind(q=getattr(self, name), value=0.0)
                                    for name, d in CAPACITOR.items()]  # fmt: skip
        for group in self.layer_groups:
            k = slice(group.start, group.stop)
            layers = GridIndexing(spec.nx, spec.ny, group.stop - group.start, spec.n_halo)
            layer_factory = factory.on_grid(layers)
            damping = DivergenceDamping(layer_factory, grid, spec, group.nord, o.dddmp,
                                           group.d2_bg, o.d4_bg, dt)  # fmt: skip

            def view(a: Any, k: slice = k) -> Any:
                return a[:, :, k]

            vertical_wind = None if hydrostatic else DGridVerticalWind(
                layer_factory, grid, spec, dt, o.hord_vt, nord_w=0, damp_w=group.damp_w)  # fmt: skip
            courant = None if hydrostatic else tuple(view(a) for a in self.courant)
            d_sw = DGridShallowWaterLagrangianDynamics(layer_factory, grid, spec, dt, o.hord_dp, o.hord_mt,
                                        o.hord_vt, damping, sw_dynamics=False,
                                        hord_tm=o.hord_tm, vertical_wind=vertical_wind,
                                        courant=courant)  # fmt: skip
            vertical = None if hydrostatic else tuple(view(a) for a in (self.w, self.heat_source,
                                                                         self.diss_est))  # fmt: skip
            self.d_grid += d_sw.bind(
                view(self.delp), view(self.u), view(self.v), view(self.uc), view(self.vc),
                view(self.ua), view(self.va), view(self.divg_d), pt=view(self.pt),
                accumulators=tuple(view(getattr(self, n)) for n in CAPACITOR),
                vertical=vertical)  # fmt: skip

    @staticmethod
    def _allocator(indexing: GridIndexing, backend: str) -> Any:
        def alloc(dims: tuple[str, ...]) -> Any:
            return zeros(indexing.domain_of(dims), backend)

        return alloc

    def arrays(self) -> dict[str, np.ndarray]:
        """The prognostic fields and FV3's pressure arrays as NumPy copies (FV3's shapes with
        the halo)."""
        return {name: to_numpy(getattr(self, name)) for name in (*self.prognostics, *PRESSURES)}


class HydrostaticRank(AcousticRank):
    """One rank's storages and the bound launches of its part of FV3's hydrostatic
    ``dyn_core`` (:class:`AcousticRank`, with ``geopk``, ``p_grad_c`` and ``one_grad_p``); the
    halo updates between them are :class:`HydrostaticDynCore`'s.  ``akap``, ``cp_air``,
    ``ptop``: FV3's kappa, heat capacity (J/kg/K), model-top pressure (Pa)."""

    def __init__(self, factory: StencilFactory, metric: MetricTerms,
                 state: Mapping[str, np.ndarray], options: DynCoreOptions, dt: float, *,
                 akap: float, cp_air: float, ptop: float) -> None:  # fmt: skip
        super().__init__(factory, metric, state, options, dt)
        grid_factory, grid, spec, o, alloc = (factory.on_grid(self.indexing), self.grid,
                                              self.spec, options, self.alloc)  # fmt: skip
        thermo = {"akap": akap, "ptop": ptop, "cp": cp_air}
        geopk_c = Geopotential(grid_factory, cgrid=True, **thermo)
        self.c_grid_pressure: list[Launch] = [
            *geopk_c.bind(self.delpc, self.ptc, self.phis, self.pkc, self.gz),
            *CGridPressureGradient(grid_factory, grid, 0.5 * dt).bind(self.uc, self.vc, self.pkc,
                                                                      self.gz),
        ]  # fmt: skip
        geopk_d = Geopotential(grid_factory, cgrid=False, **thermo)
        pgrad_d = DGridPressureGradient(grid_factory, grid, spec, dt, ptk=ptop**akap, beta=o.beta)
        increments = (alloc(face_dims(Y)), alloc(face_dims(X))) if o.beta > 0 else None
        #: the first dyn_core call of a large step (beta > 0: du, dv := 0)
        self.init_step = pgrad_d.bind_reset(increments) if increments else []
        geopk = geopk_d.bind(self.delp, self.pt, self.phis, self.pkc, self.gz,
                             (self.pe, self.peln, self.pkz))  # fmt: skip
        copy_pk = grid_factory.from_dims(copy_field, INTERFACE_DIMS, name="remap_step_pk").bind(
            q=self.pkc, out=self.pk)  # fmt: skip

        def pressure_gradient(first: bool) -> list[Launch]:
            return pgrad_d.bind(self.u, self.v, self.pkc, self.gz, increments, first=first)

        #: the D-grid pressure step: (first acoustic step?, last acoustic step?) -> launches
        self.d_grid_pressure: dict[tuple[bool, bool], list[Launch]] = {
            (first, last): [*geopk, *([copy_pk] if last else []),
                            *pressure_gradient(first and increments is not None)]
            for first in (False, True) for last in (False, True)
        }  # fmt: skip


class AcousticDynCore:
    """What both 3-D ``dyn_core`` calls share on the ranks of this process (:attr:`ranks`,
    :attr:`halos`): their start and the halo-update time."""

    ranks: Mapping[int, AcousticRank]
    halos: AcousticHalos

    @property
    def halo_seconds(self) -> float:
        """Seconds spent in halo updates (all steps)."""
        return self.halos.seconds

    def begin(self, init_step: bool) -> None:
        """The start of a ``dyn_core`` call: the large step's first (``init_step``, FV3's
        ``n_map == 1``) resets ``beta``'s increments; the flux capacitor emptied; the halo
        updates of ``delp``, ``pt`` and the D-grid winds that ``fv_dynamics`` starts."""
        if init_step:
            run_phase(self.ranks, lambda d: d.init_step)
        run_phase(self.ranks, lambda d: d.start)
        self.halos.exchange(self.halos.scalars)
        self.halos.exchange(self.halos.d_winds)


class HydrostaticDynCore(AcousticDynCore):
    """FV3's hydrostatic ``dyn_core`` on the ranks of this process: :meth:`step` is one call,
    ``n_split`` acoustic steps of ``mdt / n_split``."""

    def __init__(self, factory: StencilFactory, metrics: dict[int, MetricTerms],
                 states: Mapping[int, Mapping[str, np.ndarray]], options: DynCoreOptions,
                 mdt: float, communicator: Communicator, *, akap: float, cp_air: float,
                 ptop: float) -> None:  # fmt: skip
        self.options, self.mdt = options, mdt
        self.acoustic_dt = mdt / options.n_split
        self.ranks = {r: HydrostaticRank(factory, m, states[r], options, self.acoustic_dt,
                                            akap=akap, cp_air=cp_air, ptop=ptop)
                      for r, m in sorted(metrics.items())}  # fmt: skip
        h = next(iter(metrics.values())).spec.n_halo
        self.halos = AcousticHalos(communicator, self.ranks, h, options.nord,
                                   lambda d: [d.delp, d.pt])  # fmt: skip

    def step(self, init_step: bool) -> None:
        """One ``dyn_core`` call; ``init_step``: the large step's first (FV3's ``n_map == 1``)."""
        halos, ranks = self.halos, self.ranks
        self.begin(init_step)
        n = self.options.n_split
        for it in range(1, n + 1):
            run_phase(ranks, lambda d: d.c_grid)
            halos.exchange(halos.divergence)
            run_phase(ranks, lambda d: d.c_grid_pressure)
            halos.exchange(halos.c_winds)
            run_phase(ranks, lambda d: d.d_grid)
            halos.exchange(halos.scalars)
            run_phase(ranks, lambda d, key=(it == 1, it == n): d.d_grid_pressure[key])
            halos.exchange(halos.boundary if it == n else halos.d_winds)

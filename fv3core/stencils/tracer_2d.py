"""FV3's large-time-step tracer transport in GTScript: ``tracer_2d_1L`` (``fv_tracer2d.F90``;
with ``z_tracer`` false its ``tracer_2d``), which ``fv_dynamics`` calls after ``dyn_core`` with the
mass fluxes and Courant numbers that ``d_sw`` accumulated over the acoustic steps ("the flux
capacitor").

* :class:`TracerAdvection`: one rank's ``tracer_2d_1L``, as bound launches
  (:class:`BoundTracerTransport`) for each phase between FV3's communication: the swept areas
  and the rank's per-layer maximum Courant number, the scaling of the fluxes by the number of
  subcycles, and one subcycle (``fv_tp_2d`` of each tracer with the mass fluxes, the tracer
  update, ``dp1 := dp2``).
* :class:`MultiRankTracerAdvection`: all ranks of this process, with FV3's
  ``mp_reduce_max`` of the Courant numbers (:meth:`mapping.cluster.Communicator.allreduce`)
  and its halo updates of the tracers (before the first subcycle and between subcycles).

Per layer k, as FV3 (units: ``mfx``, ``mfy`` Pa m^2 accumulated over the large step, ``cx``,
``cy`` dimensionless, ``dp1`` Pa, tracers any unit per unit mass):

1. swept areas ``xfx = cx * dxa(upwind) * dy * sin_sg(upwind, 3 | 1)`` on the x-faces of
   ``is:ie+1, jsd:jed`` (y: ``cy * dya(upwind) * dx * sin_sg(upwind, 4 | 2)``, ``isd:ied,
   js:je+1``);
2. ``cmax(k)`` = the maximum over the compute cells of ``max(|cx(i,j)|, |cy(i,j)|)`` (layers
   ``k < npz/6``, 1-based, integer division) or ``max(|cx|, |cy|) + 1 - sin_sg(i,j,5)`` (the
   others), then its maximum over all ranks; ``nsplt(k) = int(1 + cmax(k))``;
3. ``nsplt(k) > 1``: ``cx``, ``xfx``, ``mfx``, ``cy``, ``yfx``, ``mfy`` times ``frac = 1 /
   nsplt(k)`` (in place: FV3's arguments are ``intent(inout)``);
4. ``nsplt(k)`` subcycles: ``dp2 = dp1 + (mfx(i) - mfx(i+1) + mfy(j) - mfy(j+1)) * rarea``;
   per tracer ``fv_tp_2d(qn2, cx, cy, hord_tr, fx, fy, xfx, yfx, ra_x, ra_y, mfx=mfx,
   mfy=mfy)`` (:class:`~fv3core.stencils.fv_tp_2d.FiniteVolumeTransport`, whose inner update
   is FV3's ``ra_x = area + xfx(i) - xfx(i+1)``) and ``qn2 = (qn2 * dp1 + (fx(i) - fx(i+1) +
   fy(j) - fy(j+1)) * rarea) / dp2`` (into q at the last subcycle); between subcycles
   ``dp1 := dp2`` and the halo update of ``qn2``.  ``qn2`` starts as a copy of q, halos
   included.

FV3 runs the subcycles layer by layer; the layers are independent (each reads only its own
level), so here every subcycle runs on all levels at once, a level taking part while ``it <=
nsplt(k)`` (the K field ``stage``): every level's arithmetic is FV3's, bit for bit.  Two
differences outside the results: FV3 transports in q itself (``tracer_2d_1L``: a layer with
``nsplt = 1``; ``tracer_2d``: always), so ``fv_tp_2d``'s ``copy_corners`` writes q's cube-corner
halo cells and ``tracer_2d`` updates q's halos between subcycles; here it is always the copy
``qn2``, and q's halo is left as the halo update at the start made it.  And ``qn2``'s halo update
runs for every level between subcycles (FV3: the levels still subcycling).

Namelist keys (``fv_core_nml``): ``hord_tr`` (the PPM variant of ``fv_tp_2d`` for tracers;
5, 6, 8, 10), ``z_tracer`` (true: ``fv_dynamics`` calls ``tracer_2d_1L``; false, FV3's default:
``tracer_2d``, whose ``nsplt = int(1 + max_k cmax(k))`` subcycles over all levels with level k
in the first ``ksplt(k) = int(1 + cmax(k))`` of them give the same tracers, bit for bit, and
differ only in ``dp1``, which ``tracer_2d`` renews after every subcycle but the last of all
levels), ``q_split`` (``tracer_2d`` only: 0, subcycles from the Courant number; FV3's ``q_split >
0`` leaves ``ksplt`` unset and is refused; ``tracer_2d_1L`` ignores it).  Not implemented: the
tracer damping ``nord_tr``/``trdm2`` (``tracer_2d``'s ``deln_flux`` with ``mass`` in the first
subcycle, off by default), the ``id_divg_mean`` diagnostic, ``lim_fac`` (FV3's default 1).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import PARALLEL, computation, interval

from fv3core.errors import FV3ConfigError
from fv3core.grid.storages import GridStorages
from fv3core.grid.subdomain import SubdomainSpec
from fv3core.scheme_limits import SUPPORTED_HORD
from fv3core.stencils.fv_tp_2d import FiniteVolumeTransport
from mapping.cluster import Communicator, ExchangeGroup, ScalarHalo
from stencils.dims import CELL_DIMS, GridIndexing, face_dims
from stencils.directions import DIRECTIONS, Direction, X, Y
from stencils.factory import GridStencilFactory, StencilFactory
from stencils.launch import Launch
from stencils.storage import from_numpy, to_numpy, zeros

FloatField = gtscript.Field[np.float64]
FloatFieldIJ = gtscript.Field[gtscript.IJ, np.float64]
FloatFieldK = gtscript.Field[gtscript.K, np.float64]

#: the per-level ``stage`` of a subcycle: the level is done, in an intermediate subcycle, in its last
DONE, INTERMEDIATE, LAST = 0.0, 1.0, 2.0


def tracer_area_flux(
    courant: FloatField,
    cell_length: FloatFieldIJ,
    face_length: FloatFieldIJ,
    sin_near: FloatFieldIJ,
    sin_far: FloatFieldIJ,
    area_flux: FloatField,
):
    """``tracer_2d_1L``'s swept areas along ``DI``/``DJ``: the Courant number times the upwind
    cell's A-grid length (``dxa``/``dya``), the face length (``dy``/``dx``) and the upwind
    cell's grid-angle sine at the face (``sin_sg`` 3 | 1, y: 4 | 2), multiplied in FV3's order."""
    from __externals__ import DI, DJ

    with computation(PARALLEL), interval(...):
        if courant > 0.0:
            area_flux = courant * cell_length[-DI, -DJ] * face_length * sin_far[-DI, -DJ]
        else:
            area_flux = courant * cell_length * face_length * sin_near  # noqa: F841


def scale(a: FloatField, frac: FloatFieldK):
    """``a := a * frac(k)`` (``frac`` = 1 / nsplt(k); 1 leaves ``a`` bitwise unchanged)."""
    with computation(PARALLEL), interval(...):
        a = a * frac


def copy(q: FloatField, qn2: FloatField):
    """``qn2 := q`` (FV3's ``qn2(i,j,iq) = q(i,j,k,iq)`` over ``isd:ied, jsd:jed``)."""
    with computation(PARALLEL), interval(...):
        qn2 = q  # noqa: F841


@gtscript.function
def pressure_thickness(dp1, mfx, mfy, rarea):
    """FV3's ``dp2``: ``dp1`` plus the mass-flux divergence."""
    return dp1 + (mfx - mfx[1, 0, 0] + mfy - mfy[0, 1, 0]) * rarea


def tracer_update(
    q: FloatField,
    qn2: FloatField,
    dp1: FloatField,
    mfx: FloatField,
    mfy: FloatField,
    fx: FloatField,
    fy: FloatField,
    rarea: FloatFieldIJ,
    stage: FloatFieldK,
):
    """One subcycle's update of a tracer on the levels still subcycling: ``(qn2 * dp1 + flux
    divergence * rarea) / dp2`` into ``qn2`` (``stage`` :data:`INTERMEDIATE`) or q (``LAST``)."""
    with computation(PARALLEL), interval(...):
        if stage > DONE:
            dp2 = pressure_thickness(dp1, mfx, mfy, rarea)
            q_new = (qn2 * dp1 + (fx - fx[1, 0, 0] + fy - fy[0, 1, 0]) * rarea) / dp2
            if stage == INTERMEDIATE:
                qn2 = q_new
            else:
                q = q_new  # noqa: F841


def thickness_update(dp1: FloatField, mfx: FloatField, mfy: FloatField, rarea: FloatFieldIJ,
                     renew: FloatFieldK):  # fmt: skip
    """``dp1 := dp2`` on the levels where ``renew`` is 1 (``tracer_2d_1L``: those with another
    subcycle to come; ``tracer_2d``: every level taking part, unless it is the last subcycle)."""
    with computation(PARALLEL), interval(...):
        if renew > 0.0:
            dp1 = pressure_thickness(dp1, mfx, mfy, rarea)


def courant_cutoff(npz: int) -> int:
    """The number of (0-based) levels whose ``cmax`` omits the grid-angle term: FV3's ``k <
    npz/6`` (1-based k, integer division)."""
    return max(0, npz // 6 - 1)


def layer_courant_max(cx: np.ndarray, cy: np.ndarray, sin_sg5: np.ndarray) -> np.ndarray:
    """FV3's ``cmax(k)`` of one rank (before ``mp_reduce_max``): ``cx``, ``cy`` the Courant numbers
    at the west and south faces of the compute cells, (nx, ny, npz), ``sin_sg5`` (nx, ny)."""
    npz = cx.shape[2]
    c = np.maximum(np.abs(cx), np.abs(cy))
    cut = courant_cutoff(npz)
    c[:, :, cut:] = c[:, :, cut:] + 1.0 - sin_sg5[:, :, None]
    return np.maximum(0.0, c.max(axis=(0, 1), initial=0.0))


def subcycles(cmax: np.ndarray) -> np.ndarray:
    """FV3's ``nsplt = int(1. + cmax(k))`` per level."""
    return np.array([int(1.0 + float(c)) for c in cmax], dtype=int)


def _set(storage: Any, values: np.ndarray) -> None:
    """Write ``values`` into a storage in place (NumPy/CPU storages and cupy arrays)."""
    if isinstance(storage, np.ndarray):
        storage[...] = values
    else:
        storage.set(np.ascontiguousarray(values, dtype=storage.dtype))


@dataclass(frozen=True)
class TracerFields:
    """One rank's arguments of ``tracer_2d_1L`` (3-D storages with the 3-point halo):

    * ``q``: the tracers (cells; in/out: the compute domain transported, halos as updated);
    * ``dp1``: ``delp`` at the start of the large step (cells, Pa; in/out: ``tracer_2d_1L``
      leaves each level's ``dp2`` of its second-to-last subcycle, or dp1 itself with one
      subcycle; ``tracer_2d`` the ``dp2`` of its last subcycle in the levels with fewer
      subcycles than the deepest);
    * ``mfx``, ``mfy``: accumulated mass fluxes (x- / y-faces, Pa m^2, read on the compute
      faces; scaled in place by ``1 / nsplt``);
    * ``cx``, ``cy``: accumulated Courant numbers (x-faces ``is:ie+1, jsd:jed`` / y-faces
      ``isd:ied, js:je+1``; scaled in place).
    """

    q: Sequence[Any]
    dp1: Any
    mfx: Any
    mfy: Any
    cx: Any
    cy: Any


class TracerAdvection:
    """Equivalent of FV3 subroutine ``tracer_2d_1L`` (``fv_tracer2d.F90``) on one rank: builds the
    stencils and the work storages once; :meth:`bind` gives the phases as bound launches."""

    def __init__(self, factory: GridStencilFactory, grid: GridStorages, spec: SubdomainSpec,
                 hord_tr: int, nq: int, *, z_tracer: bool = True) -> None:  # fmt: skip
        """``hord_tr``: FV3's namelist key (5, 6, 8, 10); ``nq``: the number of tracers;
        ``z_tracer``: FV3's namelist key, true: ``tracer_2d_1L``; false: ``tracer_2d`` with
        ``q_split = 0`` (the same tracers; ``dp1`` as ``tracer_2d`` leaves it)."""
        if hord_tr not in SUPPORTED_HORD:
            raise FV3ConfigError(
                f"hord_tr={hord_tr} is not implemented: use one of {SUPPORTED_HORD}")
        if nq < 1:
            raise FV3ConfigError(f"tracer_2d_1L with nq={nq}: pass at least one tracer")
        h = spec.n_halo
        self.spec, self.grid, self.nq, self.hord_tr = spec, grid, nq, hord_tr
        self.z_tracer = z_tracer
        self.nz = factory.indexing.nz
        backend = factory.backend
        self._transport = FiniteVolumeTransport(factory, grid, spec, hord_tr)
        self._area_flux = {
            d: factory.from_dims(tracer_area_flux, face_dims(d), d.halo_across(h),
                                 externals=d.offsets(), name=f"tracer_area_flux_{d.name}")
            for d in DIRECTIONS
        }  # fmt: skip
        self._scale_halo = {d: factory.from_dims(scale, face_dims(d), d.halo_across(h),
                                                 name="tracer_scale") for d in DIRECTIONS}  # fmt: skip
        self._scale = {d: factory.from_dims(scale, face_dims(d), name="tracer_scale")
                       for d in DIRECTIONS}  # fmt: skip
        self._copy = factory.from_dims(copy, CELL_DIMS, h, name="tracer_copy")
        self._update = factory.from_dims(tracer_update, CELL_DIMS, name="tracer_update")
        self._thickness = factory.from_dims(thickness_update, CELL_DIMS, name="tracer_dp1")
        indexing = factory.indexing

        def alloc(dims: tuple[str, ...]) -> Any:
            return zeros(indexing.domain_of(dims), backend)

        #: swept areas (x- / y-faces, m^2), FV3's local ``xfx``, ``yfx``
        self.xfx, self.yfx = alloc(face_dims(X)), alloc(face_dims(Y))
        #: the tracers' work copies (FV3's ``qn2``)
        self.qn2 = [alloc(CELL_DIMS) for _ in range(nq)]
        self._fx, self._fy = alloc(face_dims(X)), alloc(face_dims(Y))
        self._frac = from_numpy(np.ones(self.nz), backend)
        self._stage = from_numpy(np.zeros(self.nz), backend)
        self._renew = from_numpy(np.zeros(self.nz), backend)
        self._sin_sg5 = to_numpy(grid.sin_sg5)[h : h + spec.nx, h : h + spec.ny]

    def _geometry(self, d: Direction) -> dict[str, Any]:
        g = self.grid
        if d is X:
            return {"cell_length": g.dxa, "face_length": g.dy, "sin_near": g.sin_sg1,
                    "sin_far": g.sin_sg3}  # fmt: skip
        return {"cell_length": g.dya, "face_length": g.dx, "sin_near": g.sin_sg2,
                "sin_far": g.sin_sg4}  # fmt: skip

    def bind(self, fields: TracerFields) -> BoundTracerTransport:
        """The phases of ``tracer_2d_1L`` on these storages (see :class:`TracerFields`)."""
        if len(fields.q) != self.nq:
            raise FV3ConfigError(
                f"tracer_2d_1L built for nq={self.nq} tracers was passed {len(fields.q)}")
        f, g = fields, self.grid
        courant = {X: f.cx, Y: f.cy}
        area_flux = {X: self.xfx, Y: self.yfx}
        mass_flux = {X: f.mfx, Y: f.mfy}
        prepare = [self._area_flux[d].bind(courant=courant[d], **self._geometry(d),
                                           area_flux=area_flux[d]) for d in DIRECTIONS]  # fmt: skip
        split = [s for d in DIRECTIONS for s in (
            self._scale_halo[d].bind(a=courant[d], frac=self._frac),
            self._scale_halo[d].bind(a=area_flux[d], frac=self._frac),
            self._scale[d].bind(a=mass_flux[d], frac=self._frac))]  # fmt: skip
        first = [self._copy.bind(q=q, qn2=qn2) for q, qn2 in zip(f.q, self.qn2)]
        subcycle: list[Launch] = []
        for q, qn2 in zip(f.q, self.qn2):
            subcycle.append(self._transport.bind(qn2, f.cx, f.cy, self.xfx, self.yfx, self._fx,
                                                 self._fy, mass_fluxes=(f.mfx, f.mfy)))  # fmt: skip
            subcycle.append(self._update.bind(q=q, qn2=qn2, dp1=f.dp1, mfx=f.mfx, mfy=f.mfy,
                                              fx=self._fx, fy=self._fy, rarea=g.rarea,
                                              stage=self._stage))  # fmt: skip
        subcycle.append(self._thickness.bind(dp1=f.dp1, mfx=f.mfx, mfy=f.mfy, rarea=g.rarea,
                                             renew=self._renew))  # fmt: skip
        return BoundTracerTransport(self, fields, prepare, split, first, subcycle)


class BoundTracerTransport:
    """One rank's ``tracer_2d_1L`` on bound storages, phase by phase (a driver over ranks runs
    them in this order, with the communication between):

    1. :attr:`prepare` (launches: the swept areas), then :meth:`courant_max` (this rank's
       ``cmax(k)``, (nz,) array);
    2. (the maximum over ranks) :meth:`split` with it: ``frac`` and :attr:`split_launches`
       (the scaling), returns ``nsplt(k)``;
    3. (the halo update of q) :attr:`first` (``qn2 := q``);
    4. for ``it = 1 .. max nsplt``: :meth:`set_subcycle` (it), :attr:`subcycle` (launches), and
       between subcycles the halo update of :attr:`work` (``qn2``).
    """

    def __init__(self, owner: TracerAdvection, fields: TracerFields, prepare: list[Launch],
                 split: list[Launch], first: list[Launch], subcycle: list[Launch]) -> None:  # fmt: skip
        self._owner, self.fields = owner, fields
        self.prepare, self.split_launches, self.first, self.subcycle = prepare, split, first, subcycle
        self.nsplt = np.ones(owner.nz, dtype=int)

    @property
    def work(self) -> list[Any]:
        """The tracers' work copies (``qn2``), halo-updated between subcycles."""
        return list(self._owner.qn2)

    def courant_max(self) -> np.ndarray:
        """FV3's ``cmax(k)`` of this rank (after :attr:`prepare`; it reads only ``cx``, ``cy``)."""
        s = self._owner.spec
        h, nx, ny = s.n_halo, s.nx, s.ny
        cx = to_numpy(self.fields.cx)[h : h + nx, h : h + ny, :]
        cy = to_numpy(self.fields.cy)[h : h + nx, h : h + ny, :]
        return layer_courant_max(cx, cy, self._owner._sin_sg5)

    def split(self, cmax: np.ndarray) -> np.ndarray:
        """``nsplt(k) = int(1 + cmax(k))`` from the maximum over all ranks; scales the fluxes and
        Courant numbers by ``1 / nsplt(k)``; returns ``nsplt``."""
        self.nsplt = subcycles(cmax)
        _set(self._owner._frac, np.array([1.0 / float(n) if n > 1 else 1.0 for n in self.nsplt]))
        for launch in self.split_launches:
            launch()
        return self.nsplt

    def set_subcycle(self, it: int) -> None:
        """Subcycle ``it`` (1-based) next: each level's ``stage`` and whether its ``dp1`` is
        renewed (``z_tracer`` false: FV3's ``tracer_2d`` renews it after every subcycle but the
        last of all levels)."""
        n = self.nsplt
        _set(self._owner._stage, np.where(it < n, INTERMEDIATE, np.where(it == n, LAST, DONE)))
        renew = (it < n) if self._owner.z_tracer else (it <= n) & (it != n.max())
        _set(self._owner._renew, renew.astype(np.float64))


class MultiRankTracerAdvection:
    """FV3's ``tracer_2d_1L`` on every rank of this process: the per-rank phases of
    :class:`BoundTracerTransport` with ``mp_reduce_max`` (``communicator.allreduce``) and the
    halo updates (``mpp_update_domains``) between them.  ``__call__`` runs one large step's
    transport and returns ``nsplt(k)``."""

    def __init__(self, factory: StencilFactory, grids: Mapping[int, GridStorages],
                 fields: Mapping[int, TracerFields], communicator: Communicator, hord_tr: int,
                 *, z_tracer: bool = True, q_split: int = 0,
                 update_q_halo: bool = True) -> None:  # fmt: skip
        """``grids``, ``fields``: per rank of ``communicator``; ``hord_tr``, ``z_tracer``,
        ``q_split``: FV3's namelist keys (``z_tracer`` false, FV3's ``tracer_2d``, needs
        ``q_split = 0``); ``update_q_halo``: update the tracers' halos first (FV3's
        ``complete_group_halo_update(q_pack)``; false when the caller's q halos are valid)."""
        if not z_tracer and q_split != 0:
            raise FV3ConfigError(
                f"z_tracer = .false. with q_split={q_split}: FV3's tracer_2d then sets ksplt(k) "
                "from a cmax it never computes (unset unless built with GLOBAL_CFL); use "
                "q_split = 0 (subcycles from the Courant number) or z_tracer = .true.")
        self._communicator = communicator
        self.ranks: dict[int, BoundTracerTransport] = {}
        for r in sorted(grids):
            spec, f = grids[r].metric.spec, fields[r]
            nz = int(f.dp1.shape[2])
            gf = factory.on_grid(GridIndexing(spec.nx, spec.ny, nz, spec.n_halo))
            self.ranks[r] = TracerAdvection(gf, grids[r], spec, hord_tr, len(f.q),
                                               z_tracer=z_tracer).bind(f)
        h = next(iter(grids.values())).metric.spec.n_halo

        def updater(arrays: Mapping[int, Sequence[Any]]) -> ExchangeGroup:
            return communicator.halo_updater(
                {r: [ScalarHalo(a, h) for a in arrays[r]] for r in self.ranks}, packing="slicing")

        self._q_halo = (updater({r: fields[r].q for r in self.ranks}) if update_q_halo
                        else None)  # fmt: skip
        self._work_halo = updater({r: b.work for r, b in self.ranks.items()})

    def _run(self, launches: str) -> None:
        for bound in self.ranks.values():
            for launch in getattr(bound, launches):
                launch()

    def __call__(self) -> np.ndarray:
        self._run("prepare")
        cmax = self._communicator.allreduce(
            {r: b.courant_max() for r, b in self.ranks.items()}, "max")
        cmax = np.atleast_1d(np.asarray(cmax, dtype=np.float64))
        nsplt = np.ones(1, dtype=int)
        for b in self.ranks.values():
            nsplt = b.split(cmax)
        if self._q_halo is not None:
            self._q_halo.update()
        self._run("first")
        n_max = int(nsplt.max())
        for it in range(1, n_max + 1):
            for b in self.ranks.values():
                b.set_subcycle(it)
            self._run("subcycle")
            if it < n_max:
                self._work_halo.update()
        return nsplt

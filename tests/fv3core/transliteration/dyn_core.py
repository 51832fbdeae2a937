"""FV3 ``dyn_core.F90`` (and the part of ``fv_dynamics.F90`` around it) for the shallow-water
configuration: the ``n_split`` acoustic loop of one large time step with FV3's halo updates,
``geopk`` (``SW_DYNAMICS``: ``akap = 1``, ``ptop = 0``, ``pt = 1``), ``p_grad_c`` and
``one_grad_p`` (hydrostatic, no external-mode damping) or, with ``beta > 0``, ``grad1_p_update``
(the off-centred pressure gradient), transliterated.

All ranks of the run are in this process; halo updates go through
:class:`mapping.cluster.Communicator` halo updaters, which reproduce FMS's
``mpp_update_domains`` (scalars, C- and D-grid vectors, corner points) value for value; the
shared north/east boundary points are synchronised only where FV3 calls ``mpp_get_boundary``
(after the last acoustic step).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from mapping.cluster import Communicator, ScalarHalo, VectorHalo
from tests.fv3core.transliteration.a2b_edge import a2b_ord4
from tests.fv3core.transliteration.farray import FArray, R
from tests.fv3core.transliteration.grid import Grid
from tests.fv3core.transliteration.sw_core import c_sw, d_sw

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SWNamelist:
    """The ``fv_core_nml`` keys the shallow-water dynamics reads (FV3's names and meaning)."""

    n_split: int
    dt_atmos: float
    nord: int = 2
    d4_bg: float = 0.12
    d2_bg: float = 0.0
    dddmp: float = 0.0
    hord_mt: int = 8
    hord_vt: int = 8
    hord_dp: int = 8
    do_vort_damp: bool = False
    vtdm4: float = 0.0
    beta: float = 0.0

    @property
    def nord_v(self) -> int:
        """``dyn_core``'s order of the vorticity damping: ``min(2, nord)``."""
        return min(2, self.nord)

    @property
    def damp_v(self) -> float:
        """``dyn_core``'s ``damp_vt``: ``vtdm4`` with ``do_vort_damp``, else 0 (one layer: no
        sponge)."""
        return self.vtdm4 if self.do_vort_damp else 0.0


@dataclass
class TileFields:
    """One rank's prognostic and persistent work arrays, FV3 bounds (``delp`` = g * depth)."""

    delp: FArray
    pt: FArray
    phis: FArray
    u: FArray
    v: FArray
    uc: FArray
    vc: FArray
    ua: FArray
    va: FArray
    ut: FArray
    vt: FArray
    divgd: FArray
    pkc: list[FArray]
    gz: list[FArray]
    du: FArray
    dv: FArray

    @classmethod
    def allocate(cls, g: Grid) -> TileFields:
        b = g.bd

        def f(di: int = 0, dj: int = 0) -> FArray:
            return FArray.full((b.isd, b.jsd), (b.ied + di, b.jed + dj))

        pt = f()
        pt.data[...] = 1.0
        return cls(delp=f(), pt=pt, phis=f(), u=f(0, 1), v=f(1, 0), uc=f(1, 0), vc=f(0, 1),
                   ua=f(), va=f(), ut=f(), vt=f(), divgd=f(1, 1), pkc=[f(), f()],
                   gz=[f(), f()], du=f(0, 1), dv=f(1, 0))  # fmt: skip


def geopk(delp: FArray, phis: FArray, pt: FArray, pkc: list[FArray], gz: list[FArray],
          ir: R, jr: R) -> None:  # fmt: skip
    """FV3 ``geopk`` for one shallow-water layer (``SW_DYNAMICS``: ``akap = 1``, ``ptop = 0``,
    no ``cp_air``): :func:`geopk_hydrostatic` of one layer."""
    geopk_hydrostatic([delp], phis, [pt], pkc, gz, ir, jr, ptop=0.0, akap=1.0, cp=1.0)


def geopk_hydrostatic(delp: list[FArray], phis: FArray, pt: list[FArray], pkc: list[FArray],
                      gz: list[FArray], ir: R, jr: R, *, ptop: float, akap: float, cp: float,
                      pressure: tuple[list[FArray], list[FArray], list[FArray]] | None = None,
                      bd: Any = None) -> None:  # fmt: skip
    """FV3 ``geopk`` (hydrostatic, no ``q_con``) over FV3's range ``ir``, ``jr`` (``is-1..ie+1``
    on the C grid, ``is-2..ie+2`` on the D grid), layers and interfaces as lists top down:
    ``pk`` from ``p1d`` = ``ptop`` plus the layers above (``exp(akap log p1d)``), ``gz`` bottom
    up from ``phis`` by ``cp pt (pk(k+1) - pk(k))``.  ``pressure`` = ``(pe, peln, pkz)``: as the
    D-grid call writes them, ``pe`` on ``is-1..ie+1, js-1..je+1``, ``peln`` (``peln1 =
    log(ptop)`` on top) and ``pkz = (pk(k+1) - pk(k)) / (akap (peln(k+1) - peln(k)))`` on the
    compute cells (``bd``: the rank's bounds, FV3's ``bd``)."""
    km = len(delp)
    ptk = ptop**akap
    pkc[0][ir, jr] = ptk
    gz[km][ir, jr] = phis[ir, jr]
    p1d = np.full((ir.size, jr.size), ptop)
    logps = [None]
    for k in range(1, km + 1):
        p1d = p1d + delp[k - 1][ir, jr]
        logp = np.log(p1d)
        pkc[k][ir, jr] = np.exp(akap * logp)
        logps.append((p1d, logp))
    for k in range(km - 1, -1, -1):
        gz[k][ir, jr] = gz[k + 1][ir, jr] + cp * pt[k][ir, jr] * (pkc[k + 1][ir, jr] - pkc[k][ir, jr])
    if pressure is None:
        return
    if bd is None:
        raise ValueError("geopk_hydrostatic: pass the rank's bounds bd with pressure")
    pe, peln, pkz = pressure
    # FV3 stores pe on is-1..ie+1, js-1..je+1 and peln, pkz on the compute cells
    halo, compute = (R(bd.is_ - 1, bd.ie + 1), R(bd.js - 1, bd.je + 1)), (R(bd.is_, bd.ie), R(bd.js, bd.je))

    def local(r: R, lo: int) -> slice:
        return slice(r.lo - lo, r.hi - lo + 1)

    (hi, hj), (ci, cj) = halo, compute
    h_loc = (local(hi, ir.lo), local(hj, jr.lo))
    c_loc = (local(ci, ir.lo), local(cj, jr.lo))
    pe[0][hi, hj] = ptop
    peln[0][ci, cj] = np.log(ptop)
    for k in range(1, km + 1):
        p, logp = logps[k]
        pe[k][hi, hj] = p[h_loc]
        peln[k][ci, cj] = logp[c_loc]
    for k in range(km):
        pkz[k][ci, cj] = (pkc[k + 1][ci, cj] - pkc[k][ci, cj]) / (
            akap * (peln[k + 1][ci, cj] - peln[k][ci, cj]))


Layers = FArray | list[FArray]


def _as_layers(a: Layers) -> list[FArray]:
    """One layer's array, or the layers top down, as a list of layers."""
    return a if isinstance(a, list) else [a]


def p_grad_c(dt2: float, pkc: list[FArray], gz: list[FArray], uc: Layers, vc: Layers,
             g: Grid, delpc: list[FArray] | None = None) -> None:  # fmt: skip
    """FV3 ``p_grad_c``: the finite-volume pressure gradient on the C grid, layer ``k`` of
    ``uc``, ``vc`` (one array, or the layers top down) between the interfaces ``pkc[k]``/
    ``gz[k]`` (its top) and ``[k + 1]`` (its bottom); ``delpc`` given (non-hydrostatic): ``wk``
    is ``delpc`` of the layer."""
    b = g.bd
    for k, (uck, vck) in enumerate(zip(_as_layers(uc), _as_layers(vc))):
        pt_, pb, zt, zb = pkc[k], pkc[k + 1], gz[k], gz[k + 1]
        wk = FArray.full((b.is_ - 1, b.js - 1), (b.ie + 1, b.je + 1))
        I, J = R(b.is_ - 1, b.ie + 1), R(b.js - 1, b.je + 1)
        wk[I, J] = pb[I, J] - pt_[I, J] if delpc is None else delpc[k][I, J]
        I, J = R(b.is_, b.ie + 1), R(b.js, b.je)
        uck[I, J] = uck[I, J] + dt2 * g.rdxc[I, J] / (wk[I - 1, J] + wk[I, J]) * (
            (zb[I - 1, J] - zt[I, J]) * (pb[I, J] - pt_[I - 1, J])
            + (zt[I - 1, J] - zb[I, J]) * (pb[I - 1, J] - pt_[I, J])
        )
        I, J = R(b.is_, b.ie), R(b.js, b.je + 1)
        vck[I, J] = vck[I, J] + dt2 * g.rdyc[I, J] / (wk[I, J - 1] + wk[I, J]) * (
            (zb[I, J - 1] - zt[I, J]) * (pb[I, J] - pt_[I, J - 1])
            + (zt[I, J - 1] - zb[I, J]) * (pb[I, J - 1] - pt_[I, J])
        )


def _corner_pressure(pkc: list[FArray], gz: list[FArray], g: Grid, ptk: float) -> list[FArray]:
    """``pk`` at the top set to ``ptk``, ``pk`` (interfaces below the top) and ``gz`` (all) to
    the corners (``a2b_ord4``, in place, as FV3's ``replace``); returns ``wk`` per layer, its
    ``pk`` difference there."""
    b = g.bd
    Ic, Jc = R(b.is_, b.ie + 1), R(b.js, b.je + 1)
    pkc[0][Ic, Jc] = ptk
    for p in pkc[1:]:
        a2b_ord4(p, g, replace=True)
    for z in gz:
        a2b_ord4(z, g, replace=True)
    wks = []
    for k in range(len(pkc) - 1):
        wk = FArray.full((b.isd, b.jsd), (b.ied, b.jed))
        wk[Ic, Jc] = pkc[k + 1][Ic, Jc] - pkc[k][Ic, Jc]
        wks.append(wk)
    return wks


def one_grad_p(u: Layers, v: Layers, pkc: list[FArray], gz: list[FArray], dt: float,
               g: Grid, ptk: float = 0.0**1.0) -> None:  # fmt: skip
    """FV3 ``one_grad_p`` (hydrostatic, no external-mode damping): pk and gz to the corners,
    then the D-grid wind update by the finite-volume pressure gradient of each layer; ``u``,
    ``v`` (one layer, or the layers top down) enter as d_sw leaves them (times dx, dy).
    ``ptk``: FV3's ``ptop ** akap`` (shallow water: ``0 ** 1``)."""
    b = g.bd
    wks = _corner_pressure(pkc, gz, g, ptk)
    for k, (uk, vk) in enumerate(zip(_as_layers(u), _as_layers(v))):
        wk, pk, z = wks[k], pkc[k : k + 2], gz[k : k + 2]
        I, J = R(b.is_, b.ie), R(b.js, b.je + 1)
        uk[I, J] = g.rdx[I, J] * (0.0 + uk[I, J] + dt / (wk[I, J] + wk[I + 1, J]) * (
            (z[1][I, J] - z[0][I + 1, J]) * (pk[1][I + 1, J] - pk[0][I, J])
            + (z[0][I, J] - z[1][I + 1, J]) * (pk[1][I, J] - pk[0][I + 1, J])))
        I, J = R(b.is_, b.ie + 1), R(b.js, b.je)
        vk[I, J] = g.rdy[I, J] * (0.0 + vk[I, J] + dt / (wk[I, J] + wk[I, J + 1]) * (
            (z[1][I, J] - z[0][I, J + 1]) * (pk[1][I, J + 1] - pk[0][I, J])
            + (z[0][I, J] - z[1][I, J + 1]) * (pk[1][I, J] - pk[0][I, J + 1])))


def grad1_p_update(u: Layers, v: Layers, pkc: list[FArray], gz: list[FArray], du: Layers,
                   dv: Layers, dt: float, beta: float, g: Grid,
                   ptk: float = 0.0**1.0) -> None:  # fmt: skip
    """FV3 ``grad1_p_update`` (hydrostatic, ``divg2 = 0``: no external-mode damping): as
    :func:`one_grad_p`, but the wind takes ``beta`` times the previous acoustic step's
    pressure-gradient increment ``du``/``dv`` (kept in place) and ``1 - beta`` times this one's."""
    b = g.bd
    alpha = 1.0 - beta
    wks = _corner_pressure(pkc, gz, g, ptk)
    layers = zip(_as_layers(u), _as_layers(v), _as_layers(du), _as_layers(dv))
    for k, (uk, vk, duk, dvk) in enumerate(layers):
        wk, pk, z = wks[k], pkc[k : k + 2], gz[k : k + 2]
        I, J = R(b.is_, b.ie), R(b.js, b.je + 1)
        uk[I, J] = uk[I, J] + beta * duk[I, J]
        duk[I, J] = dt / (wk[I, J] + wk[I + 1, J]) * (
            (z[1][I, J] - z[0][I + 1, J]) * (pk[1][I + 1, J] - pk[0][I, J])
            + (z[0][I, J] - z[1][I + 1, J]) * (pk[1][I, J] - pk[0][I + 1, J]))
        uk[I, J] = (uk[I, J] + 0.0 - 0.0 + alpha * duk[I, J]) * g.rdx[I, J]
        I, J = R(b.is_, b.ie + 1), R(b.js, b.je)
        vk[I, J] = vk[I, J] + beta * dvk[I, J]
        dvk[I, J] = dt / (wk[I, J] + wk[I, J + 1]) * (
            (z[1][I, J] - z[0][I, J + 1]) * (pk[1][I, J + 1] - pk[0][I, J])
            + (z[0][I, J] - z[1][I, J + 1]) * (pk[1][I, J] - pk[0][I, J + 1]))
        vk[I, J] = (vk[I, J] + 0.0 - 0.0 + alpha * dvk[I, J]) * g.rdy[I, J]


class ShallowWaterCore:
    """FV3's shallow-water dynamics on every rank of ``communicator`` (all in this process):
    ``step()`` is one large time step ``dt_atmos`` of ``n_split`` acoustic steps."""

    def __init__(self, grids: dict[int, Grid], fields: dict[int, TileFields], nml: SWNamelist,
                 communicator: Communicator) -> None:  # fmt: skip
        self.grids, self.fields, self.nml = grids, fields, nml
        ranks = sorted(grids)
        h = grids[ranks[0]].bd.ng

        def updater(specs: Any) -> Any:
            return communicator.halo_updater({r: specs(fields[r]) for r in ranks}, packing="slicing")

        self._scalars = updater(lambda f: [ScalarHalo(f.delp.data, h)])
        self._dwinds = updater(lambda f: [VectorHalo(f.u.data, f.v.data, h, grid="D", sync_edges=False)])
        self._cwinds = updater(lambda f: [VectorHalo(f.uc.data, f.vc.data, h, grid="C", sync_edges=False)])
        self._divg = updater(lambda f: [ScalarHalo(f.divgd.data, h, location="corner", sync_edges=False)])
        self._boundary = updater(lambda f: [VectorHalo(f.u.data, f.v.data, h, grid="D", sync_edges=True)])

    def step(self) -> None:
        """One large time step: ``n_split`` acoustic steps."""
        self.start()
        for it in range(1, self.nml.n_split + 1):
            self.c_grid()
            self.d_grid(last=it == self.nml.n_split, first=it == 1)

    def start(self) -> None:
        """The start of ``dyn_core`` (``init_step``: the pressure-gradient increments ``du``,
        ``dv`` of ``beta > 0`` zeroed) and the halo updates before the acoustic loop: ``delp``,
        then the D-grid winds."""
        for f in self.fields.values():
            f.du.data[...] = 0.0
            f.dv.data[...] = 0.0
        self._scalars.update()
        self._dwinds.update()

    def c_grid(self) -> None:
        """c_sw, the ``divg_d`` corner update (nord > 0), geopk and p_grad_c on the C grid, and
        the C-grid wind update."""
        nml = self.nml
        dt2 = 0.5 * nml.dt_atmos / nml.n_split
        cgrid = {}
        for r, g in self.grids.items():
            f = self.fields[r]
            out = c_sw(f.delp, f.pt, f.u, f.v, nml.nord, dt2, g, f.uc, f.vc, f.ua, f.va, f.ut,
                       f.vt)  # fmt: skip
            cgrid[r] = out
            if out.divg_d is not None:
                f.divgd.data[...] = out.divg_d.data
        if nml.nord > 0:
            self._divg.update()
        for r, g in self.grids.items():
            f, b = self.fields[r], g.bd
            I, J = R(b.is_ - 1, b.ie + 1), R(b.js - 1, b.je + 1)
            geopk(cgrid[r].delpc, f.phis, cgrid[r].ptc, f.pkc, f.gz, I, J)
            p_grad_c(dt2, f.pkc, f.gz, f.uc, f.vc, g)
        self._cwinds.update()

    def d_grid(self, last: bool, first: bool = False) -> None:
        """d_sw, the ``delp`` update, geopk and one_grad_p (``beta > 0``: grad1_p_update, with
        ``beta_d = 0`` in the ``first`` acoustic step) on the D grid, and the D-grid wind update
        (``last``: the boundary synchronisation of FV3's mpp_get_boundary instead)."""
        nml = self.nml
        dt = nml.dt_atmos / nml.n_split
        for r, g in self.grids.items():
            f = self.fields[r]
            d_sw(f.delp, f.u, f.v, f.uc, f.vc, f.ua, f.va, f.divgd, dt, nml.hord_dp, nml.hord_mt,
                 nml.hord_vt, nml.nord, nml.dddmp, nml.d2_bg, nml.d4_bg, g, nord_v=nml.nord_v,
                 damp_v=nml.damp_v)  # fmt: skip
        self._scalars.update()
        for r, g in self.grids.items():
            f, b = self.fields[r], g.bd
            I, J = R(b.is_ - 2, b.ie + 2), R(b.js - 2, b.je + 2)
            geopk(f.delp, f.phis, f.pt, f.pkc, f.gz, I, J)
            if nml.beta > 0.0:
                grad1_p_update(f.u, f.v, f.pkc, f.gz, f.du, f.dv, dt, 0.0 if first else nml.beta,
                               g)  # fmt: skip
            else:
                one_grad_p(f.u, f.v, f.pkc, f.gz, dt, g)
        (self._boundary if last else self._dwinds).update()


def nh_p_grad(u: list[FArray], v: list[FArray], pp: list[FArray], gz: list[FArray], delp: list[FArray],
              pk: list[FArray], dt: float, g: Grid, top_value: float,
              split: tuple[list[FArray], list[FArray], float] | None = None) -> None:  # fmt: skip
    """FV3 ``nh_p_grad`` (no ``GAS_HYDRO_P``): ``pp``, ``pk`` (below the top), ``gz`` to the
    corners in place, ``delp`` to the corners (``wk1``), then the D-grid winds of each layer
    updated by the hydrostatic and non-hydrostatic gradients and divided by ``dx``, ``dy``.
    ``top_value``: ``ptk`` (``peln1`` with ``use_logp``). Layers and interfaces top down.
    ``split=(du, dv, beta)``: FV3 ``split_p_grad``, the hydrostatic increments off-centred."""
    b = g.bd
    Ic, Jc = R(b.is_, b.ie + 1), R(b.js, b.je + 1)
    for k in range(len(gz)):
        if k == 0:
            pp[0][Ic, Jc] = 0.0
            pk[0][Ic, Jc] = top_value
        else:
            a2b_ord4(pp[k], g, replace=True)
            a2b_ord4(pk[k], g, replace=True)
        a2b_ord4(gz[k], g, replace=True)
    for k in range(len(delp)):
        wk1 = a2b_ord4(delp[k], g)
        wk = FArray.full((b.isd, b.jsd), (b.ied, b.jed))
        wk[Ic, Jc] = pk[k + 1][Ic, Jc] - pk[k][Ic, Jc]
        p, q, z = pk[k : k + 2], pp[k : k + 2], gz[k : k + 2]
        I, J = R(b.is_, b.ie), R(b.js, b.je + 1)
        if split is not None:
            u[k][I, J] = u[k][I, J] + split[2] * split[0][k][I, J]
        du1 = dt / (wk[I, J] + wk[I + 1, J]) * (
            (z[1][I, J] - z[0][I + 1, J]) * (p[1][I + 1, J] - p[0][I, J])
            + (z[0][I, J] - z[1][I + 1, J]) * (p[1][I, J] - p[0][I + 1, J]))  # fmt: skip
        if split is not None:
            split[0][k][I, J] = du1
            du1 = (1.0 - split[2]) * split[0][k][I, J]
        u[k][I, J] = (u[k][I, J] + du1 + dt / (wk1[I, J] + wk1[I + 1, J]) * (
            (z[1][I, J] - z[0][I + 1, J]) * (q[1][I + 1, J] - q[0][I, J])
            + (z[0][I, J] - z[1][I + 1, J]) * (q[1][I, J] - q[0][I + 1, J]))) * g.rdx[I, J]  # fmt: skip
        I, J = R(b.is_, b.ie + 1), R(b.js, b.je)
        if split is not None:
            v[k][I, J] = v[k][I, J] + split[2] * split[1][k][I, J]
        dv1 = dt / (wk[I, J] + wk[I, J + 1]) * (
            (z[1][I, J] - z[0][I, J + 1]) * (p[1][I, J + 1] - p[0][I, J])
            + (z[0][I, J] - z[1][I, J + 1]) * (p[1][I, J] - p[0][I, J + 1]))  # fmt: skip
        if split is not None:
            split[1][k][I, J] = dv1
            dv1 = (1.0 - split[2]) * split[1][k][I, J]
        v[k][I, J] = (v[k][I, J] + dv1 + dt / (wk1[I, J] + wk1[I, J + 1]) * (
            (z[1][I, J] - z[0][I, J + 1]) * (q[1][I, J + 1] - q[0][I, J])
            + (z[0][I, J] - z[1][I, J + 1]) * (q[1][I, J] - q[0][I, J + 1]))) * g.rdy[I, J]  # fmt: skip


def halo_pressures(routine: str, b: Any, npz: int, ptop: float, akap: float, q: np.ndarray,
                   delp: np.ndarray) -> None:  # fmt: skip
    """FV3 ``pe_halo``, ``pk3_halo`` or ``pln_halo`` (``routine``), loop by loop: ``q`` (FV3's
    ``pe`` or ``pk3``) and ``delp`` as 3-D arrays ``(i, j, k)`` from ``(isd, jsd)`` (``pe`` here
    laid out as ``pk3``), in place."""
    is_, ie, js, je = b.is_, b.ie, b.js, b.je

    def at(i: int, j: int) -> tuple[int, int]:
        return i - b.isd, j - b.jsd

    def column(i: int, j: int) -> None:
        ii, jj = at(i, j)
        if routine == "pe_halo":
            q[ii, jj, 0] = ptop
            for k in range(npz):
                q[ii, jj, k + 1] = q[ii, jj, k] + delp[ii, jj, k]
            return
        pet = np.float64(ptop)
        for k in range(npz):
            pet = pet + delp[ii, jj, k]
            q[ii, jj, k + 1] = np.exp(akap * np.log(pet)) if routine == "pk3_halo" else np.log(pet)

    ring = 1 if routine == "pe_halo" else 2
    for j in range(js, je + 1):
        for i in [*range(is_ - ring, is_), *range(ie + 1, ie + ring + 1)]:
            column(i, j)
    for i in range(is_ - ring, ie + ring + 1):
        for j in [*range(js - ring, js), *range(je + 1, je + ring + 1)]:
            column(i, j)


def ray_fast(dt: float, npz: int, pfull: np.ndarray, tau: float, u: np.ndarray, v: np.ndarray,
             w: np.ndarray, ks: int, dp: np.ndarray, ptop: float, hydrostatic: bool, rf_cutoff: float,
             b: Any) -> None:  # fmt: skip
    """FV3 ``Ray_fast`` (its first call: the set-up, then the damping), loop by loop; ``u``,
    ``v``, ``w`` 3-D arrays from ``(isd, jsd)``, layers top down; in place."""
    tau0 = tau * 86400.0
    rf = np.ones(npz + 1)
    rff = np.zeros(npz + 1)
    kmax = 0
    for k in range(1, npz + 1):
        if pfull[k - 1] < rf_cutoff:
            s = math.sin(0.5 * math.pi * math.log(rf_cutoff / pfull[k - 1]) / math.log(rf_cutoff / ptop))
            rff[k] = dt / tau0 * (s * s)
            kmax = k
            rff[k] = 1.0 / (1.0 + rff[k])
            rf[k] = rff[k]
        else:
            break
    k_rf = 0
    for k in range(1, ks + 1):
        if pfull[k - 1] < rf_cutoff + min(100.0, 10.0 * ptop):
            k_rf = k
        else:
            break
    i0, j0 = b.isd, b.jsd
    for j in range(b.js, b.je + 2):
        dm = 0.0
        for k in range(1, k_rf + 1):
            dm = dm + dp[k - 1]
        I = slice(b.is_ - i0, b.ie + 1 - i0)
        Iv = slice(b.is_ - i0, b.ie + 2 - i0)
        jj = j - j0
        dmu = np.zeros(b.ie - b.is_ + 1)
        dmv = np.zeros(b.ie - b.is_ + 2)
        for k in range(1, kmax + 1):
            dmu = dmu + (1.0 - rf[k]) * dp[k - 1] * u[I, jj, k - 1]
            u[I, jj, k - 1] = rf[k] * u[I, jj, k - 1]
            if j != b.je + 1:
                dmv = dmv + (1.0 - rf[k]) * dp[k - 1] * v[Iv, jj, k - 1]
                v[Iv, jj, k - 1] = rf[k] * v[Iv, jj, k - 1]
                if not hydrostatic:
                    w[I, jj, k - 1] = rf[k] * w[I, jj, k - 1]
        dmu = dmu / dm
        if j != b.je + 1:
            dmv = dmv / dm
        for k in range(1, k_rf + 1):
            u[I, jj, k - 1] = u[I, jj, k - 1] + dmu
            if j != b.je + 1:
                v[Iv, jj, k - 1] = v[Iv, jj, k - 1] + dmv

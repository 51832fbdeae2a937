"""FV3 ``fv_tracer2d.F90``: ``tracer_2d_1L`` (the layer-by-layer subcycled tracer transport
``fv_dynamics`` calls with ``z_tracer = .true.``) and ``tracer_2d`` (``z_tracer = .false.``,
``q_split = 0``, no ``trdm2`` damping) transliterated, for the cubed sphere (``bounded_domain``
false), without the ``id_divg_mean`` diagnostic.

Arrays are :class:`~tests.fv3core.transliteration.farray.FArray` views with FV3's bounds on i, j and
the levels as a trailing NumPy axis (``q(isd:ied, jsd:jed, npz)`` is ``FArray(data[ni, nj,
npz], (isd, jsd))``); :func:`layer` is level k of one.  :class:`Tracer2D1L` and
:class:`Tracer2D` run every rank of a :class:`mapping.cluster.Communicator` in this process:
FV3's loops per rank, its ``mp_reduce_max`` as ``communicator.allreduce`` and its halo updates
(``mpp_update_domains`` of ``qn2``; the group update of q) as the communicator's halo
updaters, in FV3's order (``tracer_2d_1L``: level by level, subcycle by subcycle;
``tracer_2d``: subcycle by subcycle, all levels in each).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from mapping.cluster import Communicator, ScalarHalo
from tests.fv3core.transliteration.farray import FArray, R
from tests.fv3core.transliteration.grid import Grid
from tests.fv3core.transliteration.tp_core import fv_tp_2d


def layer(a: FArray, k: int) -> FArray:
    """Level ``k`` (0-based) of a 3-D FArray, a view."""
    return FArray(a.data[:, :, k], a.lo)


def area_fluxes(cx: FArray, cy: FArray, g: Grid) -> tuple[FArray, FArray]:
    """``tracer_2d_1L``'s first loop for one level: the swept areas ``xfx(is:ie+1, jsd:jed)``,
    ``yfx(isd:ied, js:je+1)`` from the Courant numbers ``cx``, ``cy``."""
    b = g.bd
    Ii, Jd, Id, Jj = R(b.is_, b.ie + 1), R(b.jsd, b.jed), R(b.isd, b.ied), R(b.js, b.je + 1)
    xfx = FArray.full((b.is_, b.jsd), (b.ie + 1, b.jed))
    c = cx[Ii, Jd]
    xfx[Ii, Jd] = np.where(c > 0.0, c * g.dxa[Ii - 1, Jd] * g.dy[Ii, Jd] * g.sin_sg[3][Ii - 1, Jd],
                           c * g.dxa[Ii, Jd] * g.dy[Ii, Jd] * g.sin_sg[1][Ii, Jd])  # fmt: skip
    yfx = FArray.full((b.isd, b.js), (b.ied, b.je + 1))
    c = cy[Id, Jj]
    yfx[Id, Jj] = np.where(c > 0.0, c * g.dya[Id, Jj - 1] * g.dx[Id, Jj] * g.sin_sg[4][Id, Jj - 1],
                           c * g.dya[Id, Jj] * g.dx[Id, Jj] * g.sin_sg[2][Id, Jj])  # fmt: skip
    return xfx, yfx


def courant_max(cx: FArray, cy: FArray, g: Grid, k: int, npz: int) -> float:
    """FV3's ``cmax(k)`` of one rank for level ``k`` (1-based, as FV3's ``k < npz/6``), the
    loops over ``i = is:ie, j = js:je`` point by point."""
    b = g.bd
    cmax = 0.0
    for j in range(b.js, b.je + 1):
        for i in range(b.is_, b.ie + 1):
            if k < npz // 6:
                cmax = max(cmax, abs(cx[i, j]), abs(cy[i, j]))
            else:
                cmax = max(cmax, max(abs(cx[i, j]), abs(cy[i, j])) + 1.0 - g.sin_sg[5][i, j])
    return float(cmax)


class Tracer2D1L:
    """FV3 ``tracer_2d_1L`` on every rank of ``communicator`` (all in this process), for
    ``hord`` (FV3's ``hord_tr``).  ``__call__`` transports the tracers in place and returns
    ``nsplt`` per level.

    ``communicator=None``: one rank (``grids`` has one entry) with its halos given: the maximum
    Courant number is this rank's and no halo is updated (neither q's at the start nor
    ``qn2``'s between subcycles, whose halos stay as the previous subcycle left them).  That is
    FV3's sequence on a rank of a cube only when every level has one subcycle; with more it is
    the one-rank check of the per-rank phases."""

    def __init__(self, grids: Mapping[int, Grid], communicator: Communicator | None,
                 hord: int) -> None:  # fmt: skip
        if communicator is None and len(grids) != 1:
            raise ValueError(f"Tracer2D1L without a communicator runs one rank, got {len(grids)}")
        self.grids, self.communicator, self.hord = dict(grids), communicator, hord

    def __call__(self, q: Mapping[int, Sequence[FArray]], dp1: Mapping[int, FArray],
                 mfx: Mapping[int, FArray], mfy: Mapping[int, FArray],
                 cx: Mapping[int, FArray], cy: Mapping[int, FArray]) -> list[int]:  # fmt: skip
        """Per rank: ``q`` the tracers ``(isd:ied, jsd:jed, npz)`` (in/out), ``dp1`` delp before
        ``dyn_core`` (in/out), ``mfx(is:ie+1, js:je, npz)``, ``mfy(is:ie, js:je+1, npz)``,
        ``cx(is:ie+1, jsd:jed, npz)``, ``cy(isd:ied, js:je+1, npz)`` (in/out: scaled)."""
        ranks = sorted(self.grids)
        npz = dp1[ranks[0]].data.shape[2]
        nq = len(q[ranks[0]])
        h = self.grids[ranks[0]].bd.ng
        xfx, yfx, nsplt_k = self._courant(cx, cy, npz)
        self._scale([k for k in range(npz) if nsplt_k[k] > 1], nsplt_k, mfx, mfy, cx, cy, xfx,
                    yfx)  # fmt: skip
        # qn2(isd:ied, jsd:jed, nq) per rank
        qn2 = {r: np.zeros(q[r][0].data.shape[:2] + (nq,)) for r in ranks}
        qn2_halo = None
        if self.communicator is not None:
            # complete_group_halo_update(q_pack)
            self.communicator.halo_updater({r: [ScalarHalo(a.data, h) for a in q[r]]
                                            for r in ranks}, packing="slicing").update()  # fmt: skip
            # qn2's mpp_update_domains
            qn2_halo = self.communicator.halo_updater(
                {r: [ScalarHalo(qn2[r], h)] for r in ranks}, packing="slicing")
        for k in range(npz):
            nsplt = nsplt_k[k]
            ra = {r: self._ra(xfx[r][k], yfx[r][k], self.grids[r]) for r in ranks}
            for it in range(1, nsplt + 1):
                for r in ranks:
                    self._subcycle(r, k, it, nsplt, q[r], qn2[r], dp1[r], mfx[r], mfy[r],
                                   cx[r], cy[r], xfx[r][k], yfx[r][k], *ra[r])  # fmt: skip
                if it < nsplt and qn2_halo is not None:
                    qn2_halo.update()
        return nsplt_k

    def _courant(self, cx: Mapping[int, FArray], cy: Mapping[int, FArray],
                 npz: int) -> tuple[dict[int, list[FArray]], dict[int, list[FArray]], list[int]]:  # fmt: skip
        """The first k loop (swept areas and each rank's ``cmax``), ``mp_reduce_max``, and
        ``int(1 + cmax(k))`` per level."""
        ranks = sorted(self.grids)
        xfx: dict[int, list[FArray]] = {r: [] for r in ranks}
        yfx: dict[int, list[FArray]] = {r: [] for r in ranks}
        cmax_r: dict[int, np.ndarray] = {}
        for r in ranks:
            g = self.grids[r]
            cm = np.zeros(npz)
            for k in range(1, npz + 1):
                x, y = area_fluxes(layer(cx[r], k - 1), layer(cy[r], k - 1), g)
                xfx[r].append(x)
                yfx[r].append(y)
                cm[k - 1] = courant_max(layer(cx[r], k - 1), layer(cy[r], k - 1), g, k, npz)
            cmax_r[r] = cm
        if self.communicator is None:
            cmax = cmax_r[ranks[0]]
        else:
            cmax = np.atleast_1d(self.communicator.allreduce(cmax_r, "max"))  # mp_reduce_max
        return xfx, yfx, [int(1.0 + cmax[k]) for k in range(npz)]

    def _scale(self, levels: Sequence[int], nsplt_k: Sequence[int], mfx: Mapping[int, FArray],
               mfy: Mapping[int, FArray], cx: Mapping[int, FArray], cy: Mapping[int, FArray],
               xfx: Mapping[int, list[FArray]], yfx: Mapping[int, list[FArray]]) -> None:  # fmt: skip
        """``cx``, ``xfx``, ``mfx``, ``cy``, ``yfx``, ``mfy`` of ``levels`` times ``frac(k) = 1 /
        nsplt(k)``, in place."""
        for r in sorted(self.grids):
            b = self.grids[r].bd
            Ii, Jd, Jn = R(b.is_, b.ie + 1), R(b.jsd, b.jed), R(b.js, b.je)
            Id, Jj, In = R(b.isd, b.ied), R(b.js, b.je + 1), R(b.is_, b.ie)
            for k in levels:
                frac = 1.0 / float(nsplt_k[k])
                c, m = layer(cx[r], k), layer(mfx[r], k)
                c[Ii, Jd] = c[Ii, Jd] * frac
                xfx[r][k][Ii, Jd] = xfx[r][k][Ii, Jd] * frac
                m[Ii, Jn] = m[Ii, Jn] * frac
                c, m = layer(cy[r], k), layer(mfy[r], k)
                c[Id, Jj] = c[Id, Jj] * frac
                yfx[r][k][Id, Jj] = yfx[r][k][Id, Jj] * frac
                m[In, Jj] = m[In, Jj] * frac

    @staticmethod
    def _ra(xfx: FArray, yfx: FArray, g: Grid) -> tuple[FArray, FArray]:
        b = g.bd
        In, Jd, Id, Jn = R(b.is_, b.ie), R(b.jsd, b.jed), R(b.isd, b.ied), R(b.js, b.je)
        ra_x = FArray.full((b.is_, b.jsd), (b.ie, b.jed))
        ra_y = FArray.full((b.isd, b.js), (b.ied, b.je))
        ra_x[In, Jd] = g.area[In, Jd] + xfx[In, Jd] - xfx[In + 1, Jd]
        ra_y[Id, Jn] = g.area[Id, Jn] + yfx[Id, Jn] - yfx[Id, Jn + 1]
        return ra_x, ra_y

    def _subcycle(self, r: int, k: int, it: int, nsplt: int, q: Sequence[FArray],
                  qn2: np.ndarray, dp1: FArray, mfx: FArray, mfy: FArray, cx: FArray,
                  cy: FArray, xfx: FArray, yfx: FArray, ra_x: FArray,
                  ra_y: FArray) -> None:  # fmt: skip
        """FV3's ``do it=1,nsplt`` body for rank ``r``, level ``k`` (0-based)."""
        g = self.grids[r]
        b = g.bd
        In, Jn = R(b.is_, b.ie), R(b.js, b.je)
        dp1_k, mfx_k, mfy_k = layer(dp1, k), layer(mfx, k), layer(mfy, k)
        cx_k, cy_k = layer(cx, k), layer(cy, k)
        dp2 = FArray.full((b.is_, b.js), (b.ie, b.je))
        dp2[In, Jn] = dp1_k[In, Jn] + (mfx_k[In, Jn] - mfx_k[In + 1, Jn] + mfy_k[In, Jn]
                                       - mfy_k[In, Jn + 1]) * g.rarea[In, Jn]  # fmt: skip
        lo = (b.isd, b.jsd)
        for iq, tracer in enumerate(q):
            q_k = layer(tracer, k)
            qn2_q = FArray(qn2[:, :, iq], lo)
            if nsplt != 1:
                if it == 1:
                    qn2_q.data[...] = q_k.data
                fx, fy = fv_tp_2d(qn2_q, cx_k, cy_k, self.hord, xfx, yfx, ra_x, ra_y, g,
                                  mfx=mfx_k, mfy=mfy_k)  # fmt: skip
                new = (qn2_q[In, Jn] * dp1_k[In, Jn] + (fx[In, Jn] - fx[In + 1, Jn] + fy[In, Jn]
                       - fy[In, Jn + 1]) * g.rarea[In, Jn]) / dp2[In, Jn]  # fmt: skip
                if it < nsplt:
                    qn2_q[In, Jn] = new
                else:
                    q_k[In, Jn] = new
            else:
                fx, fy = fv_tp_2d(q_k, cx_k, cy_k, self.hord, xfx, yfx, ra_x, ra_y, g,
                                  mfx=mfx_k, mfy=mfy_k)  # fmt: skip
                q_k[In, Jn] = (q_k[In, Jn] * dp1_k[In, Jn] + (fx[In, Jn] - fx[In + 1, Jn]
                               + fy[In, Jn] - fy[In, Jn + 1]) * g.rarea[In, Jn]) / dp2[In, Jn]  # fmt: skip
        if it < nsplt:
            dp1_k[In, Jn] = dp2[In, Jn]


class Tracer2D(Tracer2D1L):
    """FV3 ``tracer_2d`` (``fv_dynamics`` with ``z_tracer = .false.``, FV3's default) on every
    rank of ``communicator``, for ``q_split = 0``: ``nsplt = int(1 + max_k cmax(k))`` subcycles
    over all levels, level k taking part in the first ``ksplt(k) = int(1 + cmax(k))``
    (``GLOBAL_CFL`` undefined), ``fv_tp_2d`` on q itself, q's halo update between subcycles,
    ``dp1 := dp2`` after every subcycle but the global last.  ``q_split > 0`` is refused: FV3
    then sets ``ksplt(k)`` from a ``cmax`` it never computed.  No tracer damping (``trdm2``)."""

    def __call__(self, q: Mapping[int, Sequence[FArray]], dp1: Mapping[int, FArray],
                 mfx: Mapping[int, FArray], mfy: Mapping[int, FArray],
                 cx: Mapping[int, FArray], cy: Mapping[int, FArray]) -> list[int]:  # fmt: skip
        """As :meth:`Tracer2D1L.__call__`; returns ``ksplt`` per level."""
        if self.communicator is None:
            raise ValueError("Tracer2D runs the ranks of a communicator")
        ranks = sorted(self.grids)
        npz = dp1[ranks[0]].data.shape[2]
        h = self.grids[ranks[0]].bd.ng
        xfx, yfx, ksplt = self._courant(cx, cy, npz)
        nsplt = max(ksplt)  # int(1 + c_global), c_global the maximum over the levels
        self._scale(list(range(npz)) if nsplt != 1 else [], ksplt, mfx, mfy, cx, cy, xfx, yfx)
        q_halo = self.communicator.halo_updater(
            {r: [ScalarHalo(a.data, h) for a in q[r]] for r in ranks}, packing="slicing")
        for it in range(1, nsplt + 1):
            q_halo.update()  # complete_group_halo_update(q_pack), started after the last it
            for r in ranks:
                g = self.grids[r]
                b = g.bd
                In, Jn = R(b.is_, b.ie), R(b.js, b.je)
                for k in range(npz):
                    if it > ksplt[k]:
                        continue
                    dp1_k, mfx_k, mfy_k = layer(dp1[r], k), layer(mfx[r], k), layer(mfy[r], k)
                    dp2 = FArray.full((b.is_, b.js), (b.ie, b.je))
                    dp2[In, Jn] = dp1_k[In, Jn] + (mfx_k[In, Jn] - mfx_k[In + 1, Jn]
                                                   + mfy_k[In, Jn] - mfy_k[In, Jn + 1]) * g.rarea[In, Jn]  # fmt: skip
                    ra_x, ra_y = self._ra(xfx[r][k], yfx[r][k], g)
                    for tracer in q[r]:
                        q_k = layer(tracer, k)
                        fx, fy = fv_tp_2d(q_k, layer(cx[r], k), layer(cy[r], k), self.hord,
                                          xfx[r][k], yfx[r][k], ra_x, ra_y, g, mfx=mfx_k,
                                          mfy=mfy_k)  # fmt: skip
                        q_k[In, Jn] = (q_k[In, Jn] * dp1_k[In, Jn] + (fx[In, Jn] - fx[In + 1, Jn]
                                       + fy[In, Jn] - fy[In, Jn + 1]) * g.rarea[In, Jn]) / dp2[In, Jn]  # fmt: skip
                    if it != nsplt:
                        dp1_k[In, Jn] = dp2[In, Jn]
        return ksplt

"""FV3 ``tp_core.F90``: ``fv_tp_2d``, ``xppm``/``yppm`` (``iord`` 5, 6, 8, 10),
``copy_corners`` and ``pert_ppm``, transliterated (cubed sphere, ``grid_type < 3``).

``yppm`` is ``xppm`` along j: FV3 writes it as the mirror image of ``xppm`` statement for
statement, so here it is ``xppm`` on transposed views (the same operations on the same
values, bitwise the same results).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tests.fv3core.transliteration.farray import FArray, R

R3 = 1.0 / 3.0
S11, S14, S15 = 11.0 / 14.0, 4.0 / 7.0, 3.0 / 14.0
C1, C2, C3 = -2.0 / 14.0, 11.0 / 14.0, 5.0 / 14.0
P1, P2 = 7.0 / 12.0, -1.0 / 12.0
NEAR_ZERO = 1.0e-25
#: the ``iord`` values of ``xppm``/``yppm`` transliterated here
XPPM_IORD = (5, 6, 8, 10)


def sign(a: Any, b: Any) -> Any:
    """Fortran ``SIGN(a, b)``: |a| with the sign of b (signed zeros honoured, as gfortran)."""
    return np.copysign(np.abs(a), b)


def transpose(a: FArray) -> FArray:
    """The view of ``a`` with i and j exchanged."""
    return FArray(a.data.T, (a.lo[1], a.lo[0]))


def pert_ppm_standard(a0: np.ndarray, al: np.ndarray, ar: np.ndarray) -> None:
    """``pert_ppm(..., iv /= 0)``: the standard PPM constraint on the perturbations al, ar
    (in place)."""
    opposite = al * ar < 0.0
    da1 = al - ar
    da2 = da1**2
    a6da = 3.0 * (al + ar) * da1
    new_ar = np.where(opposite & (a6da < -da2), -2.0 * al, ar)
    new_al = np.where(opposite & ~(a6da < -da2) & (a6da > da2), -2.0 * ar, al)
    ar[...] = np.where(opposite, new_ar, 0.0)
    al[...] = np.where(opposite, new_al, 0.0)


def _edge_value(q1: FArray, dxa: FArray, jr: R, i: int) -> np.ndarray:
    """FV3's non-uniform-grid value at the left face of cell ``i`` (the tile edge): the mean
    of the one-sided second-order extrapolations from both sides."""

    def d(k: int) -> np.ndarray:
        return dxa[k, jr]

    def q(k: int) -> np.ndarray:
        return q1[k, jr]

    return 0.5 * (((2.0 * d(i - 1) + d(i - 2)) * q(i - 1) - d(i - 1) * q(i - 2))
                  / (d(i - 2) + d(i - 1))
                  + ((2.0 * d(i) + d(i + 1)) * q(i) - d(i) * q(i + 1)) / (d(i) + d(i + 1)))  # fmt: skip


def _xppm_unlimited(q1: FArray, c: FArray, iord: int, is_: int, ie: int, jr: R, npx: int,
                    dxa: FArray) -> FArray:  # fmt: skip
    """``xppm``'s ``iord < 7`` branch for ``mord`` 5 and 6: the fourth-order interface values
    (FV3's ``c1``-``c3`` and edge values next to the tile edges) and the ``smt5`` switch
    (5: ``bl * br < 0``; 6: ``3 |b0| < |bl - br|``, with ``bl * br < 0`` on the two cells at
    each tile edge)."""
    is1, ie3 = max(3, is_ - 1), min(npx - 2, ie + 2)
    al = FArray.full((is_ - 1, jr.lo), (ie + 2, jr.hi))
    A = R(is1, ie3)
    al[A, jr] = P1 * (q1[A - 1, jr] + q1[A, jr]) + P2 * (q1[A - 2, jr] + q1[A + 1, jr])
    if is_ == 1:
        al[0, jr] = C1 * q1[-2, jr] + C2 * q1[-1, jr] + C3 * q1[0, jr]
        al[1, jr] = _edge_value(q1, dxa, jr, 1)
        al[2, jr] = C3 * q1[1, jr] + C2 * q1[2, jr] + C1 * q1[3, jr]
    if ie + 1 == npx:
        n = npx
        al[n - 1, jr] = C1 * q1[n - 3, jr] + C2 * q1[n - 2, jr] + C3 * q1[n - 1, jr]
        al[n, jr] = _edge_value(q1, dxa, jr, n)
        al[n + 1, jr] = C3 * q1[n, jr] + C2 * q1[n + 1, jr] + C1 * q1[n + 2, jr]
    B = R(is_ - 1, ie + 1)
    bl = FArray(al[B, jr] - q1[B, jr], (B.lo, jr.lo))
    br = FArray(al[B + 1, jr] - q1[B, jr], (B.lo, jr.lo))
    b0 = FArray(bl.data + br.data, bl.lo)
    if iord == 5:
        smt5 = FArray(bl.data * br.data < 0.0, bl.lo)
    else:
        smt5 = FArray(3.0 * np.abs(b0.data) < np.abs(bl.data - br.data), bl.lo)
        edge_cells = ((0, 1) if is_ == 1 else ()) + ((npx - 1, npx) if ie + 1 == npx else ())
        for i in edge_cells:  # FV3's "fix edge issues"
            smt5[i, jr] = bl[i, jr] * br[i, jr] < 0.0
    flux = FArray.full((is_, jr.lo), (ie + 1, jr.hi))
    F = R(is_, ie + 1)
    cc = c[F, jr]
    fx1 = np.where(cc > 0.0, (1.0 - cc) * (br[F - 1, jr] - cc * b0[F - 1, jr]),
                   (1.0 + cc) * (bl[F, jr] + cc * b0[F, jr]))  # fmt: skip
    upwind = np.where(cc > 0.0, q1[F - 1, jr], q1[F, jr])
    flux[F, jr] = np.where(smt5[F - 1, jr] | smt5[F, jr], upwind + fx1, upwind)
    return flux


def _huynh_perturbations(q1: FArray, dm: FArray, al: FArray, B: R,
                         jr: R) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """``xppm`` ``iord = 10`` on cells ``B``: ``bl``, ``br`` with Lin's modification of
    Huynh's second constraint (zero where the three slopes vanish)."""
    dq = FArray.full((B.lo - 2, jr.lo), (B.hi + 1, jr.hi))
    Q = R(B.lo - 2, B.hi + 1)
    dq[Q, jr] = 2.0 * (q1[Q + 1, jr] - q1[Q, jr])
    bl = al[B, jr] - q1[B, jr]
    br = al[B + 1, jr] - q1[B, jr]
    flat = np.abs(dm[B - 1, jr]) + np.abs(dm[B, jr]) + np.abs(dm[B + 1, jr]) < NEAR_ZERO
    steep = np.abs(3.0 * (bl + br)) > np.abs(bl - br)
    pmp_2 = dq[B - 1, jr]
    lac_2 = pmp_2 - 0.75 * dq[B - 2, jr]
    br_c = np.minimum(np.maximum(np.maximum(0.0, pmp_2), lac_2),
                      np.maximum(br, np.minimum(np.minimum(0.0, pmp_2), lac_2)))  # fmt: skip
    pmp_1 = -dq[B, jr]
    lac_1 = pmp_1 + 0.75 * dq[B + 1, jr]
    bl_c = np.minimum(np.maximum(np.maximum(0.0, pmp_1), lac_1),
                      np.maximum(bl, np.minimum(np.minimum(0.0, pmp_1), lac_1)))  # fmt: skip
    bl = np.where(flat, 0.0, np.where(steep, bl_c, bl))
    br = np.where(flat, 0.0, np.where(steep, br_c, br))
    return bl, br


def xppm(q: FArray, c: FArray, iord: int, is_: int, ie: int, jr: R, npx: int,
         dxa: FArray) -> FArray:  # fmt: skip
    """FV3 ``xppm``: the face values ``flux(is:ie+1, jr)`` of q (PPM along i) upwind by the
    Courant number ``c``, with FV3's tile-edge treatment.  ``iord`` 5, 6: the unlimited
    fourth-order profile with the ``smt5`` switch; 8: Lin (2004) monotone; 10: Lin's
    modification of Huynh's constraint."""
    if iord not in XPPM_IORD:
        raise NotImplementedError(f"xppm iord={iord}: the transliteration has iord {XPPM_IORD}")
    is1, ie1 = max(3, is_ - 1), min(npx - 3, ie + 1)
    lo, hi = is_ - 3, ie + 3
    q1 = FArray(np.zeros((hi - lo + 1, jr.size)), (lo, jr.lo))
    q1[R(is_ - 3, ie + 3), jr] = q[R(is_ - 3, ie + 3), jr]
    if iord < 7:
        return _xppm_unlimited(q1, c, iord, is_, ie, jr, npx, dxa)
    dm = FArray.full((is_ - 2, jr.lo), (ie + 2, jr.hi))
    I = R(is_ - 2, ie + 2)
    xt = 0.25 * (q1[I + 1, jr] - q1[I - 1, jr])
    qmax = np.maximum(np.maximum(q1[I - 1, jr], q1[I, jr]), q1[I + 1, jr])
    qmin = np.minimum(np.minimum(q1[I - 1, jr], q1[I, jr]), q1[I + 1, jr])
    dm[I, jr] = sign(np.minimum(np.minimum(np.abs(xt), qmax - q1[I, jr]), q1[I, jr] - qmin), xt)
    al = FArray.full((is_ - 1, jr.lo), (ie + 2, jr.hi))
    A = R(is1, ie1 + 1)
    al[A, jr] = 0.5 * (q1[A - 1, jr] + q1[A, jr]) + R3 * (dm[A - 1, jr] - dm[A, jr])
    bl = FArray.full((is_ - 1, jr.lo), (ie + 1, jr.hi))
    br = FArray.full((is_ - 1, jr.lo), (ie + 1, jr.hi))
    B = R(is1, ie1)
    if iord == 8:
        xt = 2.0 * dm[B, jr]
        bl[B, jr] = -sign(np.minimum(np.abs(xt), np.abs(al[B, jr] - q1[B, jr])), xt)
        br[B, jr] = sign(np.minimum(np.abs(xt), np.abs(al[B + 1, jr] - q1[B, jr])), xt)
    else:
        bl[B, jr], br[B, jr] = _huynh_perturbations(q1, dm, al, B, jr)

    def dxa_(i: int) -> np.ndarray:
        return dxa[i, jr]

    def q_(i: int) -> np.ndarray:
        return q1[i, jr]

    if is_ == 1:
        bl[0, jr] = S14 * dm[-1, jr] + S11 * (q_(-1) - q_(0))
        xt = 0.5 * (((2.0 * dxa_(0) + dxa_(-1)) * q_(0) - dxa_(0) * q_(-1)) / (dxa_(-1) + dxa_(0))
                    + ((2.0 * dxa_(1) + dxa_(2)) * q_(1) - dxa_(1) * q_(2)) / (dxa_(1) + dxa_(2)))  # fmt: skip
        xt = np.maximum(xt, np.minimum(np.minimum(np.minimum(q_(-1), q_(0)), q_(1)), q_(2)))
        xt = np.minimum(xt, np.maximum(np.maximum(np.maximum(q_(-1), q_(0)), q_(1)), q_(2)))
        br[0, jr] = xt - q_(0)
        bl[1, jr] = xt - q_(1)
        xt = S15 * q_(1) + S11 * q_(2) - S14 * dm[2, jr]
        br[1, jr] = xt - q_(1)
        bl[2, jr] = xt - q_(2)
        br[2, jr] = al[3, jr] - q_(2)
        e = R(0, 2)
        a0, l_, r_ = q1[e, jr], bl[e, jr].copy(), br[e, jr].copy()
        pert_ppm_standard(a0, l_, r_)
        bl[e, jr], br[e, jr] = l_, r_
    if ie + 1 == npx:
        n = npx
        bl[n - 2, jr] = al[n - 2, jr] - q_(n - 2)
        xt = S15 * q_(n - 1) + S11 * q_(n - 2) + S14 * dm[n - 2, jr]
        br[n - 2, jr] = xt - q_(n - 2)
        bl[n - 1, jr] = xt - q_(n - 1)
        xt = 0.5 * (((2.0 * dxa_(n - 1) + dxa_(n - 2)) * q_(n - 1) - dxa_(n - 1) * q_(n - 2))
                    / (dxa_(n - 2) + dxa_(n - 1))
                    + ((2.0 * dxa_(n) + dxa_(n + 1)) * q_(n) - dxa_(n) * q_(n + 1))
                    / (dxa_(n) + dxa_(n + 1)))  # fmt: skip
        xt = np.maximum(xt, np.minimum(np.minimum(np.minimum(q_(n - 2), q_(n - 1)), q_(n)), q_(n + 1)))
        xt = np.minimum(xt, np.maximum(np.maximum(np.maximum(q_(n - 2), q_(n - 1)), q_(n)), q_(n + 1)))
        br[n - 1, jr] = xt - q_(n - 1)
        bl[n, jr] = xt - q_(n)
        br[n, jr] = S11 * (q_(n + 1) - q_(n)) - S14 * dm[n + 1, jr]
        e = R(n - 2, n)
        a0, l_, r_ = q1[e, jr], bl[e, jr].copy(), br[e, jr].copy()
        pert_ppm_standard(a0, l_, r_)
        bl[e, jr], br[e, jr] = l_, r_
    flux = FArray.full((is_, jr.lo), (ie + 1, jr.hi))
    F = R(is_, ie + 1)
    cc = c[F, jr]
    up = q1[F - 1, jr] + (1.0 - cc) * (br[F - 1, jr] - cc * (bl[F - 1, jr] + br[F - 1, jr]))
    down = q1[F, jr] + (1.0 + cc) * (bl[F, jr] + cc * (bl[F, jr] + br[F, jr]))
    flux[F, jr] = np.where(cc > 0.0, up, down)
    return flux


def yppm(q: FArray, c: FArray, jord: int, js: int, je: int, ir: R, npy: int,
         dya: FArray) -> FArray:  # fmt: skip
    """FV3 ``yppm``: ``flux(ir, js:je+1)`` (PPM along j), :func:`xppm` on transposed views."""
    return transpose(xppm(transpose(q), transpose(c), jord, js, je, ir, npy, transpose(dya)))


def copy_corners(q: FArray, npx: int, npy: int, direction: int, ng: int, corners: Any) -> None:
    """FV3 ``copy_corners``: fill the halo regions beyond the cube vertices for a sweep along
    x (``direction`` 1) or y (2), in place.  ``corners``: object with the four corner flags."""
    src = q.copy()
    for j in range(1 - ng, 1):
        for i in range(1 - ng, 1):
            if corners.sw_corner:
                q[i, j] = src[j, 1 - i] if direction == 1 else src[1 - j, i]
    for j in range(1 - ng, 1):
        for i in range(npx, npx + ng):
            if corners.se_corner:
                q[i, j] = src[npy - j, i - npx + 1] if direction == 1 else src[npy + j - 1, npx - i]
    for j in range(npy, npy + ng):
        for i in range(npx, npx + ng):
            if corners.ne_corner:
                q[i, j] = src[j, 2 * npx - 1 - i] if direction == 1 else src[2 * npy - 1 - j, i]
    for j in range(npy, npy + ng):
        for i in range(1 - ng, 1):
            if corners.nw_corner:
                q[i, j] = src[npy - j, i - 1 + npx] if direction == 1 else src[j + 1 - npx, npy - i]


def fv_tp_2d(q: FArray, crx: FArray, cry: FArray, hord: int, xfx: FArray, yfx: FArray,
             ra_x: FArray, ra_y: FArray, g: Any, *, mfx: FArray | None = None,
             mfy: FArray | None = None) -> tuple[FArray, FArray]:  # fmt: skip
    """FV3 ``fv_tp_2d`` without ``deln_flux`` damping: the Lin-Rood average of the two
    splitting orders' face values times the swept areas ``xfx``, ``yfx`` (FV3's transport of
    delp and vorticity) or, given ``mfx`` (is:ie+1, js:je) and ``mfy`` (is:ie, js:je+1), times
    those (FV3's ``mfx=``, ``mfy=`` form: pt and tracers); ``fx`` (is:ie+1, js:je) and ``fy``
    (is:ie, js:je+1).  ``ra_x`` (is:ie, jsd:jed), ``ra_y`` (isd:ied, js:je): the
    denominators of the inner updates, as FV3's callers pass them.  ``q``'s corner halos are
    overwritten."""
    if (mfx is None) != (mfy is None):
        raise ValueError("fv_tp_2d: pass both mfx and mfy (FV3's mass-flux form) or neither")
    b = g.bd
    ord_in = 8 if hord == 10 else hord
    ord_ou = hord
    copy_corners(q, g.npx, g.npy, 2, b.ng, g)
    fy2 = yppm(q, cry, ord_in, b.js, b.je, R(b.isd, b.ied), g.npy, g.dya)
    Ji, Jn = R(b.js, b.je + 1), R(b.js, b.je)
    Id = R(b.isd, b.ied)
    fyy = FArray.full((b.isd, b.js), (b.ied, b.je + 1))
    fyy[Id, Ji] = yfx[Id, Ji] * fy2[Id, Ji]
    q_i = FArray.full((b.isd, b.jsd), (b.ied, b.jed))
    q_i[Id, Jn] = (q[Id, Jn] * g.area[Id, Jn] + fyy[Id, Jn] - fyy[Id, Jn + 1]) / ra_y[Id, Jn]
    fx = xppm(q_i, crx, ord_ou, b.is_, b.ie, Jn, g.npx, g.dxa)
    copy_corners(q, g.npx, g.npy, 1, b.ng, g)
    Jd = R(b.jsd, b.jed)
    fx2 = xppm(q, crx, ord_in, b.is_, b.ie, Jd, g.npx, g.dxa)
    Ii, In = R(b.is_, b.ie + 1), R(b.is_, b.ie)
    fx1 = FArray.full((b.is_, b.jsd), (b.ie + 1, b.jed))
    fx1[Ii, Jd] = xfx[Ii, Jd] * fx2[Ii, Jd]
    q_j = FArray.full((b.isd, b.jsd), (b.ied, b.jed))
    q_j[In, Jd] = (q[In, Jd] * g.area[In, Jd] + fx1[In, Jd] - fx1[In + 1, Jd]) / ra_x[In, Jd]
    fy = yppm(q_j, cry, ord_ou, b.js, b.je, In, g.npy, g.dya)
    fx_out = FArray.full((b.is_, b.js), (b.ie + 1, b.je))
    fy_out = FArray.full((b.is_, b.js), (b.ie, b.je + 1))
    if mfx is not None and mfy is not None:  # FV3: "For transport of pt and tracers"
        fx_out[Ii, Jn] = 0.5 * (fx[Ii, Jn] + fx2[Ii, Jn]) * mfx[Ii, Jn]
        fy_out[In, Ji] = 0.5 * (fy[In, Ji] + fy2[In, Ji]) * mfy[In, Ji]
    else:  # "For transport of delp, vorticity"
        fx_out[Ii, Jn] = 0.5 * (fx[Ii, Jn] + fx2[Ii, Jn]) * xfx[Ii, Jn]
        fy_out[In, Ji] = 0.5 * (fy[In, Ji] + fy2[In, Ji]) * yfx[In, Ji]
    return fx_out, fy_out

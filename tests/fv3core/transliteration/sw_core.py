"""FV3 ``sw_core.F90`` for the shallow-water configuration (``SW_DYNAMICS``, hydrostatic,
cubed sphere ``grid_type = 0``, one layer), transliterated: ``c_sw`` with ``d2a2c_vect`` and
``divergence_corner``, ``d_sw`` with ``xtp_u``/``ytp_v`` and the divergence damping.

Routines take a grid ``g`` (:class:`tests.fv3core.transliteration.grid.Grid`: FV3's ``gridstruct``
arrays as :class:`FArray` and the bounds ``g.bd``) and the fields as :class:`FArray` with FV3's
bounds.  Statements follow the Fortran (same expressions, same order of operations); loops
become slices over the same index ranges.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tests.fv3core.transliteration import corners
from tests.fv3core.transliteration.a2b_edge import a2b_ord4
from tests.fv3core.transliteration.deln_flux import (
    DEL6_VT_FLUX_THRESHOLD,
    DELN_FLUX_THRESHOLD,
    damping_coefficient,
    del6_vt_flux,
    deln_flux,
)
from tests.fv3core.transliteration.farray import FArray, R
from tests.fv3core.transliteration.tp_core import fv_tp_2d, pert_ppm_standard, sign, transpose

R3 = 1.0 / 3.0
S11, S14, S15 = 11.0 / 14.0, 4.0 / 7.0, 3.0 / 14.0
BIG_NUMBER = 1.0e30
# 4-point Lagrange interpolation and the one-sided edge weights of d2a2c_vect
A1, A2 = 0.5625, -0.0625
C1, C2, C3 = -2.0 / 14.0, 11.0 / 14.0, 5.0 / 14.0


def _full(lo: tuple[int, int], hi: tuple[int, int], value: float = 0.0) -> FArray:
    return FArray.full(lo, hi, value)


def edge_interpolate4(ua: list[np.ndarray], dxa: list[np.ndarray]) -> np.ndarray:
    """FV3 ``edge_interpolate4``: the value at the edge between the 2nd and 3rd of four cells
    on a non-uniform grid (mean of the two one-sided extrapolations)."""
    t1 = dxa[0] + dxa[1]
    t2 = dxa[2] + dxa[3]
    return 0.5 * (((t1 + dxa[1]) * ua[1] - dxa[1] * ua[0]) / t1
                  + ((t2 + dxa[2]) * ua[2] - dxa[2] * ua[3]) / t2)  # fmt: skip


def d2a2c_vect(u: FArray, v: FArray, g: Any, ua: FArray, va: FArray, uc: FArray, vc: FArray,
               ut: FArray, vt: FArray, dord4: bool = True) -> None:  # fmt: skip
    """FV3 ``d2a2c_vect``: A-grid contravariant winds ``ua``, ``va`` and C-grid winds ``uc``,
    ``vc`` (covariant) with their contravariant ``ut``, ``vt``, 4th order with FV3's tile-edge
    and corner treatment; written into the given arrays over FV3's ranges (points outside them
    keep their values, as in FV3)."""
    b, npx, npy = g.bd, g.npx, g.npy
    is_, ie, js, je, isd, ied, jsd, jed = b.is_, b.ie, b.js, b.je, b.isd, b.ied, b.jsd, b.jed
    idd = 1 if dord4 else 0
    npt = 4
    utmp = _full((isd, jsd), (ied, jed), BIG_NUMBER)
    vtmp = _full((isd, jsd), (ied, jed), BIG_NUMBER)
    # interior
    J = R(max(npt, js - 1), min(npy - npt, je + 1))
    I = R(max(npt, isd), min(npx - npt, ied))
    utmp[I, J] = A2 * (u[I, J - 1] + u[I, J + 2]) + A1 * (u[I, J] + u[I, J + 1])
    J = R(max(npt, jsd), min(npy - npt, jed))
    I = R(max(npt, is_ - 1), min(npx - npt, ie + 1))
    vtmp[I, J] = A2 * (v[I - 1, J] + v[I + 2, J]) + A1 * (v[I, J] + v[I + 1, J])
    # edges

    def two_point(I: R, J: R) -> None:
        utmp[I, J] = 0.5 * (u[I, J] + u[I, J + 1])
        vtmp[I, J] = 0.5 * (v[I, J] + v[I + 1, J])

    if js == 1 or jsd < npt:
        two_point(R(isd, ied), R(jsd, npt - 1))
    if je + 1 == npy or jed >= npy - npt:
        two_point(R(isd, ied), R(npy - npt + 1, jed))
    if is_ == 1 or isd < npt:
        two_point(R(isd, npt - 1), R(max(npt, jsd), min(npy - npt, jed)))
    if ie + 1 == npx or ied >= npx - npt:
        two_point(R(npx - npt + 1, ied), R(max(npt, jsd), min(npy - npt, jed)))
    # contravariant components at cell centres
    J = R(js - 1 - idd, je + 1 + idd)
    I = R(is_ - 1 - idd, ie + 1 + idd)
    ua[I, J] = (utmp[I, J] - vtmp[I, J] * g.cosa_s[I, J]) * g.rsin2[I, J]
    va[I, J] = (vtmp[I, J] - utmp[I, J] * g.cosa_s[I, J]) * g.rsin2[I, J]
    # A -> C, x: fix the edges
    if g.sw_corner:
        for i in range(-2, 1):
            utmp[i, 0] = -vtmp[0, 1 - i]
    if g.se_corner:
        for i in range(0, 3):
            utmp[npx + i, 0] = vtmp[npx, i + 1]
    if g.ne_corner:
        for i in range(0, 3):
            utmp[npx + i, npy] = -vtmp[npx, je - i]
    if g.nw_corner:
        for i in range(-2, 1):
            utmp[i, npy] = vtmp[0, je + i]
    ifirst, ilast = max(3, is_ - 1), min(npx - 2, ie + 2)
    J, I = R(js - 1, je + 1), R(ifirst, ilast)
    uc[I, J] = A2 * (utmp[I - 2, J] + utmp[I + 1, J]) + A1 * (utmp[I - 1, J] + utmp[I, J])
    ut[I, J] = (uc[I, J] - v[I, J] * g.cosa_u[I, J]) * g.rsin_u[I, J]
    if g.sw_corner:
        ua[-1, 0] = -va[0, 2]
        ua[0, 0] = -va[0, 1]
    if g.se_corner:
        ua[npx, 0] = va[npx, 1]
        ua[npx + 1, 0] = va[npx, 2]
    if g.ne_corner:
        ua[npx, npy] = -va[npx, npy - 1]
        ua[npx + 1, npy] = -va[npx, npy - 2]
    if g.nw_corner:
        ua[-1, npy] = va[0, npy - 2]
        ua[0, npy] = va[0, npy - 1]
    sin_sg = g.sin_sg
    if is_ == 1:
        uc[0, J] = C1 * utmp[-2, J] + C2 * utmp[-1, J] + C3 * utmp[0, J]
        ut[1, J] = edge_interpolate4([ua[i, J] for i in range(-1, 3)],
                                     [g.dxa[i, J] for i in range(-1, 3)])  # fmt: skip
        uc[1, J] = np.where(ut[1, J] > 0.0, ut[1, J] * sin_sg[3][0, J], ut[1, J] * sin_sg[1][1, J])
        uc[2, J] = C1 * utmp[3, J] + C2 * utmp[2, J] + C3 * utmp[1, J]
        ut[0, J] = (uc[0, J] - v[0, J] * g.cosa_u[0, J]) * g.rsin_u[0, J]
        ut[2, J] = (uc[2, J] - v[2, J] * g.cosa_u[2, J]) * g.rsin_u[2, J]
    if ie + 1 == npx:
        n = npx
        uc[n - 1, J] = C1 * utmp[n - 3, J] + C2 * utmp[n - 2, J] + C3 * utmp[n - 1, J]
        ut[n, J] = edge_interpolate4([ua[i, J] for i in range(n - 2, n + 2)],
                                     [g.dxa[i, J] for i in range(n - 2, n + 2)])  # fmt: skip
        uc[n, J] = np.where(ut[n, J] > 0.0, ut[n, J] * sin_sg[3][n - 1, J], ut[n, J] * sin_sg[1][n, J])
        uc[n + 1, J] = C3 * utmp[n, J] + C2 * utmp[n + 1, J] + C1 * utmp[n + 2, J]
        ut[n - 1, J] = (uc[n - 1, J] - v[n - 1, J] * g.cosa_u[n - 1, J]) * g.rsin_u[n - 1, J]
        ut[n + 1, J] = (uc[n + 1, J] - v[n + 1, J] * g.cosa_u[n + 1, J]) * g.rsin_u[n + 1, J]
    # y
    if g.sw_corner:
        for j in range(-2, 1):
            vtmp[0, j] = -utmp[1 - j, 0]
    if g.nw_corner:
        for j in range(0, 3):
            vtmp[0, npy + j] = utmp[j + 1, npy]
    if g.se_corner:
        for j in range(-2, 1):
            vtmp[npx, j] = utmp[ie + j, 0]
    if g.ne_corner:
        for j in range(0, 3):
            vtmp[npx, npy + j] = -utmp[ie - j, npy]
    if g.sw_corner:
        va[0, -1] = -ua[2, 0]
        va[0, 0] = -ua[1, 0]
    if g.se_corner:
        va[npx, 0] = ua[npx - 1, 0]
        va[npx, -1] = ua[npx - 2, 0]
    if g.ne_corner:
        va[npx, npy] = -ua[npx - 1, npy]
        va[npx, npy + 1] = -ua[npx - 2, npy]
    if g.nw_corner:
        va[0, npy] = ua[1, npy]
        va[0, npy + 1] = ua[2, npy]
    I = R(is_ - 1, ie + 1)
    for j in range(js - 1, je + 3):
        if j == 1 or j == npy:
            vt[I, j] = edge_interpolate4([va[I, jj] for jj in range(j - 2, j + 2)],
                                         [g.dya[I, jj] for jj in range(j - 2, j + 2)])  # fmt: skip
            vc[I, j] = np.where(vt[I, j] > 0.0, vt[I, j] * sin_sg[4][I, j - 1],
                                vt[I, j] * sin_sg[2][I, j])  # fmt: skip
        elif j == 0 or j == npy - 1:
            vc[I, j] = C1 * vtmp[I, j - 2] + C2 * vtmp[I, j - 1] + C3 * vtmp[I, j]
            vt[I, j] = (vc[I, j] - u[I, j] * g.cosa_v[I, j]) * g.rsin_v[I, j]
        elif j == 2 or j == npy + 1:
            vc[I, j] = C1 * vtmp[I, j + 1] + C2 * vtmp[I, j] + C3 * vtmp[I, j - 1]
            vt[I, j] = (vc[I, j] - u[I, j] * g.cosa_v[I, j]) * g.rsin_v[I, j]
        else:
            vc[I, j] = A2 * (vtmp[I, j - 2] + vtmp[I, j + 1]) + A1 * (vtmp[I, j - 1] + vtmp[I, j])
            vt[I, j] = (vc[I, j] - u[I, j] * g.cosa_v[I, j]) * g.rsin_v[I, j]


def divergence_corner(u: FArray, v: FArray, ua: FArray, va: FArray, g: Any) -> FArray:
    """FV3 ``divergence_corner``: the divergence of the D-grid winds on the corners
    (is:ie+1, js:je+1), with FV3's tile-edge and cube-vertex treatment."""
    b, npx, npy = g.bd, g.npx, g.npy
    is_, ie, js, je = b.is_, b.ie, b.js, b.je
    sin_sg, cos_sg = g.sin_sg, g.cos_sg
    is2, ie1 = max(2, is_), min(npx - 1, ie + 1)
    uf = _full((is_ - 2, js - 1), (ie + 2, je + 2))
    vf = _full((is_ - 1, js - 2), (ie + 2, je + 2))
    I = R(is_ - 1, ie + 1)
    for j in range(js, je + 2):
        if j == 1 or j == npy:
            uf[I, j] = u[I, j] * g.dyc[I, j] * 0.5 * (sin_sg[4][I, j - 1] + sin_sg[2][I, j])
        else:
            uf[I, j] = ((u[I, j] - 0.25 * (va[I, j - 1] + va[I, j]) * (cos_sg[4][I, j - 1] + cos_sg[2][I, j]))
                        * g.dyc[I, j] * 0.5 * (sin_sg[4][I, j - 1] + sin_sg[2][I, j]))  # fmt: skip
    J = R(js - 1, je + 1)
    I = R(is2, ie1)
    vf[I, J] = ((v[I, J] - 0.25 * (ua[I - 1, J] + ua[I, J]) * (cos_sg[3][I - 1, J] + cos_sg[1][I, J]))
                * g.dxc[I, J] * 0.5 * (sin_sg[3][I - 1, J] + sin_sg[1][I, J]))  # fmt: skip
    if is_ == 1:
        vf[1, J] = v[1, J] * g.dxc[1, J] * 0.5 * (sin_sg[3][0, J] + sin_sg[1][1, J])
    if ie + 1 == npx:
        vf[npx, J] = v[npx, J] * g.dxc[npx, J] * 0.5 * (sin_sg[3][npx - 1, J] + sin_sg[1][npx, J])
    divg_d = _full((b.isd, b.jsd), (b.ied + 1, b.jed + 1))
    I, J = R(is_, ie + 1), R(js, je + 1)
    divg_d[I, J] = vf[I, J - 1] - vf[I, J] + uf[I - 1, J] - uf[I, J]
    if g.sw_corner:
        divg_d[1, 1] = divg_d[1, 1] - vf[1, 0]
    if g.se_corner:
        divg_d[npx, 1] = divg_d[npx, 1] - vf[npx, 0]
    if g.ne_corner:
        divg_d[npx, npy] = divg_d[npx, npy] + vf[npx, npy]
    if g.nw_corner:
        divg_d[1, npy] = divg_d[1, npy] + vf[1, npy]
    divg_d[I, J] = g.rarea_c[I, J] * divg_d[I, J]
    return divg_d


@dataclass
class CGridState:
    """What ``c_sw`` returns: delpc, ptc, the updated C-grid winds uc, vc, the contravariant
    ut, vt (times dt2 and the face length, as FV3 leaves them), A-grid ua, va, corner
    divergence divg_d (nord > 0)."""

    delpc: FArray
    ptc: FArray
    uc: FArray
    vc: FArray
    ua: FArray
    va: FArray
    ut: FArray
    vt: FArray
    divg_d: FArray | None
    wc: FArray | None = None


def c_sw(delp: FArray, pt: FArray, u: FArray, v: FArray, nord: int, dt2: float, g: Any,
         uc: FArray, vc: FArray, ua: FArray, va: FArray, ut: FArray, vt: FArray, *,
         sw_dynamics: bool = True, w: FArray | None = None) -> CGridState:  # fmt: skip
    """FV3 ``c_sw`` (hydrostatic): the C-grid half step; ``uc``, ``vc``, ``ua``, ``va``,
    ``ut``, ``vt`` are FV3's persistent arrays, updated in place.  ``delp`` and ``pt`` get
    their corner halo cells filled (``fill2_4corners``), as in FV3.  ``sw_dynamics``: FV3 built
    with ``SW_DYNAMICS`` (``ptc = pt``); else the 3-D core's upwind transport of ``pt`` with the
    ``delp`` fluxes (``ptc = (pt delp + div(fx1 pt_up)) / delpc``).  ``w`` (non-hydrostatic):
    FV3's ``.not. hydrostatic`` branch, ``w`` corner-filled (``fill_4corners``) and transported
    alike into ``wc``."""
    b, npx, npy = g.bd, g.npx, g.npy
    is_, ie, js, je = b.is_, b.ie, b.js, b.je
    iep1, jep1 = ie + 1, je + 1
    sin_sg, cos_sg = g.sin_sg, g.cos_sg
    d2a2c_vect(u, v, g, ua, va, uc, vc, ut, vt)
    divg_d = divergence_corner(u, v, ua, va, g) if nord > 0 else None
    I, J = R(is_ - 1, iep1 + 1), R(js - 1, jep1)
    ut[I, J] = np.where(ut[I, J] > 0.0, dt2 * ut[I, J] * g.dy[I, J] * sin_sg[3][I - 1, J],
                        dt2 * ut[I, J] * g.dy[I, J] * sin_sg[1][I, J])  # fmt: skip
    I, J = R(is_ - 1, iep1), R(js - 1, je + 2)
    vt[I, J] = np.where(vt[I, J] > 0.0, dt2 * vt[I, J] * g.dx[I, J] * sin_sg[4][I, J - 1],
                        dt2 * vt[I, J] * g.dx[I, J] * sin_sg[2][I, J])  # fmt: skip
    # transport delp (SW_DYNAMICS: pt is not transported)
    corners.fill_4corners(delp, corners.XDIR, npx, npy, g)
    corners.fill_4corners(pt, corners.XDIR, npx, npy, g)
    fx1 = _full((is_ - 1, js - 1), (ie + 2, je + 1))
    fx = _full((is_ - 1, js - 1), (ie + 2, je + 1))
    I, J = R(is_ - 1, ie + 2), R(js - 1, jep1)
    fx1[I, J] = ut[I, J] * np.where(ut[I, J] > 0.0, delp[I - 1, J], delp[I, J])
    fx[I, J] = fx1[I, J] * np.where(ut[I, J] > 0.0, pt[I - 1, J], pt[I, J])
    if w is not None:
        corners.fill_4corners(w, corners.XDIR, npx, npy, g)
        fx2 = _full((is_ - 1, js - 1), (ie + 2, je + 1))
        fx2[I, J] = fx1[I, J] * np.where(ut[I, J] > 0.0, w[I - 1, J], w[I, J])
    corners.fill_4corners(delp, corners.YDIR, npx, npy, g)
    corners.fill_4corners(pt, corners.YDIR, npx, npy, g)
    fy1 = _full((is_ - 1, js - 1), (ie + 1, je + 2))
    fy = _full((is_ - 1, js - 1), (ie + 1, je + 2))
    I, J = R(is_ - 1, iep1), R(js - 1, jep1 + 1)
    fy1[I, J] = vt[I, J] * np.where(vt[I, J] > 0.0, delp[I, J - 1], delp[I, J])
    fy[I, J] = fy1[I, J] * np.where(vt[I, J] > 0.0, pt[I, J - 1], pt[I, J])
    if w is not None:
        corners.fill_4corners(w, corners.YDIR, npx, npy, g)
        fy2 = _full((is_ - 1, js - 1), (ie + 1, je + 2))
        fy2[I, J] = fy1[I, J] * np.where(vt[I, J] > 0.0, w[I, J - 1], w[I, J])
    delpc = _full((b.isd, b.jsd), (b.ied, b.jed))
    ptc = _full((b.isd, b.jsd), (b.ied, b.jed))
    I, J = R(is_ - 1, iep1), R(js - 1, jep1)
    delpc[I, J] = delp[I, J] + (fx1[I, J] - fx1[I + 1, J] + fy1[I, J] - fy1[I, J + 1]) * g.rarea[I, J]
    if sw_dynamics:
        ptc[I, J] = pt[I, J]
    else:
        ptc[I, J] = (pt[I, J] * delp[I, J]
                     + (fx[I, J] - fx[I + 1, J] + fy[I, J] - fy[I, J + 1]) * g.rarea[I, J]) / delpc[I, J]
    wc = None
    if w is not None:
        wc = _full((b.isd, b.jsd), (b.ied, b.jed))
        wc[I, J] = (w[I, J] * delp[I, J]
                    + (fx2[I, J] - fx2[I + 1, J] + fy2[I, J] - fy2[I, J + 1]) * g.rarea[I, J]) / delpc[I, J]
    # kinetic energy
    ke = _full((is_ - 1, js - 1), (ie + 1, je + 1))
    vort = _full((is_ - 1, js - 1), (ie + 1, je + 1))
    for i in range(is_ - 1, iep1 + 1):
        Jc = R(js - 1, jep1)
        pos = ua[i, Jc] > 0.0
        if i == 1:
            kp = uc[1, Jc] * sin_sg[1][1, Jc] + v[1, Jc] * cos_sg[1][1, Jc]
        elif i == npx:
            kp = uc[npx, Jc] * sin_sg[1][npx, Jc] + v[npx, Jc] * cos_sg[1][npx, Jc]
        else:
            kp = uc[i, Jc]
        if i == 0:
            kn = uc[1, Jc] * sin_sg[3][0, Jc] + v[1, Jc] * cos_sg[3][0, Jc]
        elif i == npx - 1:
            kn = uc[npx, Jc] * sin_sg[3][npx - 1, Jc] + v[npx, Jc] * cos_sg[3][npx - 1, Jc]
        else:
            kn = uc[i + 1, Jc]
        ke[i, Jc] = np.where(pos, kp, kn)
    for j in range(js - 1, jep1 + 1):
        Ic = R(is_ - 1, iep1)
        pos = va[Ic, j] > 0.0
        if j == 1:
            vp = vc[Ic, 1] * sin_sg[2][Ic, 1] + u[Ic, 1] * cos_sg[2][Ic, 1]
        elif j == npy:
            vp = vc[Ic, npy] * sin_sg[2][Ic, npy] + u[Ic, npy] * cos_sg[2][Ic, npy]
        else:
            vp = vc[Ic, j]
        if j == 0:
            vn = vc[Ic, 1] * sin_sg[4][Ic, 0] + u[Ic, 1] * cos_sg[4][Ic, 0]
        elif j == npy - 1:
            vn = vc[Ic, npy] * sin_sg[4][Ic, npy - 1] + u[Ic, npy] * cos_sg[4][Ic, npy - 1]
        else:
            vn = vc[Ic, j + 1]
        vort[Ic, j] = np.where(pos, vp, vn)
    dt4 = 0.5 * dt2
    I, J = R(is_ - 1, iep1), R(js - 1, jep1)
    ke[I, J] = dt4 * (ua[I, J] * ke[I, J] + va[I, J] * vort[I, J])
    # circulation on the C grid
    fx = _full((is_ - 1, js - 1), (ie + 2, je + 1))
    fy = _full((is_ - 1, js - 1), (ie + 1, je + 2))
    I, J = R(is_, ie + 1), R(js - 1, je + 1)
    fx[I, J] = uc[I, J] * g.dxc[I, J]
    I, J = R(is_ - 1, ie + 1), R(js, je + 1)
    fy[I, J] = vc[I, J] * g.dyc[I, J]
    vort = _full((is_ - 1, js - 1), (ie + 1, je + 1))
    I, J = R(is_, ie + 1), R(js, je + 1)
    vort[I, J] = fx[I, J - 1] - fx[I, J] - fy[I - 1, J] + fy[I, J]
    if g.sw_corner:
        vort[1, 1] = vort[1, 1] + fy[0, 1]
    if g.se_corner:
        vort[npx, 1] = vort[npx, 1] - fy[npx, 1]
    if g.ne_corner:
        vort[npx, npy] = vort[npx, npy] - fy[npx, npy]
    if g.nw_corner:
        vort[1, npy] = vort[1, npy] + fy[0, npy]
    vort[I, J] = g.fC[I, J] + g.rarea_c[I, J] * vort[I, J]
    # transport absolute vorticity
    fy1 = _full((is_, js), (iep1, je))
    fyv = _full((is_, js), (iep1, je))
    for i in range(is_, iep1 + 1):
        Jr = R(js, je)
        if i == 1 or i == npx:
            fy1[i, Jr] = dt2 * v[i, Jr]
        else:
            fy1[i, Jr] = dt2 * (v[i, Jr] - uc[i, Jr] * g.cosa_u[i, Jr]) / g.sina_u[i, Jr]
        fyv[i, Jr] = np.where(fy1[i, Jr] > 0.0, vort[i, Jr], vort[i, Jr + 1])
    fx1 = _full((is_, js), (ie, jep1))
    fxv = _full((is_, js), (ie, jep1))
    Ir = R(is_, ie)
    for j in range(js, jep1 + 1):
        if j == 1 or j == npy:
            fx1[Ir, j] = dt2 * u[Ir, j]
        else:
            fx1[Ir, j] = dt2 * (u[Ir, j] - vc[Ir, j] * g.cosa_v[Ir, j]) / g.sina_v[Ir, j]
        fxv[Ir, j] = np.where(fx1[Ir, j] > 0.0, vort[Ir, j], vort[Ir + 1, j])
    # time-centred C-grid winds
    I, J = R(is_, iep1), R(js, je)
    uc[I, J] = uc[I, J] + fy1[I, J] * fyv[I, J] + g.rdxc[I, J] * (ke[I - 1, J] - ke[I, J])
    I, J = R(is_, ie), R(js, jep1)
    vc[I, J] = vc[I, J] - fx1[I, J] * fxv[I, J] + g.rdyc[I, J] * (ke[I, J - 1] - ke[I, J])
    return CGridState(delpc, ptc, uc, vc, ua, va, ut, vt, divg_d, wc)


# xtp_u's iord < 8 and iord == 10 constants (sw_core.F90)
P1, P2 = 7.0 / 12.0, -1.0 / 12.0
NEAR_ZERO = 1.0e-25
#: the ``iord`` values of ``xtp_u``/``ytp_v`` transliterated here
XTP_IORD = (5, 6, 8, 10)


def _xtp_unlimited(c: FArray, u: FArray, dx: FArray, rdx: FArray, is_: int, ie: int, jr: R,
                   npx: int, edge_rows: np.ndarray, iord: int) -> FArray:  # fmt: skip
    """FV3 ``xtp_u``'s ``iord < 8`` branch for ``iord`` 5, 6 (see :func:`_xtp`): the
    fourth-order profile with FV3's edge values and the ``smt5`` switch (5: ``bl * br < 0``;
    6: ``3 |b0| < |bl - br|``, ``bl * br < 0`` on the two cells at each tile edge)."""
    is3, ie3 = max(3, is_ - 1), min(npx - 3, ie + 1)
    al = _full((is_ - 1, jr.lo), (ie + 2, jr.hi))
    A = R(is3, ie3 + 1)
    al[A, jr] = P1 * (u[A - 1, jr] + u[A, jr]) + P2 * (u[A - 2, jr] + u[A + 1, jr])
    bl = _full((is_ - 1, jr.lo), (ie + 1, jr.hi))
    br = _full((is_ - 1, jr.lo), (ie + 1, jr.hi))
    B = R(is3, ie3)
    bl[B, jr] = al[B, jr] - u[B, jr]
    br[B, jr] = al[B + 1, jr] - u[B, jr]

    def u_(i: int) -> np.ndarray:
        return u[i, jr]

    def dx_(i: int) -> np.ndarray:
        return dx[i, jr]

    if is_ == 1:
        xt = C3 * u_(1) + C2 * u_(2) + C1 * u_(3)
        br[1, jr] = xt - u_(1)
        bl[2, jr] = xt - u_(2)
        br[2, jr] = al[3, jr] - u_(2)
        xt = 0.5 * (((2.0 * dx_(0) + dx_(-1)) * (u_(0)) - dx_(0) * u_(-1)) / (dx_(0) + dx_(-1))
                    + ((2.0 * dx_(1) + dx_(2)) * (u_(1)) - dx_(1) * u_(2)) / (dx_(1) + dx_(2)))  # fmt: skip
        bl[0, jr] = np.where(edge_rows, 0.0, C1 * u_(-2) + C2 * u_(-1) + C3 * u_(0) - u_(0))
        br[0, jr] = np.where(edge_rows, 0.0, xt - u_(0))
        bl[1, jr] = np.where(edge_rows, 0.0, xt - u_(1))
        br[1, jr] = np.where(edge_rows, 0.0, br[1, jr])
    if ie + 1 == npx:
        n = npx
        bl[n - 2, jr] = al[n - 2, jr] - u_(n - 2)
        xt = C1 * u_(n - 3) + C2 * u_(n - 2) + C3 * u_(n - 1)
        br[n - 2, jr] = xt - u_(n - 2)
        bl[n - 1, jr] = xt - u_(n - 1)
        xt = 0.5 * (((2.0 * dx_(n - 1) + dx_(n - 2)) * u_(n - 1) - dx_(n - 1) * u_(n - 2))
                    / (dx_(n - 1) + dx_(n - 2))
                    + ((2.0 * dx_(n) + dx_(n + 1)) * u_(n) - dx_(n) * u_(n + 1))
                    / (dx_(n) + dx_(n + 1)))  # fmt: skip
        bl[n - 1, jr] = np.where(edge_rows, 0.0, bl[n - 1, jr])
        br[n - 1, jr] = np.where(edge_rows, 0.0, xt - u_(n - 1))
        bl[n, jr] = np.where(edge_rows, 0.0, xt - u_(n))
        br[n, jr] = np.where(edge_rows, 0.0, C3 * u_(n) + C2 * u_(n + 1) + C1 * u_(n + 2) - u_(n))
    b0 = FArray(bl.data + br.data, bl.lo)
    if iord == 5:
        smt5 = FArray(bl.data * br.data < 0.0, bl.lo)
    else:
        smt5 = FArray(3.0 * np.abs(b0.data) < np.abs(bl.data - br.data), bl.lo)
        edge_cells = ((0, 1) if is_ == 1 else ()) + ((npx - 1, npx) if ie + 1 == npx else ())
        for i in edge_cells:  # FV3's "fix edge issues"
            smt5[i, jr] = bl[i, jr] * br[i, jr] < 0.0
    flux = _full((is_, jr.lo), (ie + 1, jr.hi))
    F = R(is_, ie + 1)
    cc = c[F, jr]
    cfl_p = cc * rdx[F - 1, jr]
    cfl_n = cc * rdx[F, jr]
    fx0 = np.where(cc > 0.0, (1.0 - cfl_p) * (br[F - 1, jr] - cfl_p * b0[F - 1, jr]),
                   (1.0 + cfl_n) * (bl[F, jr] + cfl_n * b0[F, jr]))  # fmt: skip
    upwind = np.where(cc > 0.0, u[F - 1, jr], u[F, jr])
    flux[F, jr] = np.where(smt5[F - 1, jr] | smt5[F, jr], upwind + fx0, upwind)
    return flux


def _xtp(c: FArray, u: FArray, dx: FArray, rdx: FArray, is_: int, ie: int, jr: R, npx: int,
         edge_rows: np.ndarray, iord: int) -> FArray:  # fmt: skip
    """FV3 ``xtp_u``: the face values ``flux(is:ie+1, jr)`` of u along i, upwind by the
    Courant number ``c``; ``edge_rows``: per j of ``jr``, whether it is a tile edge row
    (``j == 1 .or. j == npy`` of the Fortran), where the edge perturbations are 0.  ``iord``
    5, 6: :func:`_xtp_unlimited`; 8: Lin (2004) monotone; 10: Lin's modification of Huynh's
    constraint (``xtp_u``'s own 2-delta-x test), with 8's tile-edge values."""
    if iord not in XTP_IORD:
        raise NotImplementedError(f"xtp_u iord={iord}: the transliteration has iord {XTP_IORD}")
    if iord < 8:
        return _xtp_unlimited(c, u, dx, rdx, is_, ie, jr, npx, edge_rows, iord)
    is3, ie3 = max(3, is_ - 1), min(npx - 3, ie + 1)
    dm = _full((is_ - 2, jr.lo), (ie + 2, jr.hi))
    I = R(is_ - 2, ie + 2)
    xt = 0.25 * (u[I + 1, jr] - u[I - 1, jr])
    umax = np.maximum(np.maximum(u[I - 1, jr], u[I, jr]), u[I + 1, jr])
    umin = np.minimum(np.minimum(u[I - 1, jr], u[I, jr]), u[I + 1, jr])
    dm[I, jr] = sign(np.minimum(np.minimum(np.abs(xt), umax - u[I, jr]), u[I, jr] - umin), xt)
    dq = _full((is_ - 3, jr.lo), (ie + 2, jr.hi))
    Q = R(is_ - 3, ie + 2)
    dq[Q, jr] = u[Q + 1, jr] - u[Q, jr]
    al = _full((is_ - 1, jr.lo), (ie + 2, jr.hi))
    A = R(is3, ie3 + 1)
    al[A, jr] = 0.5 * (u[A - 1, jr] + u[A, jr]) + R3 * (dm[A - 1, jr] - dm[A, jr])
    bl = _full((is_ - 1, jr.lo), (ie + 1, jr.hi))
    br = _full((is_ - 1, jr.lo), (ie + 1, jr.hi))
    B = R(is3, ie3)
    if iord == 8:
        xt = 2.0 * dm[B, jr]
        bl[B, jr] = -sign(np.minimum(np.abs(xt), np.abs(al[B, jr] - u[B, jr])), xt)
        br[B, jr] = sign(np.minimum(np.abs(xt), np.abs(al[B + 1, jr] - u[B, jr])), xt)
    else:
        l_ = al[B, jr] - u[B, jr]
        r_ = al[B + 1, jr] - u[B, jr]
        flat = (np.abs(dm[B, jr]) < NEAR_ZERO) & (np.abs(dm[B - 1, jr]) + np.abs(dm[B + 1, jr]) < NEAR_ZERO)
        steep = ~(np.abs(dm[B, jr]) < NEAR_ZERO) & (np.abs(3.0 * (l_ + r_)) > np.abs(l_ - r_))
        pmp_1 = -2.0 * dq[B, jr]
        lac_1 = pmp_1 + 1.5 * dq[B + 1, jr]
        l_c = np.minimum(np.maximum(np.maximum(0.0, pmp_1), lac_1),
                         np.maximum(l_, np.minimum(np.minimum(0.0, pmp_1), lac_1)))  # fmt: skip
        pmp_2 = 2.0 * dq[B - 1, jr]
        lac_2 = pmp_2 - 1.5 * dq[B - 2, jr]
        r_c = np.minimum(np.maximum(np.maximum(0.0, pmp_2), lac_2),
                         np.maximum(r_, np.minimum(np.minimum(0.0, pmp_2), lac_2)))  # fmt: skip
        bl[B, jr] = np.where(flat, 0.0, np.where(steep, l_c, l_))
        br[B, jr] = np.where(flat, 0.0, np.where(steep, r_c, r_))

    def u_(i: int) -> np.ndarray:
        return u[i, jr]

    def dx_(i: int) -> np.ndarray:
        return dx[i, jr]

    if is_ == 1:
        br[2, jr] = al[3, jr] - u_(2)
        xt = S15 * u_(1) + S11 * u_(2) - S14 * dm[2, jr]
        bl[2, jr] = xt - u_(2)
        br[1, jr] = xt - u_(1)
        x0l = 0.5 * ((2.0 * dx_(0) + dx_(-1)) * u_(0) - dx_(0) * u_(-1)) / (dx_(0) + dx_(-1))
        x0r = 0.5 * ((2.0 * dx_(1) + dx_(2)) * u_(1) - dx_(1) * u_(2)) / (dx_(1) + dx_(2))
        xt = x0l + x0r
        bl[0, jr] = np.where(edge_rows, 0.0, S14 * dm[-1, jr] - S11 * dq[-1, jr])
        br[0, jr] = np.where(edge_rows, 0.0, xt - u_(0))
        bl[1, jr] = np.where(edge_rows, 0.0, xt - u_(1))
        br[1, jr] = np.where(edge_rows, 0.0, br[1, jr])
        l_, r_ = bl[2, jr].copy(), br[2, jr].copy()
        pert_ppm_standard(u_(2), l_, r_)
        bl[2, jr], br[2, jr] = l_, r_
    if ie + 1 == npx:
        n = npx
        bl[n - 2, jr] = al[n - 2, jr] - u_(n - 2)
        xt = S15 * u_(n - 1) + S11 * u_(n - 2) + S14 * dm[n - 2, jr]
        br[n - 2, jr] = xt - u_(n - 2)
        bl[n - 1, jr] = xt - u_(n - 1)
        x0l = 0.5 * ((2.0 * dx_(n - 1) + dx_(n - 2)) * u_(n - 1) - dx_(n - 1) * u_(n - 2)) / (dx_(n - 1) + dx_(n - 2))
        x0r = 0.5 * ((2.0 * dx_(n) + dx_(n + 1)) * u_(n) - dx_(n) * u_(n + 1)) / (dx_(n) + dx_(n + 1))
        xt = x0l + x0r
        bl[n - 1, jr] = np.where(edge_rows, 0.0, bl[n - 1, jr])
        br[n - 1, jr] = np.where(edge_rows, 0.0, xt - u_(n - 1))
        bl[n, jr] = np.where(edge_rows, 0.0, xt - u_(n))
        br[n, jr] = np.where(edge_rows, 0.0, S11 * dq[n, jr] - S14 * dm[n + 1, jr])
        l_, r_ = bl[n - 2, jr].copy(), br[n - 2, jr].copy()
        pert_ppm_standard(u_(n - 2), l_, r_)
        bl[n - 2, jr], br[n - 2, jr] = l_, r_
    flux = _full((is_, jr.lo), (ie + 1, jr.hi))
    F = R(is_, ie + 1)
    cc = c[F, jr]
    cfl_p = cc * rdx[F - 1, jr]
    cfl_n = cc * rdx[F, jr]
    up = u[F - 1, jr] + (1.0 - cfl_p) * (br[F - 1, jr] - cfl_p * (bl[F - 1, jr] + br[F - 1, jr]))
    down = u[F, jr] + (1.0 + cfl_n) * (bl[F, jr] + cfl_n * (bl[F, jr] + br[F, jr]))
    flux[F, jr] = np.where(cc > 0.0, up, down)
    return flux


def xtp_u(c: FArray, u: FArray, iord: int, g: Any) -> FArray:
    """FV3 ``xtp_u``: ``flux(is:ie+1, js:je+1)``."""
    b = g.bd
    jr = R(b.js, b.je + 1)
    rows = np.array([j in (1, g.npy) for j in range(jr.lo, jr.hi + 1)])[None, :]
    return _xtp(c, u, g.dx, g.rdx, b.is_, b.ie, jr, g.npx, rows, iord)


def ytp_v(c: FArray, v: FArray, jord: int, g: Any) -> FArray:
    """FV3 ``ytp_v``: ``flux(is:ie+1, js:je+1)``, :func:`xtp_u`'s algorithm along j (FV3 writes
    it as the mirror image statement for statement)."""
    b = g.bd
    ir = R(b.is_, b.ie + 1)
    rows = np.array([i in (1, g.npx) for i in range(ir.lo, ir.hi + 1)])[None, :]
    flux = _xtp(transpose(c), transpose(v), transpose(g.dy), transpose(g.rdy), b.js, b.je, ir,
                g.npy, rows, jord)  # fmt: skip
    return transpose(flux)


@dataclass
class DGridOutputs:
    """What ``d_sw`` leaves besides the updated ``delp``, ``u``, ``v``: the Courant numbers and
    swept areas (for tracer transport) and the mass fluxes."""

    crx: FArray
    cry: FArray
    xfx: FArray
    yfx: FArray
    fx: FArray
    fy: FArray
    heat_source: FArray | None = None
    diss_est: FArray | None = None


@dataclass
class VerticalWind:
    """The non-hydrostatic ``w`` of one layer for ``d_sw`` and its damping: ``nord_w``,
    ``damp_w`` (FV3's, ``dyn_core``'s per layer), ``kgb`` (``ke_bg``), FV3's
    ``prevent_diss_cooling`` and ``do_diss_est``."""

    w: FArray
    nord_w: int = 0
    damp_w: float = 0.0
    kgb: float = 0.0
    prevent_diss_cooling: bool = False
    do_diss_est: bool = False


def _contravariant_winds(uc: FArray, vc: FArray, dt: float, g: Any) -> tuple[FArray, FArray]:
    """The part of ``d_sw`` that makes the contravariant C-grid winds ``ut``, ``vt`` from
    ``uc``, ``vc``: interior formula, one-sided tile edges, and the 2x2 systems at the four
    cube vertices (cubed sphere, not a bounded domain)."""
    b, npx, npy = g.bd, g.npx, g.npy
    is_, ie, js, je, isd, ied, jsd, jed = b.is_, b.ie, b.js, b.je, b.isd, b.ied, b.jsd, b.jed
    cosa_u, cosa_v, rsin_u, rsin_v, sin_sg = g.cosa_u, g.cosa_v, g.rsin_u, g.rsin_v, g.sin_sg
    ut = _full((isd, jsd), (ied + 1, jed))
    vt = _full((isd, jsd), (ied, jed + 1))
    I = R(is_ - 1, ie + 2)
    for j in range(jsd, jed + 1):
        if j not in (0, 1, npy - 1, npy):
            ut[I, j] = (uc[I, j] - 0.25 * cosa_u[I, j]
                        * (vc[I - 1, j] + vc[I, j] + vc[I - 1, j + 1] + vc[I, j + 1])) * rsin_u[I, j]  # fmt: skip
    I = R(isd, ied)
    for j in range(js - 1, je + 3):
        if j not in (1, npy):
            vt[I, j] = (vc[I, j] - 0.25 * cosa_v[I, j]
                        * (uc[I, j - 1] + uc[I + 1, j - 1] + uc[I, j] + uc[I + 1, j])) * rsin_v[I, j]  # fmt: skip
    Jd = R(jsd, jed)
    Jc = R(max(3, js), min(npy - 2, je + 1))
    if is_ == 1:
        ut[1, Jd] = np.where(uc[1, Jd] * dt > 0.0, uc[1, Jd] / sin_sg[3][0, Jd], uc[1, Jd] / sin_sg[1][1, Jd])
        for i in (0, 1):
            vt[i, Jc] = vc[i, Jc] - 0.25 * cosa_v[i, Jc] * (ut[i, Jc - 1] + ut[i + 1, Jc - 1] + ut[i, Jc] + ut[i + 1, Jc])
    if ie + 1 == npx:
        n = npx
        ut[n, Jd] = np.where(uc[n, Jd] * dt > 0.0, uc[n, Jd] / sin_sg[3][n - 1, Jd], uc[n, Jd] / sin_sg[1][n, Jd])
        for i in (n - 1, n):
            vt[i, Jc] = vc[i, Jc] - 0.25 * cosa_v[i, Jc] * (ut[i, Jc - 1] + ut[i + 1, Jc - 1] + ut[i, Jc] + ut[i + 1, Jc])
    Id = R(isd, ied)
    Ic = R(max(3, is_), min(npx - 2, ie + 1))
    if js == 1:
        vt[Id, 1] = np.where(vc[Id, 1] * dt > 0.0, vc[Id, 1] / sin_sg[4][Id, 0], vc[Id, 1] / sin_sg[2][Id, 1])
        for j in (0, 1):
            ut[Ic, j] = uc[Ic, j] - 0.25 * cosa_u[Ic, j] * (vt[Ic - 1, j] + vt[Ic, j] + vt[Ic - 1, j + 1] + vt[Ic, j + 1])
    if je + 1 == npy:
        m = npy
        vt[Id, m] = np.where(vc[Id, m] * dt > 0.0, vc[Id, m] / sin_sg[4][Id, m - 1], vc[Id, m] / sin_sg[2][Id, m])
        for j in (m - 1, m):
            ut[Ic, j] = uc[Ic, j] - 0.25 * cosa_u[Ic, j] * (vt[Ic - 1, j] + vt[Ic, j] + vt[Ic - 1, j + 1] + vt[Ic, j + 1])
    cu, cv = cosa_u, cosa_v
    if g.sw_corner:
        damp = 1.0 / (1.0 - 0.0625 * cu[2, 0] * cv[1, 0])
        ut[2, 0] = (uc[2, 0] - 0.25 * cu[2, 0] * (vt[1, 1] + vt[2, 1] + vt[2, 0] + vc[1, 0]
                    - 0.25 * cv[1, 0] * (ut[1, 0] + ut[1, -1] + ut[2, -1]))) * damp  # fmt: skip
        damp = 1.0 / (1.0 - 0.0625 * cu[0, 1] * cv[0, 2])
        vt[0, 2] = (vc[0, 2] - 0.25 * cv[0, 2] * (ut[1, 1] + ut[1, 2] + ut[0, 2] + uc[0, 1]
                    - 0.25 * cu[0, 1] * (vt[0, 1] + vt[-1, 1] + vt[-1, 2]))) * damp  # fmt: skip
        damp = 1.0 / (1.0 - 0.0625 * cu[2, 1] * cv[1, 2])
        ut[2, 1] = (uc[2, 1] - 0.25 * cu[2, 1] * (vt[1, 1] + vt[2, 1] + vt[2, 2] + vc[1, 2]
                    - 0.25 * cv[1, 2] * (ut[1, 1] + ut[1, 2] + ut[2, 2]))) * damp  # fmt: skip
        vt[1, 2] = (vc[1, 2] - 0.25 * cv[1, 2] * (ut[1, 1] + ut[1, 2] + ut[2, 2] + uc[2, 1]
                    - 0.25 * cu[2, 1] * (vt[1, 1] + vt[2, 1] + vt[2, 2]))) * damp  # fmt: skip
    if g.se_corner:
        n = npx
        damp = 1.0 / (1.0 - 0.0625 * cu[n - 1, 0] * cv[n - 1, 0])
        ut[n - 1, 0] = (uc[n - 1, 0] - 0.25 * cu[n - 1, 0] * (vt[n - 1, 1] + vt[n - 2, 1] + vt[n - 2, 0] + vc[n - 1, 0]
                        - 0.25 * cv[n - 1, 0] * (ut[n, 0] + ut[n, -1] + ut[n - 1, -1]))) * damp  # fmt: skip
        damp = 1.0 / (1.0 - 0.0625 * cu[n + 1, 1] * cv[n, 2])
        vt[n, 2] = (vc[n, 2] - 0.25 * cv[n, 2] * (ut[n, 1] + ut[n, 2] + ut[n + 1, 2] + uc[n + 1, 1]
                    - 0.25 * cu[n + 1, 1] * (vt[n, 1] + vt[n + 1, 1] + vt[n + 1, 2]))) * damp  # fmt: skip
        damp = 1.0 / (1.0 - 0.0625 * cu[n - 1, 1] * cv[n - 1, 2])
        ut[n - 1, 1] = (uc[n - 1, 1] - 0.25 * cu[n - 1, 1] * (vt[n - 1, 1] + vt[n - 2, 1] + vt[n - 2, 2] + vc[n - 1, 2]
                        - 0.25 * cv[n - 1, 2] * (ut[n, 1] + ut[n, 2] + ut[n - 1, 2]))) * damp  # fmt: skip
        vt[n - 1, 2] = (vc[n - 1, 2] - 0.25 * cv[n - 1, 2] * (ut[n, 1] + ut[n, 2] + ut[n - 1, 2] + uc[n - 1, 1]
                        - 0.25 * cu[n - 1, 1] * (vt[n - 1, 1] + vt[n - 2, 1] + vt[n - 2, 2]))) * damp  # fmt: skip
    if g.ne_corner:
        n, m = npx, npy
        damp = 1.0 / (1.0 - 0.0625 * cu[n - 1, m] * cv[n - 1, m + 1])
        ut[n - 1, m] = (uc[n - 1, m] - 0.25 * cu[n - 1, m] * (vt[n - 1, m] + vt[n - 2, m] + vt[n - 2, m + 1] + vc[n - 1, m + 1]
                        - 0.25 * cv[n - 1, m + 1] * (ut[n, m] + ut[n, m + 1] + ut[n - 1, m + 1]))) * damp  # fmt: skip
        damp = 1.0 / (1.0 - 0.0625 * cu[n + 1, m - 1] * cv[n, m - 1])
        vt[n, m - 1] = (vc[n, m - 1] - 0.25 * cv[n, m - 1] * (ut[n, m - 1] + ut[n, m - 2] + ut[n + 1, m - 2] + uc[n + 1, m - 1]
                        - 0.25 * cu[n + 1, m - 1] * (vt[n, m] + vt[n + 1, m] + vt[n + 1, m - 1]))) * damp  # fmt: skip
        damp = 1.0 / (1.0 - 0.0625 * cu[n - 1, m - 1] * cv[n - 1, m - 1])
        ut[n - 1, m - 1] = (uc[n - 1, m - 1] - 0.25 * cu[n - 1, m - 1] * (vt[n - 1, m] + vt[n - 2, m] + vt[n - 2, m - 1] + vc[n - 1, m - 1]
                            - 0.25 * cv[n - 1, m - 1] * (ut[n, m - 1] + ut[n, m - 2] + ut[n - 1, m - 2]))) * damp  # fmt: skip
        vt[n - 1, m - 1] = (vc[n - 1, m - 1] - 0.25 * cv[n - 1, m - 1] * (ut[n, m - 1] + ut[n, m - 2] + ut[n - 1, m - 2] + uc[n - 1, m - 1]
                            - 0.25 * cu[n - 1, m - 1] * (vt[n - 1, m] + vt[n - 2, m] + vt[n - 2, m - 1]))) * damp  # fmt: skip
    if g.nw_corner:
        m = npy
        damp = 1.0 / (1.0 - 0.0625 * cu[2, m] * cv[1, m + 1])
        ut[2, m] = (uc[2, m] - 0.25 * cu[2, m] * (vt[1, m] + vt[2, m] + vt[2, m + 1] + vc[1, m + 1]
                    - 0.25 * cv[1, m + 1] * (ut[1, m] + ut[1, m + 1] + ut[2, m + 1]))) * damp  # fmt: skip
        damp = 1.0 / (1.0 - 0.0625 * cu[0, m - 1] * cv[0, m - 1])
        vt[0, m - 1] = (vc[0, m - 1] - 0.25 * cv[0, m - 1] * (ut[1, m - 1] + ut[1, m - 2] + ut[0, m - 2] + uc[0, m - 1]
                        - 0.25 * cu[0, m - 1] * (vt[0, m] + vt[-1, m] + vt[-1, m - 1]))) * damp  # fmt: skip
        damp = 1.0 / (1.0 - 0.0625 * cu[2, m - 1] * cv[1, m - 1])
        ut[2, m - 1] = (uc[2, m - 1] - 0.25 * cu[2, m - 1] * (vt[1, m] + vt[2, m] + vt[2, m - 1] + vc[1, m - 1]
                        - 0.25 * cv[1, m - 1] * (ut[1, m - 1] + ut[1, m - 2] + ut[2, m - 2]))) * damp  # fmt: skip
        vt[1, m - 1] = (vc[1, m - 1] - 0.25 * cv[1, m - 1] * (ut[1, m - 1] + ut[1, m - 2] + ut[2, m - 2] + uc[2, m - 1]
                        - 0.25 * cu[2, m - 1] * (vt[1, m] + vt[2, m] + vt[2, m - 1]))) * damp  # fmt: skip
    return ut, vt


def d_sw(delp: FArray, u: FArray, v: FArray, uc: FArray, vc: FArray, ua: FArray, va: FArray,
         divg_d: FArray, dt: float, hord_dp: int, hord_mt: int, hord_vt: int, nord: int,
         dddmp: float, d2_bg: float, d4_bg: float, g: Any, *, nord_v: int = 0,
         damp_v: float = 0.0, pt: FArray | None = None, hord_tm: int = 0,
         vertical: VerticalWind | None = None) -> DGridOutputs:  # fmt: skip
    """FV3 ``d_sw`` (hydrostatic, ``test_case > 1``, no dissipation heating): updates ``delp``,
    ``u``, ``v`` in place; ``uc``, ``vc`` and ``divg_d`` are used as work arrays, as in FV3.
    ``nord_v``, ``damp_v``: FV3's vorticity damping (``dyn_core``: ``min(2, nord)`` and
    ``vtdm4`` when ``do_vort_damp``): ``fv_tp_2d``'s ``deln_flux`` of ``delp`` (``damp_v >
    1e-4``) and ``del6_vt_flux`` of ``wk`` into the winds (``> 1e-5``).  ``pt`` given: FV3
    without ``SW_DYNAMICS`` (the 3-D core): ``pt`` is transported with ``hord_tm`` and the
    ``delp`` fluxes (``fv_tp_2d(..., mfx=fx, mfy=fy)``, no damping: ``damp_v`` must be 0) and
    updated in place with ``delp``.  ``vertical`` (non-hydrostatic): FV3's ``w`` terms, the
    ``del6_vt_flux`` damping of ``w`` with its heating, ``w delp`` transported with ``hord_vt``
    and the mass fluxes, ``w`` divided by the new ``delp``."""
    b, npx, npy = g.bd, g.npx, g.npy
    is_, ie, js, je, isd, ied, jsd, jed = b.is_, b.ie, b.js, b.je, b.isd, b.ied, b.jsd, b.jed
    sin_sg = g.sin_sg
    ut, vt = _contravariant_winds(uc, vc, dt, g)
    Ii, Jd = R(is_, ie + 1), R(jsd, jed)
    xfx = _full((is_, jsd), (ie + 1, jed))
    crx = _full((is_, jsd), (ie + 1, jed))
    xfx[Ii, Jd] = dt * ut[Ii, Jd]
    pos = xfx[Ii, Jd] > 0.0
    crx[Ii, Jd] = np.where(pos, xfx[Ii, Jd] * g.rdxa[Ii - 1, Jd], xfx[Ii, Jd] * g.rdxa[Ii, Jd])
    xfx[Ii, Jd] = np.where(pos, g.dy[Ii, Jd] * xfx[Ii, Jd] * sin_sg[3][Ii - 1, Jd],
                           g.dy[Ii, Jd] * xfx[Ii, Jd] * sin_sg[1][Ii, Jd])  # fmt: skip
    Id, Jj = R(isd, ied), R(js, je + 1)
    yfx = _full((isd, js), (ied, je + 1))
    cry = _full((isd, js), (ied, je + 1))
    yfx[Id, Jj] = dt * vt[Id, Jj]
    pos = yfx[Id, Jj] > 0.0
    cry[Id, Jj] = np.where(pos, yfx[Id, Jj] * g.rdya[Id, Jj - 1], yfx[Id, Jj] * g.rdya[Id, Jj])
    yfx[Id, Jj] = np.where(pos, g.dx[Id, Jj] * yfx[Id, Jj] * sin_sg[4][Id, Jj - 1],
                           g.dx[Id, Jj] * yfx[Id, Jj] * sin_sg[2][Id, Jj])  # fmt: skip
    ra_x = _full((is_, jsd), (ie, jed))
    In = R(is_, ie)
    ra_x[In, Jd] = g.area[In, Jd] + xfx[In, Jd] - xfx[In + 1, Jd]
    ra_y = _full((isd, js), (ied, je))
    Jn = R(js, je)
    ra_y[Id, Jn] = g.area[Id, Jn] + yfx[Id, Jn] - yfx[Id, Jn + 1]
    fx, fy = fv_tp_2d(delp, crx, cry, hord_dp, xfx, yfx, ra_x, ra_y, g)
    if damp_v > DELN_FLUX_THRESHOLD:  # the end of fv_tp_2d(..., nord=nord_v, damp_c=damp_v)
        damp = damping_coefficient(damp_v, g.da_min, nord_v)
        deln_flux(nord_v, is_, ie, js, je, npx, npy, damp, delp, fx, fy, g)
    mass_fx, mass_fy = fx, fy
    heat_source = diss_est = dw = None
    if vertical is not None:
        heat_source = _full((is_, js), (ie, je))
        diss_est = _full((is_, js), (ie, je))
        w = vertical.w
        if vertical.damp_w > 1.0e-5:
            dd8 = vertical.kgb * abs(dt)
            damp4 = damping_coefficient(vertical.damp_w, g.da_min_c, vertical.nord_w)
            wk = _full((isd, jsd), (ied, jed))
            fx2 = _full((isd, jsd), (ied + 1, jed))
            fy2 = _full((isd, jsd), (ied, jed + 1))
            del6_vt_flux(vertical.nord_w, npx, npy, damp4, w, wk, fx2, fy2, g)
            dw = _full((is_, js), (ie, je))
            for j in range(js, je + 1):
                for i in range(is_, ie + 1):
                    dw[i, j] = (fx2[i, j] - fx2[i + 1, j] + fy2[i, j] - fy2[i, j + 1]) * g.rarea[i, j]
                    tmp = dw[i, j] * (w[i, j] + 0.5 * dw[i, j])
                    if vertical.prevent_diss_cooling:
                        heat_source[i, j] = dd8 - min(0.0, tmp)
                        if vertical.do_diss_est:
                            diss_est[i, j] = dd8 - tmp
                    else:
                        heat_source[i, j] = dd8 - dw[i, j] * (w[i, j] + 0.5 * dw[i, j])
                        if vertical.do_diss_est:
                            diss_est[i, j] = heat_source[i, j]
        gx, gy = fv_tp_2d(w, crx, cry, hord_vt, xfx, yfx, ra_x, ra_y, g, mfx=fx, mfy=fy)
        w[In, Jn] = delp[In, Jn] * w[In, Jn] + (
            gx[In, Jn] - gx[In + 1, Jn] + gy[In, Jn] - gy[In, Jn + 1]) * g.rarea[In, Jn]  # fmt: skip
    if pt is None:
        delp[In, Jn] = delp[In, Jn] + (fx[In, Jn] - fx[In + 1, Jn] + fy[In, Jn] - fy[In, Jn + 1]) * g.rarea[In, Jn]
    else:
        if damp_v > DELN_FLUX_THRESHOLD:
            raise ValueError("d_sw: pt's deln_flux with mass is not transliterated (damp_v > 0)")
        gx, gy = fv_tp_2d(pt, crx, cry, hord_tm, xfx, yfx, ra_x, ra_y, g, mfx=fx, mfy=fy)
        pt[In, Jn] = pt[In, Jn] * delp[In, Jn] + (
            gx[In, Jn] - gx[In + 1, Jn] + gy[In, Jn] - gy[In, Jn + 1]) * g.rarea[In, Jn]
        delp[In, Jn] = delp[In, Jn] + (fx[In, Jn] - fx[In + 1, Jn] + fy[In, Jn] - fy[In, Jn + 1]) * g.rarea[In, Jn]
        pt[In, Jn] = pt[In, Jn] / delp[In, Jn]
    if vertical is not None:
        vertical.w[In, Jn] = vertical.w[In, Jn] / delp[In, Jn]
        if dw is not None:
            vertical.w[In, Jn] = vertical.w[In, Jn] + dw[In, Jn]
    # kinetic energy fluxes: B-grid contravariant components
    dt5, dt4 = 0.5 * dt, 0.25 * dt
    is2, ie1, js2, je1 = max(2, is_), min(npx - 1, ie + 1), max(2, js), min(npy - 1, je + 1)
    vb = _full((is_, js), (ie + 1, je + 1))
    ub = _full((is_, js), (ie + 1, je + 1))
    Ib = R(is_, ie + 1)
    if js == 1:
        vb[Ib, 1] = dt5 * (vt[Ib - 1, 1] + vt[Ib, 1])
    J2, I2 = R(js2, je1), R(is2, ie1)
    vb[I2, J2] = dt5 * (vc[I2 - 1, J2] + vc[I2, J2] - (uc[I2, J2 - 1] + uc[I2, J2]) * g.cosa[I2, J2]) * g.rsina[I2, J2]
    if is_ == 1:
        vb[1, J2] = dt4 * (-vt[-1, J2] + 3.0 * (vt[0, J2] + vt[1, J2]) - vt[2, J2])
    if ie + 1 == npx:
        n = npx
        vb[n, J2] = dt4 * (-vt[n - 2, J2] + 3.0 * (vt[n - 1, J2] + vt[n, J2]) - vt[n + 1, J2])
    if je + 1 == npy:
        vb[Ib, npy] = dt5 * (vt[Ib - 1, npy] + vt[Ib, npy])
    ub_flux = ytp_v(vb, v, hord_mt, g)
    Jb = R(js, je + 1)
    ke = _full((isd, jsd), (ied + 1, jed + 1))
    ke[Ib, Jb] = vb[Ib, Jb] * ub_flux[Ib, Jb]
    if is_ == 1:
        ub[1, Jb] = dt5 * (ut[1, Jb - 1] + ut[1, Jb])
    for j in range(js, je + 2):
        if j == 1 or j == npy:
            ub[I2, j] = dt4 * (-ut[I2, j - 2] + 3.0 * (ut[I2, j - 1] + ut[I2, j]) - ut[I2, j + 1])
        else:
            ub[I2, j] = dt5 * (uc[I2, j - 1] + uc[I2, j] - (vc[I2 - 1, j] + vc[I2, j]) * g.cosa[I2, j]) * g.rsina[I2, j]
    if ie + 1 == npx:
        ub[npx, Jb] = dt5 * (ut[npx, Jb - 1] + ut[npx, Jb])
    vb_flux = xtp_u(ub, u, hord_mt, g)
    ke[Ib, Jb] = 0.5 * (ke[Ib, Jb] + ub[Ib, Jb] * vb_flux[Ib, Jb])
    # KE at the 4 corners of the face
    dt6 = dt / 6.0
    if g.sw_corner:
        ke[1, 1] = dt6 * ((ut[1, 1] + ut[1, 0]) * u[1, 1] + (vt[1, 1] + vt[0, 1]) * v[1, 1]
                          + (ut[1, 1] + vt[1, 1]) * u[0, 1])  # fmt: skip
    if g.se_corner:
        i = npx
        ke[i, 1] = dt6 * ((ut[i, 1] + ut[i, 0]) * u[i - 1, 1] + (vt[i, 1] + vt[i - 1, 1]) * v[i, 1]
                          + (ut[i, 1] - vt[i - 1, 1]) * u[i, 1])  # fmt: skip
    if g.ne_corner:
        i, j = npx, npy
        ke[i, j] = dt6 * ((ut[i, j] + ut[i, j - 1]) * u[i - 1, j] + (vt[i, j] + vt[i - 1, j]) * v[i, j - 1]
                          + (ut[i, j - 1] + vt[i - 1, j]) * u[i, j])  # fmt: skip
    if g.nw_corner:
        j = npy
        ke[1, j] = dt6 * ((ut[1, j] + ut[1, j - 1]) * u[1, j] + (vt[1, j] + vt[0, j]) * v[1, j - 1]
                          + (ut[1, j - 1] - vt[1, j]) * u[0, j])  # fmt: skip
    # vorticity
    vt = _full((isd, jsd), (ied, jed + 1))
    vt[Id, R(jsd, jed + 1)] = u[Id, R(jsd, jed + 1)] * g.dx[Id, R(jsd, jed + 1)]
    ut = _full((isd, jsd), (ied + 1, jed))
    ut[R(isd, ied + 1), Jd] = v[R(isd, ied + 1), Jd] * g.dy[R(isd, ied + 1), Jd]
    wk = _full((isd, jsd), (ied, jed))
    wk[Id, Jd] = g.rarea[Id, Jd] * (vt[Id, Jd] - vt[Id, Jd + 1] - ut[Id, Jd] + ut[Id + 1, Jd])
    # divergence damping
    if nord == 0:
        _del2_divergence_damping(u, v, ua, va, uc, vc, ke, dt, dddmp, d2_bg, g)
    else:
        _high_order_divergence_damping(divg_d, uc, vc, ke, wk, dt, nord, dddmp, d2_bg, d4_bg, g)
    # vorticity transport
    vort = _full((isd, jsd), (ied, jed))
    vort[Id, Jd] = wk[Id, Jd] + g.f0[Id, Jd]
    fx, fy = fv_tp_2d(vort, crx, cry, hord_vt, xfx, yfx, ra_x, ra_y, g)
    Iu, Ju = R(is_, ie), R(js, je + 1)
    u[Iu, Ju] = vt[Iu, Ju] + ke[Iu, Ju] - ke[Iu + 1, Ju] + fy[Iu, Ju]
    Iv, Jv = R(is_, ie + 1), R(js, je)
    v[Iv, Jv] = ut[Iv, Jv] + ke[Iv, Jv] - ke[Iv, Jv + 1] - fx[Iv, Jv]
    # damping applied to relative vorticity (wk)
    if damp_v > DEL6_VT_FLUX_THRESHOLD:
        damp4 = damping_coefficient(damp_v, g.da_min_c, nord_v)
        del6_vt_flux(nord_v, npx, npy, damp4, wk, vort, ut, vt, g)
        u[Iu, Ju] = u[Iu, Ju] + vt[Iu, Ju]
        v[Iv, Jv] = v[Iv, Jv] - ut[Iv, Jv]
    return DGridOutputs(crx, cry, xfx, yfx, mass_fx, mass_fy, heat_source, diss_est)


def _del2_divergence_damping(u: FArray, v: FArray, ua: FArray, va: FArray, uc: FArray, vc: FArray,
                             ke: FArray, dt: float, dddmp: float, d2_bg: float, g: Any) -> None:  # fmt: skip
    """``d_sw``'s ``nord = 0`` branch: the corner divergence of the D-grid winds (with the
    A-grid winds for the skewed part) and ``ke += da_min_c * max(d2_bg, min(0.2, dddmp |D dt|)) D``."""
    b, npx, npy = g.bd, g.npx, g.npy
    is_, ie, js, je = b.is_, b.ie, b.js, b.je
    sin_sg = g.sin_sg
    is2, ie1 = max(2, is_), min(npx - 1, ie + 1)
    ptc = _full((b.isd, b.jsd), (b.ied, b.jed + 1))
    vort = _full((b.isd, b.jsd), (b.ied + 1, b.jed))
    I = R(is_ - 1, ie + 1)
    for j in range(js, je + 2):
        if j == 1 or j == npy:
            ptc[I, j] = np.where(vc[I, j] > 0, u[I, j] * g.dyc[I, j] * sin_sg[4][I, j - 1],
                                 u[I, j] * g.dyc[I, j] * sin_sg[2][I, j])  # fmt: skip
        else:
            ptc[I, j] = (u[I, j] - 0.5 * (va[I, j - 1] + va[I, j]) * g.cosa_v[I, j]) * g.dyc[I, j] * g.sina_v[I, j]
    J, I2 = R(js - 1, je + 1), R(is2, ie1)
    vort[I2, J] = (v[I2, J] - 0.5 * (ua[I2 - 1, J] + ua[I2, J]) * g.cosa_u[I2, J]) * g.dxc[I2, J] * g.sina_u[I2, J]
    if is_ == 1:
        vort[1, J] = np.where(uc[1, J] > 0, v[1, J] * g.dxc[1, J] * sin_sg[3][0, J],
                              v[1, J] * g.dxc[1, J] * sin_sg[1][1, J])  # fmt: skip
    if ie + 1 == npx:
        n = npx
        vort[n, J] = np.where(uc[n, J] > 0, v[n, J] * g.dxc[n, J] * sin_sg[3][n - 1, J],
                              v[n, J] * g.dxc[n, J] * sin_sg[1][n, J])  # fmt: skip
    delpc = _full((b.isd, b.jsd), (b.ied + 1, b.jed + 1))
    Ic, Jc = R(is_, ie + 1), R(js, je + 1)
    delpc[Ic, Jc] = vort[Ic, Jc - 1] - vort[Ic, Jc] + ptc[Ic - 1, Jc] - ptc[Ic, Jc]
    if g.sw_corner:
        delpc[1, 1] = delpc[1, 1] - vort[1, 0]
    if g.se_corner:
        delpc[npx, 1] = delpc[npx, 1] - vort[npx, 0]
    if g.ne_corner:
        delpc[npx, npy] = delpc[npx, npy] + vort[npx, npy]
    if g.nw_corner:
        delpc[1, npy] = delpc[1, npy] + vort[1, npy]
    delpc[Ic, Jc] = g.rarea_c[Ic, Jc] * delpc[Ic, Jc]
    damp = g.da_min_c * np.maximum(d2_bg, np.minimum(0.20, dddmp * np.abs(delpc[Ic, Jc] * dt)))
    ke[Ic, Jc] = ke[Ic, Jc] + damp * delpc[Ic, Jc]


def _high_order_divergence_damping(divg_d: FArray, uc: FArray, vc: FArray, ke: FArray, wk: FArray,
                                   dt: float, nord: int, dddmp: float, d2_bg: float, d4_bg: float,
                                   g: Any) -> None:  # fmt: skip
    """``d_sw``'s ``nord >= 1`` branch: ``nord`` Laplacians of the corner divergence
    (del(2 nord + 2)) with FV3's corner fills, plus the Smagorinsky-type del2 part."""
    b, npx, npy = g.bd, g.npx, g.npy
    is_, ie, js, je, isd, ied, jsd, jed = b.is_, b.ie, b.js, b.je, b.isd, b.ied, b.jsd, b.jed
    vort = _full((isd, jsd), (ied + 1, jed + 1))
    Ic, Jc = R(is_, ie + 1), R(js, je + 1)
    delpc = _full((isd, jsd), (ied + 1, jed + 1))
    delpc[Ic, Jc] = divg_d[Ic, Jc]
    n2 = nord + 1
    for n in range(1, nord + 1):
        nt = nord - n
        fill_c = nt != 0 and (g.sw_corner or g.se_corner or g.ne_corner or g.nw_corner)
        if fill_c:
            corners.fill_corners_bgrid(divg_d, corners.XDIR, npx, npy, b.ng, g)
        J, I = R(js - nt, je + 1 + nt), R(is_ - 1 - nt, ie + 1 + nt)
        vc[I, J] = (divg_d[I + 1, J] - divg_d[I, J]) * g.divg_u[I, J]
        if fill_c:
            corners.fill_corners_bgrid(divg_d, corners.YDIR, npx, npy, b.ng, g)
        J, I = R(js - 1 - nt, je + 1 + nt), R(is_ - nt, ie + 1 + nt)
        uc[I, J] = (divg_d[I, J + 1] - divg_d[I, J]) * g.divg_v[I, J]
        if fill_c:
            corners.fill_corners_dgrid(vc, uc, npx, npy, b.ng, -1.0, g)
        J, I = R(js - nt, je + 1 + nt), R(is_ - nt, ie + 1 + nt)
        divg_d[I, J] = uc[I, J - 1] - uc[I, J] + vc[I - 1, J] - vc[I, J]
        if g.sw_corner:
            divg_d[1, 1] = divg_d[1, 1] - uc[1, 0]
        if g.se_corner:
            divg_d[npx, 1] = divg_d[npx, 1] - uc[npx, 0]
        if g.ne_corner:
            divg_d[npx, npy] = divg_d[npx, npy] + uc[npx, npy]
        if g.nw_corner:
            divg_d[1, npy] = divg_d[1, npy] + uc[1, npy]
        divg_d[I, J] = divg_d[I, J] * g.rarea_c[I, J]
    if dddmp < 1.0e-5:
        vort.data[...] = 0.0
    else:
        corner_vort = a2b_ord4(wk, g)
        vort[Ic, Jc] = abs(dt) * np.sqrt(delpc[Ic, Jc] ** 2 + corner_vort[Ic, Jc] ** 2)
    base = g.da_min_c * d4_bg
    dd8 = base
    for _ in range(n2 - 1):  # Fortran's integer power: repeated multiplication
        dd8 = dd8 * base
    damp2 = g.da_min_c * np.maximum(d2_bg, np.minimum(0.20, dddmp * vort[Ic, Jc]))
    vort[Ic, Jc] = damp2 * delpc[Ic, Jc] + dd8 * divg_d[Ic, Jc]
    ke[Ic, Jc] = ke[Ic, Jc] + vort[Ic, Jc]

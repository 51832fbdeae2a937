"""FV3 ``a2b_edge.F90`` ``a2b_ord4``: cell-centre (A-grid) values interpolated to the cell
corners (B grid), 4th order, with FV3's tile-edge and cube-vertex treatment; transliterated
(cubed sphere, ``grid_type < 3``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from fv3core.grid.metric_terms import great_circle_dist as fv3_great_circle_dist
from tests.fv3core.transliteration.farray import FArray, R

R3 = 1.0 / 3.0
A1, A2 = 0.5625, -0.0625  # 4-point Lagrange
B1, B2 = 7.0 / 12.0, -1.0 / 12.0  # PPM volume mean
C1, C2 = 2.0 / 3.0, -1.0 / 6.0  # compact 4-point cubic


def great_circle_dist(q1: np.ndarray, q2: np.ndarray) -> float:
    """FV3 ``great_circle_dist``: the angle between two (lon, lat) points (radians), in the C
    library's arithmetic as the Fortran (:func:`fv3core.grid.metric_terms.great_circle_dist`)."""
    return float(fv3_great_circle_dist((q1[0], q1[1]), (q2[0], q2[1])))


def extrap_corner(p0: np.ndarray, p1: np.ndarray, p2: np.ndarray, q1: float, q2: float) -> float:
    """FV3 ``extrap_corner``: q at p0 extrapolated linearly along the great circle p2 -> p1."""
    x1 = great_circle_dist(p1, p0)
    x2 = great_circle_dist(p2, p0)
    return q1 + x1 / (x2 - x1) * (q1 - q2)


def a2b_ord4(qin: FArray, g: Any, replace: bool = False) -> FArray:
    """``qout`` on the corners (is:ie+1, js:je+1); ``replace`` copies it into ``qin`` there,
    as FV3's ``replace=.true.``."""
    b, npx, npy = g.bd, g.npx, g.npy
    is_, ie, js, je = b.is_, b.ie, b.js, b.je
    qout = FArray.full((b.isd, b.jsd), (b.ied + 1, b.jed + 1))
    qx = FArray.full((is_, b.jsd), (ie + 1, b.jed))
    qy = FArray.full((b.isd, js), (b.ied, je + 1))
    qxx = FArray.full((b.isd, b.jsd), (b.ied + 1, b.jed + 1))
    qyy = FArray.full((b.isd, b.jsd), (b.ied + 1, b.jed + 1))
    grid, agrid = g.grid, g.agrid  # (lon, lat) FArrays

    def pt(a: Any, i: int, j: int) -> np.ndarray:
        return np.array([a[0][i, j], a[1][i, j]])

    if g.sw_corner:
        p0 = pt(grid, 1, 1)
        qout[1, 1] = (extrap_corner(p0, pt(agrid, 1, 1), pt(agrid, 2, 2), qin[1, 1], qin[2, 2])
                      + extrap_corner(p0, pt(agrid, 0, 1), pt(agrid, -1, 2), qin[0, 1], qin[-1, 2])
                      + extrap_corner(p0, pt(agrid, 1, 0), pt(agrid, 2, -1), qin[1, 0], qin[2, -1])) * R3  # fmt: skip
    if g.se_corner:
        n = npx
        p0 = pt(grid, n, 1)
        qout[n, 1] = (extrap_corner(p0, pt(agrid, n - 1, 1), pt(agrid, n - 2, 2), qin[n - 1, 1], qin[n - 2, 2])
                      + extrap_corner(p0, pt(agrid, n - 1, 0), pt(agrid, n - 2, -1), qin[n - 1, 0], qin[n - 2, -1])
                      + extrap_corner(p0, pt(agrid, n, 1), pt(agrid, n + 1, 2), qin[n, 1], qin[n + 1, 2])) * R3  # fmt: skip
    if g.ne_corner:
        n, m = npx, npy
        p0 = pt(grid, n, m)
        qout[n, m] = (extrap_corner(p0, pt(agrid, n - 1, m - 1), pt(agrid, n - 2, m - 2), qin[n - 1, m - 1], qin[n - 2, m - 2])
                      + extrap_corner(p0, pt(agrid, n, m - 1), pt(agrid, n + 1, m - 2), qin[n, m - 1], qin[n + 1, m - 2])
                      + extrap_corner(p0, pt(agrid, n - 1, m), pt(agrid, n - 2, m + 1), qin[n - 1, m], qin[n - 2, m + 1])) * R3  # fmt: skip
    if g.nw_corner:
        m = npy
        p0 = pt(grid, 1, m)
        qout[1, m] = (extrap_corner(p0, pt(agrid, 1, m - 1), pt(agrid, 2, m - 2), qin[1, m - 1], qin[2, m - 2])
                      + extrap_corner(p0, pt(agrid, 0, m - 1), pt(agrid, -1, m - 2), qin[0, m - 1], qin[-1, m - 2])
                      + extrap_corner(p0, pt(agrid, 1, m), pt(agrid, 2, m + 1), qin[1, m], qin[2, m + 1])) * R3  # fmt: skip
    # x-interior
    J, I = R(max(1, js - 2), min(npy - 1, je + 2)), R(max(3, is_), min(npx - 2, ie + 1))
    qx[I, J] = B2 * (qin[I - 2, J] + qin[I + 1, J]) + B1 * (qin[I - 1, J] + qin[I, J])
    js1, je1, js2 = max(1, js - 1), min(npy - 1, je + 1), max(2, js)
    is1, ie1, is2 = max(1, is_ - 1), min(npx - 1, ie + 1), max(2, is_)
    dxa, dya = g.dxa, g.dya
    if is_ == 1:
        Jq = R(js1, je1)
        q2 = FArray.full((js1, 0), (je1, 0))
        q2[Jq, 0] = (qin[0, Jq] * dxa[1, Jq] + qin[1, Jq] * dxa[0, Jq]) / (dxa[0, Jq] + dxa[1, Jq])
        Jo = R(js2, je1)
        qout[1, Jo] = g.edge_w[Jo] * q2[Jo - 1, 0] + (1.0 - g.edge_w[Jo]) * q2[Jo, 0]
        g_in = dxa[2, J] / dxa[1, J]
        g_ou = dxa[-1, J] / dxa[0, J]
        qx[1, J] = 0.5 * (((2.0 + g_in) * qin[1, J] - qin[2, J]) / (1.0 + g_in)
                          + ((2.0 + g_ou) * qin[0, J] - qin[-1, J]) / (1.0 + g_ou))  # fmt: skip
        qx[2, J] = (3.0 * (g_in * qin[1, J] + qin[2, J]) - (g_in * qx[1, J] + qx[3, J])) / (2.0 + 2.0 * g_in)
    if ie + 1 == npx:
        n = npx
        Jq = R(js1, je1)
        q2 = FArray.full((js1, 0), (je1, 0))
        q2[Jq, 0] = (qin[n - 1, Jq] * dxa[n, Jq] + qin[n, Jq] * dxa[n - 1, Jq]) / (dxa[n - 1, Jq] + dxa[n, Jq])
        Jo = R(js2, je1)
        qout[n, Jo] = g.edge_e[Jo] * q2[Jo - 1, 0] + (1.0 - g.edge_e[Jo]) * q2[Jo, 0]
        g_in = dxa[n - 2, J] / dxa[n - 1, J]
        g_ou = dxa[n + 1, J] / dxa[n, J]
        qx[n, J] = 0.5 * (((2.0 + g_in) * qin[n - 1, J] - qin[n - 2, J]) / (1.0 + g_in)
                          + ((2.0 + g_ou) * qin[n, J] - qin[n + 1, J]) / (1.0 + g_ou))  # fmt: skip
        qx[n - 1, J] = (3.0 * (qin[n - 2, J] + g_in * qin[n - 1, J]) - (g_in * qx[n, J] + qx[n - 2, J])) / (2.0 + 2.0 * g_in)
    # y-interior
    J, I = R(max(3, js), min(npy - 2, je + 1)), R(max(1, is_ - 2), min(npx - 1, ie + 2))
    qy[I, J] = B2 * (qin[I, J - 2] + qin[I, J + 1]) + B1 * (qin[I, J - 1] + qin[I, J])
    I = R(max(1, is_ - 2), min(npx - 1, ie + 2))
    if js == 1:
        Iq = R(is1, ie1)
        q1 = FArray.full((is1, 0), (ie1, 0))
        q1[Iq, 0] = (qin[Iq, 0] * dya[Iq, 1] + qin[Iq, 1] * dya[Iq, 0]) / (dya[Iq, 0] + dya[Iq, 1])
        Io = R(is2, ie1)
        qout[Io, 1] = g.edge_s[Io] * q1[Io - 1, 0] + (1.0 - g.edge_s[Io]) * q1[Io, 0]
        g_in = dya[I, 2] / dya[I, 1]
        g_ou = dya[I, -1] / dya[I, 0]
        qy[I, 1] = 0.5 * (((2.0 + g_in) * qin[I, 1] - qin[I, 2]) / (1.0 + g_in)
                          + ((2.0 + g_ou) * qin[I, 0] - qin[I, -1]) / (1.0 + g_ou))  # fmt: skip
        qy[I, 2] = (3.0 * (g_in * qin[I, 1] + qin[I, 2]) - (g_in * qy[I, 1] + qy[I, 3])) / (2.0 + 2.0 * g_in)
    if je + 1 == npy:
        m = npy
        Iq = R(is1, ie1)
        q1 = FArray.full((is1, 0), (ie1, 0))
        q1[Iq, 0] = (qin[Iq, m - 1] * dya[Iq, m] + qin[Iq, m] * dya[Iq, m - 1]) / (dya[Iq, m - 1] + dya[Iq, m])
        Io = R(is2, ie1)
        qout[Io, m] = g.edge_n[Io] * q1[Io - 1, 0] + (1.0 - g.edge_n[Io]) * q1[Io, 0]
        g_in = dya[I, m - 2] / dya[I, m - 1]
        g_ou = dya[I, m + 1] / dya[I, m]
        qy[I, m] = 0.5 * (((2.0 + g_in) * qin[I, m - 1] - qin[I, m - 2]) / (1.0 + g_in)
                          + ((2.0 + g_ou) * qin[I, m] - qin[I, m + 1]) / (1.0 + g_ou))  # fmt: skip
        qy[I, m - 1] = (3.0 * (qin[I, m - 2] + g_in * qin[I, m - 1]) - (g_in * qy[I, m] + qy[I, m - 2])) / (2.0 + 2.0 * g_in)
    # combine
    J, I = R(max(3, js), min(npy - 2, je + 1)), R(max(2, is_), min(npx - 1, ie + 1))
    qxx[I, J] = A2 * (qx[I, J - 2] + qx[I, J + 1]) + A1 * (qx[I, J - 1] + qx[I, J])
    I = R(max(2, is_), min(npx - 1, ie + 1))
    if js == 1:
        qxx[I, 2] = C1 * (qx[I, 1] + qx[I, 2]) + C2 * (qout[I, 1] + qxx[I, 3])
    if je + 1 == npy:
        m = npy
        qxx[I, m - 1] = C1 * (qx[I, m - 2] + qx[I, m - 1]) + C2 * (qout[I, m] + qxx[I, m - 2])
    J = R(max(2, js), min(npy - 1, je + 1))
    Ii = R(max(3, is_), min(npx - 2, ie + 1))
    qyy[Ii, J] = A2 * (qy[Ii - 2, J] + qy[Ii + 1, J]) + A1 * (qy[Ii - 1, J] + qy[Ii, J])
    if is_ == 1:
        qyy[2, J] = C1 * (qy[1, J] + qy[2, J]) + C2 * (qout[1, J] + qyy[3, J])
    if ie + 1 == npx:
        n = npx
        qyy[n - 1, J] = C1 * (qy[n - 2, J] + qy[n - 1, J]) + C2 * (qout[n, J] + qyy[n - 2, J])
    qout[I, J] = 0.5 * (qxx[I, J] + qyy[I, J])
    if replace:
        I, J = R(is_, ie + 1), R(js, je + 1)
        qin[I, J] = qout[I, J]
    return qout

"""FV3's ``cubed_to_latlon``: A-grid east/north winds from the D-grid winds (fv_grid_utils.F90).

``c2l_ord4`` (``c2l_ord = 4``, what FV3 uses for its output and diagnostics) interpolates the
D-grid covariant winds to the cell centres with the 4-point Lagrange formula
``-1/8 (u[j-1] + u[j+2]) + 9/8 (u[j] + u[j+1])`` in the interior of a tile and with FV3's 2-point
"vorticity-conserving" mean ``2 (u dx + u' dx') / (dx + dx')`` in the first and last row and column
of cells next to a tile edge (the edge does not continue smoothly into the neighbour tile);
``c2l_ord2`` uses the 2-point mean everywhere.  Both then rotate the covariant centre winds to
east/north with the ``a11, a12, a21, a22`` of :class:`~fv3core.grid.metric_terms.MetricTerms`
(``init_cubed_to_latlon``).  Same arithmetic, in the same order, as the Fortran.

Arrays are one rank's, with halo, as in :mod:`fv3core.grid.metric_terms`: ``u`` on y-faces
``(nx+2h, ny+1+2h[, nz])``, ``v`` on x-faces ``(nx+1+2h, ny+2h[, nz])``; ``ua``, ``va`` come back on
cells ``(nx+2h, ny+2h[, nz])`` with the compute domain set (``do_halo``: one halo point more) and NaN
elsewhere.  ``c2l_ord4`` reads only compute-domain winds on ranks that reach the tile edges on
both sides (one tile per rank); elsewhere it reads one or two halo points, which must hold the
neighbour's values (FV3 updates them first, ``mode = 1``).
"""

from __future__ import annotations

import numpy as np

from fv3core.errors import FV3ConfigError
from fv3core.grid.metric_terms import MetricTerms

#: FV3's 4-point Lagrange weights in c2l_ord4
C1 = 1.125
C2 = -0.125


def _expand(a: np.ndarray, like: np.ndarray) -> np.ndarray:
    return a.reshape(a.shape + (1,) * (like.ndim - 2))


def _check(u: np.ndarray, v: np.ndarray, metric: MetricTerms) -> None:
    ni, nj = metric.area.shape
    if u.shape[:2] != (ni, nj + 1) or v.shape[:2] != (ni + 1, nj):
        raise FV3ConfigError(
            f"cubed_to_latlon: D-grid winds must be u {(ni, nj + 1)} (y-faces) and v "
            f"{(ni + 1, nj)} (x-faces) on this rank, got u {u.shape[:2]} and v {v.shape[:2]}"
        )


def _rotate(
    utmp: np.ndarray, vtmp: np.ndarray, metric: MetricTerms, si: slice, sj: slice
) -> tuple[np.ndarray, np.ndarray]:
    like = utmp
    a11, a12 = _expand(metric.a11[si, sj], like), _expand(metric.a12[si, sj], like)
    a21, a22 = _expand(metric.a21[si, sj], like), _expand(metric.a22[si, sj], like)
    return a11 * utmp + a12 * vtmp, a21 * utmp + a22 * vtmp


def c2l_ord4(u: np.ndarray, v: np.ndarray, metric: MetricTerms) -> tuple[np.ndarray, np.ndarray]:
    """FV3 ``c2l_ord4`` (cubed sphere, ``grid_type < 4``): A-grid east/north winds (m/s)."""
    _check(u, v, metric)
    spec, h = metric.spec, metric.n_halo
    nx, ny, n = spec.nx, spec.ny, spec.resolution
    npx = npy = n + 1
    # Fortran (tile-global) index f of a cell/face in this rank's arrays: p = f - off
    offi, offj = spec.i0 + 1 - h, spec.j0 + 1 - h
    is_, ie, js, je = spec.i0 + 1, spec.i1, spec.j0 + 1, spec.j1

    def I(a: int, b: int) -> slice:  # noqa: E743 - Fortran range a..b in i
        return slice(a - offi, b - offi + 1)

    def J(a: int, b: int) -> slice:
        return slice(a - offj, b - offj + 1)

    dx = _expand(metric.dx, u)
    dy = _expand(metric.dy, v)
    shape = (nx + 2 * h, ny + 2 * h) + u.shape[2:]
    utmp = np.full(shape, np.nan)
    vtmp = np.full(shape, np.nan)
    i0, i1 = max(2, is_), min(npx - 2, ie)
    j0, j1 = max(2, js), min(npy - 2, je)
    if i0 <= i1 and j0 <= j1:
        ii, jj = I(i0, i1), J(j0, j1)
        utmp[ii, jj] = C2 * (u[ii, J(j0 - 1, j1 - 1)] + u[ii, J(j0 + 2, j1 + 2)]) + C1 * (
            u[ii, jj] + u[ii, J(j0 + 1, j1 + 1)]
        )
        vtmp[ii, jj] = C2 * (v[I(i0 - 1, i1 - 1), jj] + v[I(i0 + 2, i1 + 2), jj]) + C1 * (
            v[ii, jj] + v[I(i0 + 1, i1 + 1), jj]
        )
    ic = I(is_, ie)
    for j, on_edge in ((1, js == 1), (npy - 1, je + 1 == npy)):
        if not on_edge:
            continue
        q = J(j, j)
        q1 = J(j + 1, j + 1)
        wv = v[I(is_, ie + 1), q] * dy[I(is_, ie + 1), q]
        vtmp[ic, q] = 2.0 * (wv[:-1] + wv[1:]) / (dy[ic, q] + dy[I(is_ + 1, ie + 1), q])
        utmp[ic, q] = (
            2.0 * (u[ic, q] * dx[ic, q] + u[ic, q1] * dx[ic, q1]) / (dx[ic, q] + dx[ic, q1])
        )
    jc = J(js, je)
    for i, on_edge in ((1, is_ == 1), (npx - 1, ie + 1 == npx)):
        if not on_edge:
            continue
        p, p1 = I(i, i), I(i + 1, i + 1)
        wv0 = v[p, jc] * dy[p, jc]
        wv1 = v[p1, jc] * dy[p1, jc]
        wu = u[p, J(js, je + 1)] * dx[p, J(js, je + 1)]
        utmp[p, jc] = 2.0 * (wu[:, :-1] + wu[:, 1:]) / (dx[p, jc] + dx[p, J(js + 1, je + 1)])
        vtmp[p, jc] = 2.0 * (wv0 + wv1) / (dy[p, jc] + dy[p1, jc])
    ua = np.full(shape, np.nan)
    va = np.full(shape, np.nan)
    cs_i, cs_j = slice(h, h + nx), slice(h, h + ny)
    ua[cs_i, cs_j], va[cs_i, cs_j] = _rotate(utmp[cs_i, cs_j], vtmp[cs_i, cs_j], metric, cs_i, cs_j)
    return ua, va


def c2l_ord2(
    u: np.ndarray, v: np.ndarray, metric: MetricTerms, *, do_halo: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """FV3 ``c2l_ord2`` (cubed sphere): A-grid east/north winds (m/s) from the 2-point covariant
    means; ``do_halo`` also on the first halo ring (which reads halo winds)."""
    _check(u, v, metric)
    h, nx, ny = metric.n_halo, metric.spec.nx, metric.spec.ny
    e = 1 if do_halo else 0
    si, sj = slice(h - e, h + nx + e), slice(h - e, h + ny + e)
    si1, sj1 = slice(h - e, h + nx + e + 1), slice(h - e, h + ny + e + 1)
    dx = _expand(metric.dx, u)
    dy = _expand(metric.dy, v)
    wu = u[si, sj1] * dx[si, sj1]
    wv = v[si1, sj] * dy[si1, sj]
    u1 = 2.0 * (wu[:, :-1] + wu[:, 1:]) / (dx[si, sj1][:, :-1] + dx[si, sj1][:, 1:])
    v1 = 2.0 * (wv[:-1] + wv[1:]) / (dy[si1, sj][:-1] + dy[si1, sj][1:])
    shape = (nx + 2 * h, ny + 2 * h) + u.shape[2:]
    ua = np.full(shape, np.nan)
    va = np.full(shape, np.nan)
    ua[si, sj], va[si, sj] = _rotate(u1, v1, metric, si, sj)
    return ua, va


def cubed_to_latlon(
    u: np.ndarray, v: np.ndarray, metric: MetricTerms, *, c2l_ord: int = 4
) -> tuple[np.ndarray, np.ndarray]:
    """FV3 ``cubed_to_latlon`` for the cubed sphere: ``c2l_ord = 2`` -> :func:`c2l_ord2`, else
    :func:`c2l_ord4` (FV3's test is ``c2l_ord == 2``)."""
    if c2l_ord == 2:
        return c2l_ord2(u, v, metric)
    return c2l_ord4(u, v, metric)

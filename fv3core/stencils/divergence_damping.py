"""FV3 ``nord = 1`` divergence damping: a del4 operator on the divergence at cell corners.

FV3 (``d_sw`` / pace ``DivergenceDamping``) damps the horizontal divergence D of the D-grid
winds with ``nord + 1`` Laplacians: D at the corners (``divergence_corner``), a Laplacian of
D on the corner (B-) grid with corner fills, and the result, scaled by
``(d4_bg * da_min_c)**(nord + 1)``, added to the corner potential that drives the D-grid wind
update.  Here: D at the corners is the dual-cell divergence of :func:`corner_potential`; its
ring of halo corners comes from a corner-point halo exchange; the corner Laplacian is the
flux form over the dual cell

    L(D)_c = (1 / A_c) * sum over the edges e of the corner of  (D_nb - D_c) * w_e,
    w_e = (dual-face length * cos(edge tangent, dual-face normal)) / edge length,

and the corner potential gets ``+ nu4 * L(D)`` with ``nu4 = (d4_bg * da_min)**2 / dt``
(m^4/s), so that dD/dt = -nu4 * del^4 D: a divergent mode of total wavenumber l decays at the
rate nu4 * (l (l + 1) / R^2)^2.  At a cube vertex the corner has three edges: the third edge
(to the point shared by the two halo tiles) appears twice in index space; its weight sits on
the x-side copy and the y-side copy has weight 0 (FV3 removes the duplicate term the same way
after ``fill_corners``).  All of this lives in the weights, so the stencil has no special
cases.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import PARALLEL, computation, interval

from fv3core.grid.metric import MetricTerms

FloatField = gtscript.Field[np.float64]
FloatFieldIJ = gtscript.Field[gtscript.IJ, np.float64]



def corner_laplacian_damping(
    div: FloatField,
    a_x: FloatFieldIJ,
    b0_x: FloatFieldIJ,
    b1_x: FloatFieldIJ,
    a_y: FloatFieldIJ,
    b0_y: FloatFieldIJ,
    b1_y: FloatFieldIJ,
    rarea_c: FloatFieldIJ,
    nu4: float,
    phib: FloatField,
):
    """phib += nu4 * L(div): the flux-form Laplacian of the corner divergence over the dual
    cell.  The gradient flux through the dual face crossing an edge is the along-edge
    difference (weight ``a``) plus the non-orthogonal correction from the differences along
    the crossing grid lines at the edge's two end corners (``b0``, ``b1``); ``_x`` edges run
    toward +i (u-edges), ``_y`` edges toward +j (v-edges)."""
    with computation(PARALLEL), interval(...):
        fx = (a_x * (div[1, 0, 0] - div) + b0_x * (div[0, 1, 0] - div[0, -1, 0])
              + b1_x * (div[1, 1, 0] - div[1, -1, 0]))  # fmt: skip
        fy = (a_y * (div[0, 1, 0] - div) + b0_y * (div[1, 0, 0] - div[-1, 0, 0])
              + b1_y * (div[1, 1, 0] - div[-1, 1, 0]))  # fmt: skip
        phib = phib + nu4 * rarea_c * (fx - fx[-1, 0, 0] + fy - fy[0, -1, 0])


def _unit(a: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.nan_to_num(a / np.linalg.norm(a, axis=-1, keepdims=True))


def _edge_weights(metric: MetricTerms, axis: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(a, b0, b1) of the edges along ``axis`` (0: u-edges (i, j) -> (i+1, j), 1: v-edges
    (i, j) -> (i, j+1)), in the corner shape.  The dual face crossing the edge joins the two
    cell centres beside it (length L, unit normal n along the edge's direction); with the
    edge's unit tangent t, the crossing lines' mean direction s, n = alpha t + beta s in the
    tangent plane, the flux L (alpha dD/dt + beta dD/ds) uses dD/dt = (D_1 - D_0) / |edge| and
    dD/ds = mean over the two end corners of the centred difference along the crossing line."""
    p, c = metric.xyz, metric.xyz_agrid
    sw = (lambda a: a) if axis == 0 else (lambda a: np.swapaxes(a, 0, 1))
    p, c = sw(p), sw(c)  # now the edge runs along the first index
    ni, nj = p.shape[:2]
    a, b0, b1 = (np.zeros((ni, nj)) for _ in range(3))
    i, j = np.s_[: ni - 1], np.s_[1 : nj - 1]
    p0, p1 = p[:-1, 1:-1], p[1:, 1:-1]
    mid = _unit(p0 + p1)
    t = _unit(p1 - p0)
    cross0 = p[:-1, 2:] - p[:-1, :-2]  # the crossing line through each end corner
    cross1 = p[1:, 2:] - p[1:, :-2]
    s = _unit(_unit(cross0) + _unit(cross1))
    g = c[:, 1:] - c[:, :-1]  # cell (k, j-1) -> (k, j): the dual face across edge (k, j)
    n = _unit(np.cross(g, mid))
    n = np.where(np.sum(n * t, -1, keepdims=True) < 0, -n, n)
    length = np.arccos(np.clip(np.sum(c[:, :-1] * c[:, 1:], -1), -1.0, 1.0))
    edge = np.arccos(np.clip(np.sum(p0 * p1, -1), -1.0, 1.0))
    len0 = np.arccos(np.clip(np.sum(p[:-1, 2:] * p[:-1, :-2], -1), -1.0, 1.0))
    len1 = np.arccos(np.clip(np.sum(p[1:, 2:] * p[1:, :-2], -1), -1.0, 1.0))
    tt, ts, ss = np.ones(t.shape[:-1]), np.sum(t * s, -1), np.ones(t.shape[:-1])
    nt, ns = np.sum(n * t, -1), np.sum(n * s, -1)
    det = tt * ss - ts * ts
    ok = (det > 0.05) & (edge > 0) & (len0 > 0) & (len1 > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        alpha = np.where(ok, (nt * ss - ns * ts) / np.where(ok, det, 1.0), 0.0)
        beta = np.where(ok, (ns * tt - nt * ts) / np.where(ok, det, 1.0), 0.0)
        a[i, j] = np.where(ok, length * alpha / edge, 0.0)
        b0[i, j] = np.where(ok, 0.5 * length * beta / len0, 0.0)
        b1[i, j] = np.where(ok, 0.5 * length * beta / len1, 0.0)
    return tuple(np.nan_to_num(sw(x)) for x in (a, b0, b1))  # type: ignore[return-value]


def corner_laplacian_weights(
    metric: MetricTerms, vertices: list[tuple[int, int, int, int]]
) -> dict[str, np.ndarray]:
    """The edge weights ``a_x, b0_x, b1_x, a_y, b0_y, b1_y`` of
    :func:`corner_laplacian_damping` (corner shape).  ``vertices``: the cube vertices of this
    subdomain ((corner i, corner j, missing cell i, missing cell j)); there the third edge
    keeps only its along-edge weight, on the x-side copy, and the y-side copy gets 0 (their
    crossing lines would reach the missing corner beyond the vertex)."""
    a_x, b0_x, b1_x = _edge_weights(metric, 0)
    a_y, b0_y, b1_y = _edge_weights(metric, 1)
    xyz, c = metric.xyz, metric.xyz_agrid
    for ci, cj, bi, bj in vertices:
        west, south = ci == bi + 1, cj == bj + 1
        si, sj = (1 if west else -1), (1 if south else -1)
        b, cc = (bi, bj + sj), (bi + si, bj)  # the halo cells on both sides of the third edge
        q = (ci - 1, cj) if west else (ci + 1, cj)  # the point shared by the two halo tiles
        edge = np.arccos(np.clip(xyz[ci, cj] @ xyz[q], -1.0, 1.0))
        face = np.arccos(np.clip(c[b] @ c[cc], -1.0, 1.0))
        ex = (ci - 1, cj) if west else (ci, cj)
        ey = (ci, cj - 1) if south else (ci, cj)
        a_x[ex], b0_x[ex], b1_x[ex] = face / edge, 0.0, 0.0
        a_y[ey], b0_y[ey], b1_y[ey] = 0.0, 0.0, 0.0
    return {"a_x": a_x, "b0_x": b0_x, "b1_x": b1_x, "a_y": a_y, "b0_y": b0_y, "b1_y": b1_y}


def corner_laplacian_numpy(div: np.ndarray, w: dict[str, np.ndarray], rarea_c: np.ndarray) -> np.ndarray:
    """NumPy reference of the corner Laplacian on the corners ``[2:-2, 2:-2]``."""
    d = div

    def sh(a: np.ndarray, di: int, dj: int) -> np.ndarray:
        return a[1 + di : a.shape[0] - 1 + di, 1 + dj : a.shape[1] - 1 + dj]

    fx = (sh(w["a_x"], 0, 0) * (sh(d, 1, 0) - sh(d, 0, 0)) + sh(w["b0_x"], 0, 0) * (sh(d, 0, 1) - sh(d, 0, -1))
          + sh(w["b1_x"], 0, 0) * (sh(d, 1, 1) - sh(d, 1, -1)))  # fmt: skip
    fy = (sh(w["a_y"], 0, 0) * (sh(d, 0, 1) - sh(d, 0, 0)) + sh(w["b0_y"], 0, 0) * (sh(d, 1, 0) - sh(d, -1, 0))
          + sh(w["b1_y"], 0, 0) * (sh(d, 1, 1) - sh(d, -1, 1)))  # fmt: skip
    return rarea_c[2:-2, 2:-2] * (fx[1:-1, 1:-1] - fx[:-2, 1:-1] + fy[1:-1, 1:-1] - fy[1:-1, :-2])


def min_cell_area(resolution: int, radius: float) -> float:
    """FV3's ``da_min``: the smallest cell area of the sphere, that of the cells at the cube
    vertices (the same on every rank and tile, so results stay decomposition-independent)."""
    from fv3core.grid.metric import SubdomainSpec

    corner = MetricTerms.build(SubdomainSpec(resolution, 0, 0, 1, 0, 1), radius=radius)
    return float(corner.interior_area.min())


def del4_coefficient(d4_bg: float, resolution: int, radius: float, dt: float) -> float:
    """nu4 = (d4_bg * da_min)^2 / dt (m^4/s), FV3's ``(d4_bg * da_min_c)**2`` scaling: with the
    smallest cell area the explicit step stays stable at the cube vertices, where the cells
    are smallest (the sphere's mean area there made C48 TC2 blow up with d4_bg = 0.12)."""
    return float((d4_bg * min_cell_area(resolution, radius)) ** 2 / dt)


class Del4DivergenceDamping:
    """FV3's ``nord = 1`` divergence damping (the del4 part of ``divergence_damping`` in
    ``d_sw``): ``phib += nu4 * L(div)`` on the compute corners, bound once to the corner
    divergence ``div`` (whose halo ring must be filled) and the corner potential ``phib``.
    Namelist key ``d4_bg``: FV3's dimensionless background del4 coefficient."""

    def __init__(
        self,
        factory: Any,
        metric: MetricTerms,
        vertices: list[Any],
        d4_bg: float,
        dt: float,
        div: Any,
        phib: Any,
        rarea_c: Any,
    ) -> None:
        from stencils.dims import CORNER_DIMS
        from stencils.storage import from_numpy

        self.nu4 = del4_coefficient(d4_bg, metric.spec.resolution, metric.radius, dt)
        self.weights = corner_laplacian_weights(metric, vertices)
        weights = {k: from_numpy(np.ascontiguousarray(w), factory.backend)
                   for k, w in self.weights.items()}  # fmt: skip
        self.launch = factory.from_dims(corner_laplacian_damping, CORNER_DIMS).bind(
            div=div, **weights, rarea_c=rarea_c, nu4=self.nu4, phib=phib)

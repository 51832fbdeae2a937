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

and the corner potential gets ``+ nu4 * L(D)`` with ``nu4 = (d4_bg * mean cell area)**2 / dt``
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

#: largest d4_bg accepted: the explicit del4 step is stable for nu4 * dt * max|eig|^2 < 2,
#: max|eig| ~ 8 / dx^2 on the corner grid, i.e. d4_bg < 1 / sqrt(32) ~ 0.177
MAX_D4_BG = 0.16


def corner_laplacian_damping(
    div: FloatField,
    w_x: FloatFieldIJ,
    w_y: FloatFieldIJ,
    rarea_c: FloatFieldIJ,
    nu4: float,
    phib: FloatField,
):
    """phib += nu4 * L(div): the flux-form Laplacian of the corner divergence over the dual
    cell (``w_x`` on the edges toward +i, ``w_y`` toward +j; see the module docstring)."""
    with computation(PARALLEL), interval(...):
        lap = rarea_c * (
            (div[1, 0, 0] - div) * w_x
            - (div - div[-1, 0, 0]) * w_x[-1, 0]
            + (div[0, 1, 0] - div) * w_y
            - (div - div[0, -1, 0]) * w_y[0, -1]
        )
        phib = phib + nu4 * lap


def corner_laplacian_weights(
    metric: MetricTerms, dual: dict[str, np.ndarray], vertices: list[tuple[int, int, int, int]]
) -> tuple[np.ndarray, np.ndarray]:
    """Edge weights (``w_x`` on u-edges (corners i -> i+1), ``w_y`` on v-edges (j -> j+1)) of
    :func:`corner_laplacian_damping`, padded to the corner shape.  ``dual`` are the dual-face
    coefficients of :func:`fv3core.dynamics.dual_face_coefficients` (dual-face length times
    the cosine between the edge tangent and the dual-face normal); ``vertices`` the cube
    vertices of this subdomain ((corner i, corner j, missing cell i, missing cell j))."""
    shape = metric.xyz.shape[:2]
    w_x, w_y = np.zeros(shape), np.zeros(shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        wx = np.where(metric.dx > 0, dual["du_y"] / metric.dx, 0.0)
        wy = np.where(metric.dy > 0, dual["dv_x"] / metric.dy, 0.0)
    w_x[: wx.shape[0], : wx.shape[1]] = np.nan_to_num(wx)
    w_y[: wy.shape[0], : wy.shape[1]] = np.nan_to_num(wy)
    xyz, c = metric.xyz, metric.xyz_agrid
    for ci, cj, bi, bj in vertices:
        west, south = ci == bi + 1, cj == bj + 1
        si, sj = (1 if west else -1), (1 if south else -1)
        b, cc = (bi, bj + sj), (bi + si, bj)  # the halo cells on both sides of the third edge
        q = (ci - 1, cj) if west else (ci + 1, cj)  # the point shared by the two halo tiles
        edge = np.arccos(np.clip(xyz[ci, cj] @ xyz[q], -1.0, 1.0))
        face = np.arccos(np.clip(c[b] @ c[cc], -1.0, 1.0))
        w_x[(ci - 1, cj) if west else (ci, cj)] = face / edge
        w_y[(ci, cj - 1) if south else (ci, cj)] = 0.0
    return w_x, w_y


def corner_laplacian_numpy(
    div: np.ndarray, w_x: np.ndarray, w_y: np.ndarray, rarea_c: np.ndarray
) -> np.ndarray:
    """NumPy reference of the corner Laplacian on the inner corners ``[1:-1, 1:-1]``."""
    d = div
    return rarea_c[1:-1, 1:-1] * (
        (d[2:, 1:-1] - d[1:-1, 1:-1]) * w_x[1:-1, 1:-1]
        - (d[1:-1, 1:-1] - d[:-2, 1:-1]) * w_x[:-2, 1:-1]
        + (d[1:-1, 2:] - d[1:-1, 1:-1]) * w_y[1:-1, 1:-1]
        - (d[1:-1, 1:-1] - d[1:-1, :-2]) * w_y[1:-1, :-2]
    )


def del4_coefficient(d4_bg: float, resolution: int, radius: float, dt: float) -> float:
    """nu4 = (d4_bg * mean cell area)^2 / dt (m^4/s); the mean area of the whole sphere, so
    every rank uses the same value (decomposition-independent results)."""
    mean_area = 4.0 * np.pi * radius**2 / (6 * resolution * resolution)
    return float((d4_bg * mean_area) ** 2 / dt)


def storages(w_x: np.ndarray, w_y: np.ndarray, backend: str) -> tuple[Any, Any]:
    from stencils.storage import from_numpy

    return from_numpy(np.ascontiguousarray(w_x), backend), from_numpy(np.ascontiguousarray(w_y), backend)

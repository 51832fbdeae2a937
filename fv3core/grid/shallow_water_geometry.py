"""Spherical geometry of the shallow-water C-D grid scheme, per rank (NumPy, computed once).

* A-grid winds from D-grid winds: :func:`agrid_coefficients` (least-squares tangent vector);
* C-grid faces: :class:`FaceFrames` (normal, interpolation weights and along-face derivative
  of cell-centre values at the face midpoint), for the faces crossed along either direction;
* dual cells around corners: :func:`corner_areas`, :func:`corner_weights` (interpolation from
  the four cells) and :class:`DualFaces` (flux coefficients of the dual-cell divergence);
* the cube vertices a subdomain touches (:func:`cube_vertices`), where one halo cell does not
  exist.

Arrays follow :mod:`fv3core.grid.metric` (indices [i, j], halo included).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from fv3core.grid.metric import MetricTerms, SubdomainSpec
from stencils.directions import Direction


class CubeVertex(NamedTuple):
    """A cube vertex at corner point (ci, cj) of a subdomain; (bi, bj) is the halo cell beyond
    it, which does not exist (three tiles meet there)."""

    ci: int
    cj: int
    bi: int
    bj: int


def cube_vertices(spec: SubdomainSpec) -> list[CubeVertex]:
    """The cube vertices this subdomain touches."""
    h = spec.n_halo
    out = []
    for on_x, ci, bi in ((spec.on_west, h, h - 1), (spec.on_east, h + spec.nx, h + spec.nx)):
        for on_y, cj, bj in ((spec.on_south, h, h - 1), (spec.on_north, h + spec.ny, h + spec.ny)):
            if on_x and on_y:
                out.append(CubeVertex(ci, cj, bi, bj))
    return out


def missing_cells(spec: SubdomainSpec, shape: tuple[int, int]) -> np.ndarray:
    """True on the halo cells beyond the cube vertices this subdomain touches (no such cells)."""
    h = spec.n_halo
    out = np.zeros(shape, dtype=bool)
    for on_x, xs in ((spec.on_west, slice(0, h)), (spec.on_east, slice(h + spec.nx, None))):
        for on_y, ys in ((spec.on_south, slice(0, h)), (spec.on_north, slice(h + spec.ny, None))):
            if on_x and on_y:
                out[xs, ys] = True
    return out


def safe_sin(sin: np.ndarray) -> np.ndarray:
    """Grid-angle sines with the degenerate halo cell beyond a cube vertex (sin = 0: no such
    cell exists) set to 1, so divisions stay finite there."""
    return np.where(sin < 0.05, 1.0, sin)


def safe_reciprocal(a: np.ndarray) -> np.ndarray:
    """1 / a, with 0 where a is degenerate (< 5% of its median: halo points beyond a cube
    vertex, where no cell exists)."""
    ok = a > 0.05 * np.median(a)
    return np.where(ok, 1.0 / np.where(ok, a, 1.0), 0.0)


# -- A-grid winds ----------------------------------------------------------------------------
def agrid_coefficients(metric: MetricTerms) -> np.ndarray:
    """Per cell, the 3-D vectors c_s, c_n, c_w, c_e (4, cells..., 3) with which the A-grid wind
    is u_s c_s + u_n c_n + v_w c_w + v_e c_e: the least-squares tangent vector whose
    components along the four edges' midpoint tangents are the D-grid edge winds."""
    p, r = metric.xyz, metric.xyz_agrid
    tangents = [p[1:, :-1] - p[:-1, :-1], p[1:, 1:] - p[:-1, 1:],  # south, north edges (u)
                p[:-1, 1:] - p[:-1, :-1], p[1:, 1:] - p[1:, :-1]]  # west, east edges (v)  # fmt: skip
    b1 = metric.ec1 - np.sum(metric.ec1 * r, -1, keepdims=True) * r
    b1 /= np.linalg.norm(b1, axis=-1, keepdims=True)
    b2 = np.cross(r, b1)
    a = np.empty(r.shape[:2] + (4, 2))
    for k, t in enumerate(tangents):
        t = t / np.linalg.norm(t, axis=-1, keepdims=True)
        a[..., k, 0], a[..., k, 1] = np.sum(t * b1, -1), np.sum(t * b2, -1)
    with np.errstate(all="ignore"):
        pinv = np.linalg.pinv(a)  # (..., 2, 4)
    pinv = np.nan_to_num(pinv)
    return np.stack([pinv[..., 0, k, None] * b1 + pinv[..., 1, k, None] * b2 for k in range(4)])


def agrid_winds_numpy(metric: MetricTerms, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """3-D A-grid winds (cells, 3) from D-grid winds: the formula of the ``d2a2c`` stencil."""
    c = agrid_coefficients(metric)
    return (u[:, :-1, None] * c[0] + u[:, 1:, None] * c[1] + v[:-1, :, None] * c[2]
            + v[1:, :, None] * c[3])  # fmt: skip


# -- C-grid faces ----------------------------------------------------------------------------
def _index(d: Direction, along: slice, across: slice = slice(None)) -> tuple[slice, slice]:
    """An index that takes ``along`` on ``d``'s axis and ``across`` on the other one."""
    return (along, across) if d.axis == 0 else (across, along)


def _to_x_layout(d: Direction, a: np.ndarray) -> np.ndarray:
    """``a`` with the faces' rows along axis 1, as x-faces have them (a view)."""
    return a if d.axis == 0 else np.swapaxes(a, 0, 1)


@dataclass(frozen=True)
class FaceFrames:
    """Geometry of the faces crossed along one direction (face shape): unit normal ``n``
    (3 components last), ``q = n x k``; the centre-to-centre direction g's components on the
    face direction (``gt``) and the reciprocal on n (``rgn``, 0 where g is nearly along the face);
    the interpolation of cell-centre values to the face midpoint along the centre line
    (``weight``) and along the face between the neighbouring rows (``shift_p``, ``shift_m``);
    the weights ``tan`` (3, ...) of the along-face derivative from the rows' sums of the two
    cells (centred, or one-sided next to a cube vertex)."""

    n: np.ndarray
    q: np.ndarray
    gt: np.ndarray
    rgn: np.ndarray
    weight: np.ndarray
    shift_p: np.ndarray
    shift_m: np.ndarray
    tan: np.ndarray


def face_frames(metric: MetricTerms, d: Direction) -> FaceFrames:
    """:class:`FaceFrames` of the faces crossed along ``d``."""
    n, mid, p, c = metric.face_normal(d), metric.face_midpoints(d), metric.xyz, metric.xyz_agrid
    t = np.diff(p, axis=1 - d.axis)  # along the face, toward +j (x-faces) or +i (y-faces)
    inner = _index(d, slice(1, -1))
    g = np.zeros_like(n)
    g[inner] = np.diff(c, axis=d.axis)
    t = t / np.linalg.norm(t, axis=-1, keepdims=True)
    g = g - np.sum(g * mid, -1, keepdims=True) * mid
    norm = np.linalg.norm(g, axis=-1, keepdims=True)
    g = np.where(norm > 0, g / np.where(norm > 0, norm, 1.0), n)
    gn = np.sum(g * n, -1)
    # interpolation of cell-centre values to the face midpoint: along the centre line
    # (weight) and along the face between the neighbouring rows (shift)
    weight = np.full(n.shape[:-1], 0.5)
    cb, cf = c[_index(d, slice(None, -1))], c[_index(d, slice(1, None))]
    line = cf - cb
    w = np.sum((mid[inner] - cb) * line, -1) / np.sum(line * line, -1)
    off = mid[inner] - (cb + w[..., None] * line)
    pm = 0.5 * (cb + cf)
    shift_p = np.zeros(n.shape[:-1])
    shift_m = np.zeros(n.shape[:-1])
    pm_, off_ = _to_x_layout(d, pm), _to_x_layout(d, off)
    missing = _to_x_layout(d, missing_cells(metric.spec, c.shape[:2]))
    miss = missing[:-1] | missing[1:]  # either cell of the face in the same row is missing
    sp, sm = np.zeros(off_.shape[:2]), np.zeros(off_.shape[:2])
    d2 = pm_[:, 2:] - pm_[:, :-2]
    centred = np.sum(off_[:, 1:-1] * d2, -1) / np.sum(d2 * d2, -1)
    dp = pm_[:, 2:] - pm_[:, 1:-1]
    dm = pm_[:, 1:-1] - pm_[:, :-2]
    fwd = np.sum(off_[:, 1:-1] * dp, -1) / np.sum(dp * dp, -1)
    bwd = np.sum(off_[:, 1:-1] * dm, -1) / np.sum(dm * dm, -1)
    no_prev, no_next = miss[:, :-2], miss[:, 2:]
    sp[:, 1:-1] = np.where(no_prev, fwd, np.where(no_next, 0.0, centred))
    sm[:, 1:-1] = np.where(no_next, bwd, np.where(no_prev, 0.0, centred))
    shift_p[inner], shift_m[inner] = _to_x_layout(d, sp), _to_x_layout(d, sm)
    # derivative along the face from the rows' sums of the two cells: centred, or one-sided
    # where the previous/next row reaches into the missing cells beyond a cube vertex
    length = metric.face_length(d)
    tan = np.zeros((3,) + n.shape[:-1])
    t3 = np.zeros((3,) + sp.shape)
    t3[0, :, 1:-1] = np.where(no_prev, 0.5, np.where(no_next, 0.0, 0.25))
    t3[1, :, 1:-1] = np.where(no_prev, -0.5, np.where(no_next, 0.5, 0.0))
    t3[2, :, 1:-1] = np.where(no_prev, 0.0, np.where(no_next, -0.5, -0.25))
    for k in range(3):
        tan[k][inner] = _to_x_layout(d, t3[k]) / length[inner]
    weight[inner] = w
    return FaceFrames(
        n=n, q=np.cross(n, mid), gt=np.sum(g * t, -1),
        rgn=np.where(gn > 0.05, 1.0 / np.maximum(gn, 0.05), 0.0),
        weight=np.clip(weight, 0.0, 1.0), shift_p=np.clip(shift_p, -1.0, 1.0),
        shift_m=np.clip(shift_m, -1.0, 1.0), tan=tan,
    )  # fmt: skip


# -- dual cells around corners ---------------------------------------------------------------
def corner_areas(metric: MetricTerms) -> np.ndarray:
    """Dual-cell areas at cell corners: a quarter of the cells meeting there (3 at a cube
    vertex, 4 elsewhere); the outermost corner ring uses its inner neighbour cells only."""
    a = metric.area
    out = np.zeros((a.shape[0] + 1, a.shape[1] + 1))
    out[1:-1, 1:-1] = 0.25 * (a[:-1, :-1] + a[1:, :-1] + a[:-1, 1:] + a[1:, 1:])
    out[0], out[-1], out[:, 0], out[:, -1] = out[1], out[-2], out[:, 1], out[:, -2]
    for ci, cj, bi, bj in cube_vertices(metric.spec):
        out[ci, cj] = 0.25 * (
            a[ci - 1, cj - 1] + a[ci, cj - 1] + a[ci - 1, cj] + a[ci, cj] - a[bi, bj]
        )
    return out


def corner_weights(metric: MetricTerms) -> np.ndarray:
    """Weights (4, corners...) of the cells SW, SE, NW, NE of each corner for a linear
    interpolation to the corner point (least-norm weights exact for linear functions in the
    corner's tangent plane; 0 for the missing cell at a cube vertex)."""
    p, c = metric.xyz, metric.xyz_agrid
    out = np.zeros((4,) + p.shape[:2])
    cells = np.stack([c[:-1, :-1], c[1:, :-1], c[:-1, 1:], c[1:, 1:]])  # (4, ni-1, nj-1, 3)
    q = p[1:-1, 1:-1]
    b1 = np.cross(q, np.array([0.3, 0.5, 0.8]))
    b1 /= np.linalg.norm(b1, axis=-1, keepdims=True)
    b2 = np.cross(q, b1)
    d = cells - q
    a = np.stack([np.ones(d.shape[:-1]), np.sum(d * b1, -1), np.sum(d * b2, -1)])  # (3, 4, ...)
    a = np.moveaxis(a, (0, 1), (-2, -1))  # (..., 3, 4)
    missing = missing_cells(metric.spec, c.shape[:2])
    gone = np.stack([missing[:-1, :-1], missing[1:, :-1], missing[:-1, 1:], missing[1:, 1:]])
    gone = np.moveaxis(gone, 0, -1)  # (..., 4)
    a = np.where(gone[..., None, :], 0.0, a)
    w = np.linalg.pinv(a)[..., :, 0]  # least-norm solution of a @ w = (1, 0, 0)
    bad = ~np.all(np.isfinite(w), -1) | (np.abs(w).max(-1) > 2.0)
    w = np.where(bad[..., None], 0.25, w)  # degenerate halo corners (never used)
    w = np.where(gone, 0.0, w)
    out[:, 1:-1, 1:-1] = np.moveaxis(w, -1, 0)
    return out


@dataclass(frozen=True)
class DualFaces:
    """Flux coefficients of the dual-cell divergence on the edges of the faces crossed along
    one direction: the projections of the edge's tangential (D-grid) and normal (C-grid) unit
    vectors on the normal of the dual face crossing it (the segment between the two cell
    centres), times that face's length."""

    tangential: np.ndarray
    normal: np.ndarray


def dual_faces(metric: MetricTerms, d: Direction) -> DualFaces:
    """:class:`DualFaces` of the faces crossed along ``d``: for x-faces (v edges) the dual face
    runs from centre i-1 to i with its normal toward +j; for y-faces (u edges) from centre j-1
    to j, normal toward +i."""
    p, c = metric.xyz, metric.xyz_agrid
    mid, n = metric.face_midpoints(d), metric.face_normal(d)
    t = np.diff(p, axis=1 - d.axis)
    g = np.zeros_like(n)
    g[_index(d, slice(1, -1))] = np.diff(c, axis=d.axis)
    normal = np.cross(mid, g) if d.axis == 0 else np.cross(g, mid)
    length = metric.centre_distance(d)
    t = t / np.linalg.norm(t, axis=-1, keepdims=True)
    norm = np.linalg.norm(normal, axis=-1, keepdims=True)
    ok = norm[..., 0] > 1e-12
    normal = normal / np.where(ok[..., None], norm, 1.0)
    return DualFaces(
        tangential=np.where(ok, np.sum(t * normal, -1) * length, 0.0),
        normal=np.where(ok, np.sum(n * normal, -1) * length, 0.0),
    )

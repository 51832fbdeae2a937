"""Shallow-water dynamical core on the cubed sphere (FV3's acoustic step, nz = 1).

One :class:`RankDynamics` per rank holds the state (depth ``h``, D-grid winds ``u``, ``v``),
the metric storages and the stencil classes; :class:`ShallowWaterDynamics` runs all ranks of
this process through the ``n_split`` acoustic loop with FV3's halo updates:

1. ``u, v`` D-grid vector update with corner fill (FV3 before ``c_sw``; the neighbour owns
   the shared boundary edges)
2. ``d2a2c`` + ``c_sw``: A-grid winds, absolute vorticity, C-grid winds and depth at the half
   step, C-grid wind update (vorticity, kinetic energy, pressure gradient)
3. C-grid vector update of the half-step normal winds (FV3 after ``c_sw``)
4. ``d_sw``: Courant numbers and swept areas, ``fvtp2d`` depth fluxes (synchronised on shared
   faces, so mass is conserved to round-off), depth update, ``fvtp2d`` vorticity fluxes
5. scalar update of the new depth (FV3 before the pressure gradient), corner potential with
   divergence damping, D-grid wind update
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import numpy as np

from fv3core.grid.metric import MetricTerms, SubdomainSpec
from fv3core.ranks import Rank
from fv3core.stencils import divergence_damping as dd
from fv3core.stencils import shallow_water as sw
from stencils.launch import BoundStencil, stencil_major
from fv3core.stencils.transport import (
    FiniteVolumeTransport,
    TransportGrid,
    apply_flux_divergence,
)
from fv3core.testcases.williamson import ShallowWaterCase
from fv3core.vertex_fixes import CubeVertexFixes
from mapping.cluster import ExchangeGroup, HaloExchange, ScalarHalo, VectorHalo
from stencils.directions import X, Y

log = logging.getLogger(__name__)

#: Gauss-Legendre points and weights on [0, 1] for edge-mean winds
_GAUSS_T = 0.5 + 0.5 * np.array([-np.sqrt(0.6), 0.0, np.sqrt(0.6)])
_GAUSS_W = np.array([5.0, 8.0, 5.0]) / 18.0


@dataclass(frozen=True)
class DynamicsConfig:
    """Acoustic-step settings: ``dt`` is one acoustic (sub)step; ``dddmp`` the dimensionless
    del2 divergence-damping coefficient (nu = dddmp * mean cell area / dt, FV3 ``d2_bg``-like);
    ``hord`` the PPM variant of the depth and vorticity fluxes."""

    dt: float
    hord: int = 8
    dddmp: float = 0.02
    nz: int = 1
    #: 0: del2 divergence damping only; 1: plus FV3's del4 damping of the divergence
    #: (nu4 = (d4_bg * smallest cell area)^2 / dt, see fv3core.stencils.divergence_damping)
    nord: int = 0
    d4_bg: float = 0.12


def edge_mean_tangential_wind(
    case: ShallowWaterCase, p0: np.ndarray, p1: np.ndarray
) -> np.ndarray:
    """Mean of the wind's component along the great-circle arc p0 -> p1 (3-point Gauss), i.e.
    the D-grid (covariant) wind of that edge: circulation / edge length."""
    theta = np.arccos(np.clip(np.sum(p0 * p1, axis=-1), -1.0, 1.0))[..., None]
    sin_t = np.sin(theta)
    out = np.zeros(p0.shape[:-1])
    for t, w in zip(_GAUSS_T, _GAUSS_W):
        a, b = np.sin((1.0 - t) * theta) / sin_t, np.sin(t * theta) / sin_t
        p = a * p0 + b * p1
        # d p / d s along the arc (unit tangent)
        tangent = (-np.cos((1.0 - t) * theta) * p0 + np.cos(t * theta) * p1) / sin_t
        tangent /= np.linalg.norm(tangent, axis=-1, keepdims=True)
        out += w * np.sum(case.wind_xyz(p) * tangent, axis=-1)
    return out


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
    """3-D A-grid winds (cells, 3) from D-grid winds: the same formula as ``dgrid_to_agrid``."""
    c = agrid_coefficients(metric)
    return (u[:, :-1, None] * c[0] + u[:, 1:, None] * c[1] + v[:-1, :, None] * c[2]
            + v[1:, :, None] * c[3])  # fmt: skip


def face_frames(metric: MetricTerms, axis: int) -> dict[str, np.ndarray]:
    """Per x-face (axis 0) or y-face (axis 1): normal n, q = n x k, and the components of the
    centre-to-centre direction g on n and on the face direction t (toward +j / +i)."""
    if axis == 0:
        n, mid, p = metric.xface_normal(), metric.xyz_xface, metric.xyz
        t = p[:, 1:] - p[:, :-1]
        c = metric.xyz_agrid
        g = np.zeros_like(n)
        g[1:-1] = c[1:] - c[:-1]
    else:
        n, mid, p = metric.yface_normal(), metric.xyz_yface, metric.xyz
        t = p[1:, :] - p[:-1, :]
        c = metric.xyz_agrid
        g = np.zeros_like(n)
        g[:, 1:-1] = c[:, 1:] - c[:, :-1]
    t = t / np.linalg.norm(t, axis=-1, keepdims=True)
    g = g - np.sum(g * mid, -1, keepdims=True) * mid
    norm = np.linalg.norm(g, axis=-1, keepdims=True)
    g = np.where(norm > 0, g / np.where(norm > 0, norm, 1.0), n)
    gn = np.sum(g * n, -1)
    # interpolation of cell-centre values to the face midpoint: along the centre line
    # (weight) and along the face between the neighbouring rows (shift)
    weight = np.full(n.shape[:-1], 0.5)
    cb, cf = (c[:-1], c[1:]) if axis == 0 else (c[:, :-1], c[:, 1:])
    inner = (slice(1, -1), slice(None)) if axis == 0 else (slice(None), slice(1, -1))
    line = cf - cb
    w = np.sum((mid[inner] - cb) * line, -1) / np.sum(line * line, -1)
    off = mid[inner] - (cb + w[..., None] * line)
    pm = 0.5 * (cb + cf)
    shift_p = np.zeros(n.shape[:-1])
    shift_m = np.zeros(n.shape[:-1])
    # rows along the face: axis 1 for x-faces, axis 0 for y-faces (swap to x-face layout)
    sw = (lambda a: a) if axis == 0 else (lambda a: np.swapaxes(a, 0, 1))
    pm_, off_ = sw(pm), sw(off)
    missing = sw(_vertex_cells(metric.spec, c.shape[:2]))
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
    if axis == 0:
        shift_p[1:-1], shift_m[1:-1] = sp, sm
    else:
        shift_p[:, 1:-1], shift_m[:, 1:-1] = sp.T, sm.T
    # derivative along the face from the rows' sums of the two cells: centred, or one-sided
    # where the previous/next row reaches into the missing cells beyond a cube vertex
    length = metric.dy if axis == 0 else metric.dx
    tan = np.zeros((3,) + n.shape[:-1])
    t3 = np.zeros((3,) + sp.shape)
    t3[0, :, 1:-1] = np.where(no_prev, 0.5, np.where(no_next, 0.0, 0.25))
    t3[1, :, 1:-1] = np.where(no_prev, -0.5, np.where(no_next, 0.5, 0.0))
    t3[2, :, 1:-1] = np.where(no_prev, 0.0, np.where(no_next, -0.5, -0.25))
    for k in range(3):
        if axis == 0:
            tan[k, 1:-1] = t3[k] / length[1:-1]
        else:
            tan[k, :, 1:-1] = t3[k].T / length[:, 1:-1]
    weight[inner] = w
    return {"n": n, "q": np.cross(n, mid), "gt": np.sum(g * t, -1),
            "rgn": np.where(gn > 0.05, 1.0 / np.maximum(gn, 0.05), 0.0),
            "weight": np.clip(weight, 0.0, 1.0), "shift_p": np.clip(shift_p, -1.0, 1.0),
            "shift_m": np.clip(shift_m, -1.0, 1.0), "tan": tan}  # fmt: skip


def _vertex_cells(spec: SubdomainSpec, shape: tuple[int, int]) -> np.ndarray:
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


def _pad(a: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    out = np.zeros(shape)
    out[: a.shape[0], : a.shape[1]] = a
    return out


class DynamicsGrid:
    """Metric storages of the shallow-water stencils (2-D, padded to the corner shape)."""

    def __init__(self, metric: MetricTerms, surface: np.ndarray, backend: str) -> None:
        from stencils.storage import from_numpy

        spec = metric.spec
        h = spec.n_halo
        shape = (spec.nx + 1 + 2 * h, spec.ny + 1 + 2 * h)

        def s(a: np.ndarray) -> Any:
            return from_numpy(_pad(np.asarray(a, dtype=np.float64), shape), backend)

        self.transport = TransportGrid.from_metric(metric, backend)
        self.dx, self.dy = s(metric.dx), s(metric.dy)
        self.rdx, self.rdy = s(safe_reciprocal(metric.dx)), s(safe_reciprocal(metric.dy))
        self.dxc, self.dyc = s(metric.dxc), s(metric.dyc)
        self.rdxc, self.rdyc = s(safe_reciprocal(metric.dxc)), s(safe_reciprocal(metric.dyc))
        self.rarea = s(safe_reciprocal(metric.area))
        sin5 = safe_sin(metric.sin_sg[4])
        self.cosa, self.rsina = s(metric.cos_sg[4]), s(1.0 / sin5)
        coef = agrid_coefficients(metric)
        self.agrid = [[s(coef[e, ..., k]) for k in range(3)] for e in range(4)]
        sin = safe_sin(metric.sin_sg)
        self.sin_sg = [s(sin[k]) for k in range(4)]
        self.fcor = s(metric.f0)
        self.hs = s(surface)
        fx, fy = face_frames(metric, 0), face_frames(metric, 1)
        self.nx = [s(fx["n"][..., k]) for k in range(3)]
        self.ny = [s(fy["n"][..., k]) for k in range(3)]
        self.qx = [s(fx["q"][..., k]) for k in range(3)]
        self.qy = [s(fy["q"][..., k]) for k in range(3)]
        self.gt_x, self.rgn_x = s(fx["gt"]), s(fx["rgn"])
        self.gt_y, self.rgn_y = s(fy["gt"]), s(fy["rgn"])
        self.weight_x, self.weight_y = s(fx["weight"]), s(fy["weight"])
        self.tan_x = [s(fx["tan"][k]) for k in range(3)]
        self.tan_y = [s(fy["tan"][k]) for k in range(3)]
        self.shift_x = (s(fx["shift_p"]), s(fx["shift_m"]))
        self.shift_y = (s(fy["shift_p"]), s(fy["shift_m"]))
        self.area_c = corner_areas(metric)
        self.corner_w = [s(w) for w in corner_weights(metric)]
        self.dual_np = dual_face_coefficients(metric)
        self.dual = {k: s(a) for k, a in self.dual_np.items()}
        self.rarea_c = s(1.0 / self.area_c)
        self.dxc_np = np.asarray(metric.dxc)
        self.normals_np = (metric.xface_normal(), metric.yface_normal())
        self.lengths_np = (np.asarray(metric.dy), np.asarray(metric.dx))


def corner_areas(metric: MetricTerms) -> np.ndarray:
    """Dual-cell areas at cell corners: a quarter of the cells meeting there (3 at a cube
    vertex, 4 elsewhere); the outermost corner ring uses its inner neighbour cells only."""
    a = metric.area
    out = np.zeros((a.shape[0] + 1, a.shape[1] + 1))
    out[1:-1, 1:-1] = 0.25 * (a[:-1, :-1] + a[1:, :-1] + a[:-1, 1:] + a[1:, 1:])
    out[0], out[-1], out[:, 0], out[:, -1] = out[1], out[-2], out[:, 1], out[:, -2]
    for ci, cj, bi, bj in _vertices(metric.spec):
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
    missing = _vertex_cells(metric.spec, c.shape[:2])
    gone = np.stack([missing[:-1, :-1], missing[1:, :-1], missing[:-1, 1:], missing[1:, 1:]])
    gone = np.moveaxis(gone, 0, -1)  # (..., 4)
    a = np.where(gone[..., None, :], 0.0, a)
    w = np.linalg.pinv(a)[..., :, 0]  # least-norm solution of a @ w = (1, 0, 0)
    bad = ~np.all(np.isfinite(w), -1) | (np.abs(w).max(-1) > 2.0)
    w = np.where(bad[..., None], 0.25, w)  # degenerate halo corners (never used)
    w = np.where(gone, 0.0, w)
    out[:, 1:-1, 1:-1] = np.moveaxis(w, -1, 0)
    return out


def dual_face_coefficients(metric: MetricTerms) -> dict[str, np.ndarray]:
    """Per D-grid edge: the projections of its tangential (D-grid) and normal (C-grid) unit
    vectors on the normal of the dual face crossing it (the segment between the two cell
    centres), times that face's length -- the dual-cell divergence's flux coefficients.
    y-faces (u edges): ``du_y``, ``dn_y`` (toward +i); x-faces (v edges): ``dv_x``, ``dn_x``
    (toward +j)."""
    p, c = metric.xyz, metric.xyz_agrid
    out = {}
    for axis, (tkey, nkey) in enumerate((("dv_x", "dn_x"), ("du_y", "dn_y"))):
        if axis == 0:  # x-faces: dual face from centre i-1 to i, normal toward +j
            mid, n = metric.xyz_xface, metric.xface_normal()
            t = p[:, 1:] - p[:, :-1]
            g = np.zeros_like(n)
            g[1:-1] = c[1:] - c[:-1]
            normal = np.cross(mid, g)
            length = metric.dxc
        else:  # y-faces: dual face from centre j-1 to j, normal toward +i
            mid, n = metric.xyz_yface, metric.yface_normal()
            t = p[1:, :] - p[:-1, :]
            g = np.zeros_like(n)
            g[:, 1:-1] = c[:, 1:] - c[:, :-1]
            normal = np.cross(g, mid)
            length = metric.dyc
        t = t / np.linalg.norm(t, axis=-1, keepdims=True)
        norm = np.linalg.norm(normal, axis=-1, keepdims=True)
        ok = norm[..., 0] > 1e-12
        normal = normal / np.where(ok[..., None], norm, 1.0)
        out[tkey] = np.where(ok, np.sum(t * normal, -1) * length, 0.0)
        out[nkey] = np.where(ok, np.sum(n * normal, -1) * length, 0.0)
    return out


def _vertices(spec: SubdomainSpec) -> list[tuple[int, int, int, int]]:
    """(corner i, corner j, missing cell i, missing cell j) of the cube vertices this
    subdomain touches; the missing cell is the halo cell beyond the vertex."""
    h = spec.n_halo
    out = []
    for on_x, ci, bi in ((spec.on_west, h, h - 1), (spec.on_east, h + spec.nx, h + spec.nx)):
        for on_y, cj, bj in ((spec.on_south, h, h - 1), (spec.on_north, h + spec.ny, h + spec.ny)):
            if on_x and on_y:
                out.append((ci, cj, bi, bj))
    return out


class RankDynamics:
    """One rank's shallow-water state and routines (``d2a2c``, ``c_sw``, ``d_sw`` pieces)."""

    def __init__(
        self, factory: Any, rank: Rank, config: DynamicsConfig, case: ShallowWaterCase,
        allocate: Any = None,
    ) -> None:  # fmt: skip
        """``allocate(name, domain)`` makes the state and work fields (default: one storage
        each; :class:`ShallowWaterDynamics` passes slices of one allocation per field for
        all its ranks, see :class:`stencils.storage.StackedStorages`)."""
        from stencils.storage import Domain, from_numpy, zeros

        self.rank, self.config, self.case = rank, config, case
        spec, metric, backend = rank.spec, rank.metric, factory.backend
        h, nx, ny, nz = spec.n_halo, spec.nx, spec.ny, config.nz
        self.spec, self.factory_backend = spec, backend
        lon, lat = metric.lonlat_agrid
        surface = case.surface(lon, lat)
        self.grid = g = DynamicsGrid(metric, surface, backend)
        self.transport = FiniteVolumeTransport(factory, g.transport, spec, nz, config.hord)

        def field(name: str, sx: int, sy: int) -> Any:
            domain = Domain(nx + sx, ny + sy, nz, h)
            return allocate(name, domain) if allocate is not None else zeros(domain, backend)

        def pair(name: str, sx: int, sy: int) -> tuple[Any, Any]:
            return field(name + "_x", *sx), field(name + "_y", *sy)

        # prognostic state
        self.h = field("h", 0, 0)
        self.u, self.v = field("u", 0, 1), field("v", 1, 0)
        # temporaries
        self.w = [field(f"w{k}", 0, 0) for k in range(3)]
        self.vort, self.phi = field("vort", 0, 0), field("phi", 0, 0)
        self.vn_x, self.vn_y = pair("vn", (1, 0), (0, 1))
        self.hfx, self.hfy = pair("hf", (1, 0), (0, 1))
        self.fx, self.fy = pair("f", (1, 0), (0, 1))
        self.fxw, self.fyw = pair("fw", (1, 0), (0, 1))
        self.crx, self.cry = pair("cr", (1, 1), (1, 1))
        self.xfx, self.yfx = pair("af", (1, 1), (1, 1))
        self.phib, self.div = field("phib", 1, 1), field("div", 1, 1)

        # initial state: depth at cell centres, D-grid winds as edge means
        depth = case.height(lon, lat) - surface
        self.h[:, :, :] = from_numpy(np.repeat(depth[..., None], nz, axis=2), backend)
        p = metric.xyz
        u0 = edge_mean_tangential_wind(case, p[:-1, :], p[1:, :])
        v0 = edge_mean_tangential_wind(case, p[:, :-1], p[:, 1:])
        self.u[:, :, :] = from_numpy(np.repeat(u0[..., None], nz, axis=2), backend)
        self.v[:, :, :] = from_numpy(np.repeat(v0[..., None], nz, axis=2), backend)

        # stencils
        self._d2a = factory(sw.dgrid_to_agrid)
        self._cnormal = {
            d: factory(sw.cgrid_normal_wind, externals=d.face_offsets(), name=f"c_normal_{d.name}")
            for d in (X, Y)
        }
        self._half = factory(sw.half_step_potential)
        self._cupdate = {d: factory(sw.cgrid_wind_update, externals=d.face_offsets(), name=f"c_sw_{d.name}")
                         for d in (X, Y)}  # fmt: skip
        self._courant = {d: factory(sw.courant_from_normal_wind, externals=d.offsets(),
                                    name=f"fxadv_vn_{d.name}") for d in (X, Y)}  # fmt: skip
        self._flux_div = factory(apply_flux_divergence)
        self._cell_phi = factory(sw.cell_potential)
        self._corner_phi = factory(sw.corner_potential)
        self._del4 = factory(dd.corner_laplacian_damping) if config.nord == 1 else None
        self._dupdate = {
            d: factory(sw.dgrid_wind_update, externals={**d.offsets(), "SIGN": sign},
                       name=f"d_sw_wind_{d.name}")
            for d, sign in ((X, -1.0), (Y, 1.0))
        }  # fmt: skip

        # halo specs (exchanges are built by ShallowWaterDynamics over all ranks)
        self.depth_halo = ScalarHalo(self.h, n_halo=h, location="center")
        self.wind_halo = VectorHalo(self.u, self.v, n_halo=h, grid="D", corner_fill=True)
        self.cwind_halo = VectorHalo(self.vn_x, self.vn_y, n_halo=h, grid="C", corner_fill=True)
        self.flux_sync = VectorHalo(self.fx, self.fy, n_halo=h, grid="C", depth=1)
        # the ring of corner divergences around the compute corners (del4 damping)
        self.div_halo = ScalarHalo(self.div, n_halo=h, location="corner", depth=1)

        N, M = nx + 2 * h, ny + 2 * h
        self._b = {
            "cells": {"origin": (0, 0, 0), "domain": (N, M, nz)},
            "fx_all": {"origin": (1, 0, 0), "domain": (N - 1, M, nz)},
            "fy_all": {"origin": (0, 1, 0), "domain": (N, M - 1, nz)},
            "cnx": {"origin": (1, 1, 0), "domain": (N - 1, M - 2, nz)},
            "cny": {"origin": (1, 1, 0), "domain": (N - 2, M - 1, nz)},
            "half": {"origin": (1, 1, 0), "domain": (N - 2, M - 2, nz)},
            "cx": {"origin": (2, 2, 0), "domain": (N - 3, M - 4, nz)},
            "cy": {"origin": (2, 2, 0), "domain": (N - 4, M - 3, nz)},
            "interior": {"origin": (h, h, 0), "domain": (nx, ny, nz)},
            "cells1": {"origin": (h - 1, h - 1, 0), "domain": (nx + 2, ny + 2, nz)},
            "corners": {"origin": (h, h, 0), "domain": (nx + 1, ny + 1, nz)},
            "vfaces": {"origin": (h, h, 0), "domain": (nx + 1, ny, nz)},
            "ufaces": {"origin": (h, h, 0), "domain": (nx, ny + 1, nz)},
        }
        self._vertices = _vertices(spec)
        # nu from the mean cell area of the sphere: the same on every rank (bitwise results
        # independent of the decomposition)
        n = spec.resolution
        self.nu = config.dddmp * 4.0 * np.pi * metric.radius**2 / (6 * n * n) / config.dt
        self.nu4 = dd.del4_coefficient(config.d4_bg, n, metric.radius, config.dt)
        self.del4_weights = dd.corner_laplacian_weights(metric, _vertices(spec))

        self._bind_calls()

    def _bind_calls(self) -> None:
        """Bind every stencil call of the step to its storages, bounds and scalars once
        (:class:`BoundStencil`: checked on the first call, then the backend's ``run``)."""
        g, b, dt = self.grid, self._b, self.config.dt
        dt2, gravity = 0.5 * dt, self.case.gravity
        wx, wy, wz = self.w
        cs, cn, cw, ce = g.agrid
        bs = BoundStencil
        self._k_d2a = bs(self._d2a, u=self.u, v=self.v, dx=g.dx, dy=g.dy, rarea=g.rarea,
                         cs_x=cs[0], cs_y=cs[1], cs_z=cs[2], cn_x=cn[0], cn_y=cn[1], cn_z=cn[2],
                         cw_x=cw[0], cw_y=cw[1], cw_z=cw[2], ce_x=ce[0], ce_y=ce[1], ce_z=ce[2],
                         fcor=g.fcor, wx=wx, wy=wy, wz=wz, vort=self.vort, **b["cells"])  # fmt: skip
        self._k_cnormal = [
            bs(self._cnormal[d], wx=wx, wy=wy, wz=wz, h=self.h, nx=n[0], ny=n[1], nz=n[2],
               weight=wt, shift_p=sh[0], shift_m=sh[1], face_length=length, vn=vn, hflux=hf,
               **b[key])
            for d, vn, hf, n, wt, sh, length, key in (
                (X, self.vn_x, self.hfx, g.nx, g.weight_x, g.shift_x, g.dy, "cnx"),
                (Y, self.vn_y, self.hfy, g.ny, g.weight_y, g.shift_y, g.dx, "cny"),
            )
        ]  # fmt: skip
        self._k_half = bs(self._half, h=self.h, hs=g.hs, fx=self.hfx, fy=self.hfy, wx=wx, wy=wy,
                          wz=wz, rarea=g.rarea, gravity=gravity, dt2=dt2, phi=self.phi,
                          **b["half"])  # fmt: skip
        self._k_cupdate = [
            bs(self._cupdate[d], vn=vn, vort=self.vort, phi=self.phi, wx=wx, wy=wy, wz=wz,
               qx=q[0], qy=q[1], qz=q[2], rdc=rdc, tan_p=tan[0], tan_0=tan[1], tan_m=tan[2],
               gt=gt, rgn=rgn, dt2=dt2, **b[key])
            for d, vn, q, rdc, tan, gt, rgn, key in (
                (X, self.vn_x, g.qx, g.rdxc, g.tan_x, g.gt_x, g.rgn_x, "cx"),
                (Y, self.vn_y, g.qy, g.rdyc, g.tan_y, g.gt_y, g.rgn_y, "cy"),
            )
        ]  # fmt: skip
        tg = g.transport
        self._k_courant = [
            bs(self._courant[X], vn=self.vn_x, rdxa=tg.rdxa, face_length=tg.dy,
               sin_near=g.sin_sg[0], sin_far=g.sin_sg[2], crx=self.crx, xfx=self.xfx, dt=dt,
               **b["fx_all"]),
            bs(self._courant[Y], vn=self.vn_y, rdxa=tg.rdya, face_length=tg.dx,
               sin_near=g.sin_sg[1], sin_far=g.sin_sg[3], crx=self.cry, xfx=self.yfx, dt=dt,
               **b["fy_all"]),
        ]  # fmt: skip
        self._k_depth_transport = self.transport.bind(
            self.h, self.crx, self.cry, self.xfx, self.yfx, self.fx, self.fy)
        self._k_flux_div = bs(self._flux_div, q=self.h, fx=self.fx, fy=self.fy,
                              rarea=tg.rarea, **b["interior"])  # fmt: skip
        self._k_vort_transport = self.transport.bind(
            self.vort, self.crx, self.cry, self.xfx, self.yfx, self.fxw, self.fyw)
        self._k_cell_phi = bs(self._cell_phi, h=self.h, hs=g.hs, vnx=self.vn_x, vny=self.vn_y,
                              cosa=g.cosa, rsina=g.rsina, gravity=gravity, phi=self.phi,
                              **b["cells1"])  # fmt: skip
        cwt = g.corner_w
        self._k_corner_phi = bs(self._corner_phi, phi=self.phi, b_sw=cwt[0], b_se=cwt[1],
                                b_nw=cwt[2], b_ne=cwt[3], u=self.u, v=self.v, vn_x=self.vn_x,
                                vn_y=self.vn_y, **g.dual, rarea_c=g.rarea_c, nu=self.nu,
                                phib=self.phib, div=self.div, **b["corners"])  # fmt: skip
        self._k_del4 = None
        if self._del4 is not None:
            w = dd.storages(self.del4_weights, self.factory_backend)
            self._k_del4 = bs(self._del4, div=self.div, **w, rarea_c=g.rarea_c, nu4=self.nu4,
                              phib=self.phib, **b["corners"])  # fmt: skip
        self._k_dupdate = [
            bs(self._dupdate[X], wind=self.v, vort_flux=self.fxw, phib=self.phib, rlength=g.rdy,
               dt=dt, **b["vfaces"]),
            bs(self._dupdate[Y], wind=self.u, vort_flux=self.fyw, phib=self.phib, rlength=g.rdx,
               dt=dt, **b["ufaces"]),
        ]  # fmt: skip

    # ---- the pieces of one acoustic step (run in order by ShallowWaterDynamics) ---------------
    #: the phases of the step, in order: between two of them come halo updates or vertex fixes
    PHASES = ("c_grid_normal_winds", "c_grid_update", "depth_fluxes",
              "depth_update_and_vorticity_fluxes", "corner_potential", "wind_update")  # fmt: skip

    def phase_calls(self, phase: str) -> list[Any]:
        """The calls of one phase (bound stencil launches and corner fills; an fvtp2d
        contributes its steps), in order; they touch only this rank's fields.

        * ``c_grid_normal_winds`` -- d2a2c: A-grid winds, absolute vorticity, C-grid normal
          winds and depth fluxes; needs filled halos of h, u, v (the cube-vertex faces are
          fixed next, for all ranks: :meth:`CubeVertexFixes.faces`);
        * ``c_grid_update`` -- the rest of ``c_sw``: half-step depth and potential, C-grid
          wind update;
        * ``depth_fluxes`` -- Courant numbers from the half-step C-grid winds, fvtp2d of h;
        * ``depth_update_and_vorticity_fluxes`` -- flux-form depth update (after the face
          sync), fvtp2d of the absolute vorticity;
        * ``corner_potential`` -- corner potential K + g h - nu div and the corner divergence;
          needs the new h's halo (the cube-vertex dual cells are fixed next, for all ranks:
          :meth:`CubeVertexFixes.vertices`);
        * ``wind_update`` -- del4 divergence damping (nord = 1; needs the corner divergence's
          halo ring) and the D-grid wind update."""
        calls = {
            "c_grid_normal_winds": [self._k_d2a, *self._k_cnormal],
            "c_grid_update": [self._k_half, *self._k_cupdate],
            "depth_fluxes": [*self._k_courant, *self._k_depth_transport.steps],
            "depth_update_and_vorticity_fluxes": [self._k_flux_div,
                                                  *self._k_vort_transport.steps],
            "corner_potential": [self._k_cell_phi, self._k_corner_phi],
            "wind_update": [*([self._k_del4] if self._k_del4 is not None else []),
                            *self._k_dupdate],
        }  # fmt: skip
        if phase not in calls:
            raise ValueError(f"unknown phase {phase!r}; phases: {', '.join(self.PHASES)}")
        return calls[phase]

    def run_phase(self, phase: str) -> None:
        """Run :meth:`phase_calls` of this rank alone."""
        for call in self.phase_calls(phase):
            call()

    # ---- diagnostics (numpy, interior cells) ---------------------------------------------------
    def interior(self, a: Any) -> np.ndarray:
        h, nx, ny = self.spec.n_halo, self.spec.nx, self.spec.ny
        return np.asarray(a)[h : h + nx, h : h + ny, 0].copy()

    def agrid_wind(self) -> np.ndarray:
        """3-D A-grid winds of the interior cells (nx, ny, 3)."""
        h, nx, ny = self.spec.n_halo, self.spec.nx, self.spec.ny
        w = agrid_winds_numpy(self.rank.metric, np.asarray(self.u)[..., 0],
                              np.asarray(self.v)[..., 0])  # fmt: skip
        return w[h : h + nx, h : h + ny]

    def absolute_vorticity(self) -> np.ndarray:
        """Absolute vorticity of the interior cells from the D-grid circulation."""
        m = self.rank.metric
        u, v = np.asarray(self.u)[..., 0], np.asarray(self.v)[..., 0]
        circ = u[:, :-1] * m.dx[:, :-1] - u[:, 1:] * m.dx[:, 1:] - v[:-1] * m.dy[:-1] + v[1:] * m.dy[1:]
        h, nx, ny = self.spec.n_halo, self.spec.nx, self.spec.ny
        return (m.f0 + circ * m.rarea)[h : h + nx, h : h + ny]


class ShallowWaterDynamics:
    """All ranks of this process; ``step()`` is one acoustic step with FV3's halo updates."""

    def __init__(
        self, factory: Any, partitioner: Any, ranks: list[Rank], config: DynamicsConfig,
        case: ShallowWaterCase,
    ) -> None:  # fmt: skip
        from stencils.storage import StackedStorages

        stacked = StackedStorages(factory.backend, len(ranks))
        self.ranks = [RankDynamics(factory, r, config, case, stacked.allocator(i))
                      for i, r in enumerate(ranks)]  # fmt: skip
        self.vertex_fixes = CubeVertexFixes(self.ranks)

        def exchanges(attr: str) -> ExchangeGroup:
            return ExchangeGroup([HaloExchange(r.rank.comm, partitioner, [getattr(r, attr)],
                                               packing="slicing") for r in self.ranks])  # fmt: skip

        self.ex_depth = exchanges("depth_halo")
        self.ex_wind = exchanges("wind_halo")
        self.ex_cwind = exchanges("cwind_halo")
        self.ex_flux = exchanges("flux_sync")
        self.ex_div = exchanges("div_halo") if config.nord == 1 else None
        # each phase's calls of all ranks in stencil-major order (bitwise as rank by rank)
        self._phases = {phase: stencil_major([r.phase_calls(phase) for r in self.ranks])
                        for phase in RankDynamics.PHASES}  # fmt: skip
        self.halo_seconds = 0.0
        self._depth_halo_filled = False  # filled at the first step (all ranks take part)

    def _exchange(self, group: ExchangeGroup) -> None:
        import time

        t0 = time.perf_counter()
        group.update()
        self.halo_seconds += time.perf_counter() - t0

    def _run(self, phase: str) -> None:
        for call in self._phases[phase]:
            call()

    def step(self) -> None:
        if not self._depth_halo_filled:
            self._exchange(self.ex_depth)
            self._depth_halo_filled = True
        self._exchange(self.ex_wind)
        self._run("c_grid_normal_winds")
        self.vertex_fixes.faces()
        self._run("c_grid_update")
        self._exchange(self.ex_cwind)
        self._run("depth_fluxes")
        self._exchange(self.ex_flux)
        self._run("depth_update_and_vorticity_fluxes")
        self._exchange(self.ex_depth)
        self._run("corner_potential")
        self.vertex_fixes.vertices()
        if self.ex_div is not None:
            self._exchange(self.ex_div)
        self._run("wind_update")

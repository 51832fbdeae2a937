"""FV3's own grid and metric terms, as GFDL's Fortran computes them.

:class:`CubedSphere` runs FV3's grid set-up on all six tiles of a cube with one tile per rank
(``layout = 1,1``): ``gnomonic_grids`` (``gnomonic_ed`` + ``symm_ed``), ``mirror_grid``, the
``-pi/shift_fac`` shift and the tile-edge copies of ``fv_grid_tools.F90 init_grid``; the metric
terms of ``init_grid`` (``dx``/``dy`` with ``get_symmetry`` and ``mpp_get_boundary``,
``cell_center2`` centres over ``sorted_inta``, ``grid_area`` over ``sorted_inta``/``sorted_intb``,
``dxa``, ``dxc``, ``area_c`` ...) and of ``fv_grid_utils.F90 grid_utils_init`` (``sin_sg``,
``cos_sg``, ``ee1``, ``ec1``, ``ew``, ``es``, ``cosa_*``, ``rsin_*``, ``divg_*``, ``del6_*``,
``edge_factors``, ``efactor_a2c_v``, ``init_cubed_to_latlon``), and ``fC``/``f0`` as
``test_cases.F90 init_case`` sets them.  Every halo point holds what FV3 ends up with: FMS
``mpp_update_domains`` copies of the neighbour tile's values in the edge halos, FV3's
``fill_corners`` / ``fill_ghost`` values in the cube-corner halo regions, and what FV3 computes
locally from its halo grid elsewhere.  The same formulas, in the same order of floating-point
operations, with the C library's transcendental functions (Python's ``math``: the libm gfortran
calls; NumPy's own ``arcsin``, ``arctan2``, ``exp``, ``power`` differ from it in the last bit):
corners, centres and areas equal FV3's ``grid_spec`` bit for bit.
:meth:`CubedSphere.metric_terms` cuts one rank's :class:`MetricTerms` out of it.

Index conventions (as :mod:`fv3core.grid.subdomain`): arrays ``[i, j]`` (x, y), ``n_halo = h`` points
on each side, so Python index ``h`` is the first compute point; FV3's Fortran index ``f`` (1 = the
first compute point of the *tile*, symmetric memory) is Python index ``f - i0 - 1 + h`` for a rank
whose compute domain starts at tile index ``i0`` (``SubdomainSpec.i0``; 0 for one tile per rank).
Shapes for a rank with ``nx x ny`` compute cells:

* cell centres ("A-grid", FV3 ``isd:ied, jsd:jed``): ``(nx+2h, ny+2h)``
* cell corners ("B-grid", ``isd:ied+1, jsd:jed+1``): ``(nx+1+2h, ny+1+2h)``
* x-faces (FV3 position EAST: ``dy``, ``dxc``, C-grid ``uc``, D-grid ``v``): ``(nx+1+2h, ny+2h)``
* y-faces (position NORTH: ``dx``, ``dyc``, C-grid ``vc``, D-grid ``u``): ``(nx+2h, ny+1+2h)``
* vectors carry their Cartesian components last (``ec1[..., 0:3]``); FV3's extra index comes
  first: ``sin_sg[k - 1]`` is FV3's ``sin_sg(:,:,k)`` (``(9, nx+2h, ny+2h)``), ``ew[k - 1]``
  FV3's ``ew(:,:,:,k)``.
* ``grid`` / ``agrid``: ``(..., 2)`` longitude, latitude in radians (FV3's ``grid_64``).

Points FV3 never sets (uninitialised memory, or outside what FV3 allocates, e.g. ``a11`` beyond
one halo point, ``ee1`` and ``rsina`` outside the compute corners) are NaN here; points FV3 sets
to its markers keep them (``big_number = 1e8``, ``tiny_number = 1e-8``; ``area`` is ``-1e8`` in
the cube-corner halo regions, ``rarea`` there ``-1e-8``).  FV3's own quirks are kept, e.g. its
cell-centre longitudes in the cube-corner regions are filled from the x side and latitudes from
the y side (``agrid`` there mixes two cells), and ``cosa_u``/``cosa_v`` on a tile-edge line
inside the corner halo rows use the corner-fill geometry (see docs/fv3core/README.md).  With more
than one rank per tile, a rank's arrays are the tile's (FV3 computes the same values on each
rank), except that FV3 leaves some outermost halo rows and the tile-edge factors of ranks away
from a tile edge unset where these arrays hold the tile's values.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
from scipy.spatial import cKDTree

from fv3core.errors import FV3ConfigError
from fv3core.grid.cube import N_TILES, SIDES, connectivity, fill_tile_halos, tile_corners
from fv3core.grid.spherical import normalize
from fv3core.grid.subdomain import SubdomainSpec

#: fv_grid_utils ``big_number`` / ``tiny_number``: FV3's markers for values that must not be used
BIG_NUMBER = 1.0e8
TINY_NUMBER = 1.0e-8
PI = math.pi
#: FV3's grid shift: ``shift_fac = 18`` (longitudes minus pi/18)
SHIFT_FAC = 18.0

Pair = tuple[np.ndarray, np.ndarray]
Vec = tuple[np.ndarray, np.ndarray, np.ndarray]


# --------------------------------------------------------------------------------------------
# The C library's transcendental functions (what gfortran calls), elementwise on arrays.
# --------------------------------------------------------------------------------------------
def _libm(func: Callable[..., float], nin: int) -> Callable[..., np.ndarray]:
    ufunc = np.frompyfunc(func, nin, 1)

    def call(*args: Any) -> np.ndarray:
        return np.asarray(ufunc(*args), dtype=np.float64)

    call.__name__ = func.__name__
    call.__doc__ = f"libm {func.__name__} elementwise (bitwise what gfortran calls)"
    return call


sin = _libm(math.sin, 1)
cos = _libm(math.cos, 1)
tan = _libm(math.tan, 1)
asin = _libm(math.asin, 1)
acos = _libm(math.acos, 1)
atan2 = _libm(math.atan2, 2)
exp = _libm(math.exp, 1)
fpow = _libm(math.pow, 2)


# --------------------------------------------------------------------------------------------
# fv_grid_utils.F90 helpers, vectorised; points are (lon, lat) pairs or (x, y, z) triples.
# --------------------------------------------------------------------------------------------
def latlon2xyz(p: Pair) -> Vec:
    """FV3 ``latlon2xyz``: (lon, lat) -> unit vector (right-handed)."""
    c = cos(p[1])
    return c * cos(p[0]), c * sin(p[0]), sin(p[1])


def cart_to_latlon(e: Vec) -> Pair:
    """FV3 ``cart_to_latlon``: normalise, lon = atan2 in [0, 2 pi) (0 within 1e-10 of the poles)."""
    x, y, z = e
    d = np.sqrt(x * x + y * y + z * z)
    x, y, z = x / d, y / d, z / d
    lon = np.where(np.abs(x) + np.abs(y) < 1.0e-10, 0.0, atan2(y, x))
    lon = np.where(lon < 0.0, 2.0 * PI + lon, lon)
    return lon, asin(z)


def vect_cross(p: Vec, q: Vec) -> Vec:
    """FV3 ``vect_cross``: p x q."""
    return (p[1] * q[2] - p[2] * q[1], p[2] * q[0] - p[0] * q[2], p[0] * q[1] - p[1] * q[0])


def normalize_vect(e: Vec) -> Vec:
    """FV3 ``normalize_vect``."""
    d = np.sqrt(e[0] ** 2 + e[1] ** 2 + e[2] ** 2)
    return e[0] / d, e[1] / d, e[2] / d


def inner_prod(a: Vec, b: Vec) -> np.ndarray:
    """FV3 ``inner_prod`` / ``v_prod``."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def mid_pt3_cart(p1: Vec, p2: Vec) -> Vec:
    """FV3 ``mid_pt3_cart``: normalised p1 + p2."""
    e = (p1[0] + p2[0], p1[1] + p2[1], p1[2] + p2[2])
    d = np.sqrt(e[0] ** 2 + e[1] ** 2 + e[2] ** 2)
    return e[0] / d, e[1] / d, e[2] / d


def mid_pt_cart(q1: Pair, q2: Pair) -> Vec:
    """FV3 ``mid_pt_cart``: great-circle midpoint of two (lon, lat) points as a unit vector."""
    return mid_pt3_cart(latlon2xyz(q1), latlon2xyz(q2))


def mid_pt_sphere(q1: Pair, q2: Pair) -> Pair:
    """FV3 ``mid_pt_sphere``: great-circle midpoint of two (lon, lat) points."""
    return cart_to_latlon(mid_pt_cart(q1, q2))


def great_circle_dist(q1: Pair, q2: Pair, radius: float | None = None) -> np.ndarray:
    """FV3 ``great_circle_dist`` (haversine): the angle, or ``radius`` times it."""
    s1 = sin((q1[1] - q2[1]) / 2.0)
    s2 = sin((q1[0] - q2[0]) / 2.0)
    beta = asin(np.sqrt(s1 * s1 + cos(q1[1]) * cos(q2[1]) * (s2 * s2))) * 2.0
    return beta if radius is None else radius * beta


def spherical_angle(e1: Vec, e2: Vec, e3: Vec) -> np.ndarray:
    """FV3 ``spherical_angle``: the angle at e1 between the great circles to e2 and e3."""
    p = vect_cross(e1, e2)
    q = vect_cross(e1, e3)
    ddd = (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]) * (q[0] * q[0] + q[1] * q[1] + q[2] * q[2])
    with np.errstate(invalid="ignore", divide="ignore"):
        c = (p[0] * q[0] + p[1] * q[1] + p[2] * q[2]) / np.sqrt(ddd)
    angle = acos(np.clip(c, -1.0, 1.0))
    angle = np.where(np.abs(c) > 1.0, np.where(c < 0.0, PI, 0.0), angle)
    return np.where(ddd <= 0.0, 0.0, angle)


def cos_angle(e1: Vec, e2: Vec, e3: Vec) -> np.ndarray:
    """FV3 ``cos_angle``: the cosine of :func:`spherical_angle` (1 if degenerate)."""
    p = vect_cross(e1, e2)
    q = vect_cross(e1, e3)
    ddd = np.sqrt((p[0] ** 2 + p[1] ** 2 + p[2] ** 2) * (q[0] ** 2 + q[1] ** 2 + q[2] ** 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        c = (p[0] * q[0] + p[1] * q[1] + p[2] * q[2]) / ddd
    return np.where(ddd > 0.0, c, 1.0)


def get_area(p1: Pair, p4: Pair, p2: Pair, p3: Pair, radius: float) -> np.ndarray:
    """FV3 ``get_area(p1, p4, p2, p3, radius)``: spherical excess of the quadrilateral p1 p2 p3 p4
    (FV3's argument order kept: callers pass lower-left, upper-left, lower-right, upper-right)."""
    e1, e2, e3, e4 = latlon2xyz(p1), latlon2xyz(p2), latlon2xyz(p3), latlon2xyz(p4)
    ang1 = spherical_angle(e1, e2, e4)
    ang2 = spherical_angle(e2, e3, e1)
    ang3 = spherical_angle(e3, e4, e2)
    ang4 = spherical_angle(e4, e3, e1)
    return (ang1 + ang2 + ang3 + ang4 - 2.0 * PI) * (radius * radius)


def _spherical_to_cartesian_unit(p: Pair) -> Vec:
    """fv_grid_tools ``spherical_to_cartesian(lon, lat, 1)``: FV3's left-handed frame (z = -sin)."""
    return (1.0 * cos(p[0])) * cos(p[1]), (1.0 * sin(p[0])) * cos(p[1]), -(1.0 * sin(p[1]))


def get_area_tri(p1: Pair, p2: Pair, p3: Pair, radius: float) -> np.ndarray:
    """fv_grid_tools ``get_area_tri(2, p1, p2, p3)``: spherical excess of a triangle."""
    e1, e2, e3 = (_spherical_to_cartesian_unit(p) for p in (p1, p2, p3))
    ang_a = spherical_angle(e2, e1, e3)
    ang_b = spherical_angle(e3, e2, e1)
    ang_c = spherical_angle(e1, e3, e2)
    return (ang_a + ang_b + ang_c - PI) * (radius * radius)


def get_unit_vect2(q1: Pair, q2: Pair) -> Vec:
    """FV3 ``get_unit_vect2``: unit tangent at the midpoint of q1 -> q2, pointing toward q2."""
    p1, p2 = latlon2xyz(q1), latlon2xyz(q2)
    pc = mid_pt3_cart(p1, p2)
    return normalize_vect(vect_cross(pc, vect_cross(p2, p1)))


def get_latlon_vector(p: Pair) -> tuple[Vec, Vec]:
    """FV3 ``get_latlon_vector`` / ``unit_vect_latlon``: local east and north unit vectors."""
    sl, cl = sin(p[0]), cos(p[0])
    sp, cp = sin(p[1]), cos(p[1])
    return (-sl, cl, np.zeros_like(sl)), (-sp * cl, -sp * sl, cp)


# --------------------------------------------------------------------------------------------
# fv_grid_tools.F90 / fv_grid_utils.F90 grid generation (one cube, tile-global indices)
# --------------------------------------------------------------------------------------------
def _mirror_latlon(p1: Pair, p2: Pair, p0: Pair) -> Pair:
    """FV3 ``mirror_latlon``: mirror p0 in the great-circle plane through p1 and p2."""
    e0, e1, e2 = latlon2xyz(p0), latlon2xyz(p1), latlon2xyz(p2)
    nb = normalize_vect(vect_cross(e1, e2))
    pdot = e0[0] * nb[0] + e0[1] * nb[1] + e0[2] * nb[2]
    return cart_to_latlon(tuple(e0[k] - 2.0 * pdot * nb[k] for k in range(3)))  # type: ignore[arg-type]


def gnomonic_ed(im: int) -> Pair:
    """FV3 ``gnomonic_ed``: the equal-edge gnomonic tile, (lon, lat) of shape (im+1, im+1)."""
    rsq3 = 1.0 / math.sqrt(3.0)
    alpha = math.asin(rsq3)
    dely = 2.0 * alpha / float(im)
    lam = np.zeros((im + 1, im + 1))
    th = np.zeros((im + 1, im + 1))
    lam[0, :] = 0.75 * PI
    lam[im, :] = 1.25 * PI
    th[0, :] = -alpha + dely * np.arange(im + 1, dtype=np.float64)
    th[im, :] = th[0, :]
    k = np.arange(1, im)
    lo, la = _mirror_latlon((lam[0, 0], th[0, 0]), (lam[im, im], th[im, im]), (lam[0, k], th[0, k]))
    lam[k, 0], th[k, 0] = lo, la
    lam[k, im], th[k, im] = lo, -la
    pp = np.zeros((3, im + 1, im + 1))
    for a, b in ((0, 0), (im, 0), (0, im), (im, im)):
        pp[:, a, b] = latlon2xyz((lam[a, b], th[a, b]))
    for sel in ((0, k), (k, 0)):  # west and south edges: back onto the cube face x = -1/sqrt(3)
        x, y, z = latlon2xyz((lam[sel], th[sel]))
        pp[0][sel], pp[1][sel], pp[2][sel] = x, -(y * rsq3 / x), -(z * rsq3 / x)
    pp[0] = -rsq3
    pp[1, 1:, 1:] = pp[1, 1:, 0:1]
    pp[2, 1:, 1:] = pp[2, 0:1, 1:]
    return cart_to_latlon((pp[0], pp[1], pp[2]))


def symm_ed(im: int, lam: np.ndarray, th: np.ndarray) -> Pair:
    """FV3 ``symm_ed``: make the tile symmetric about its central lines."""
    lam, th = lam.copy(), th.copy()
    lam[1:im, 1:] = lam[1:im, 0:1]
    i = np.arange(im // 2)
    ip = im - i
    avg = 0.5 * (lam[i, :] - lam[ip, :])
    lam[i, :], lam[ip, :] = avg + PI, PI - avg
    avg = 0.5 * (th[i, :] + th[ip, :])
    th[i, :], th[ip, :] = avg, avg
    avg = 0.5 * (lam[1:im, i] + lam[1:im, ip])
    lam[1:im, i], lam[1:im, ip] = avg, avg
    avg = 0.5 * (th[1:im, i] - th[1:im, ip])
    th[1:im, i], th[1:im, ip] = avg, -avg
    return lam, th


def _rot_3d(axis: int, p: tuple[np.ndarray, np.ndarray, np.ndarray], angle_deg: float):
    """fv_grid_tools ``rot_3d(..., degrees, convert)`` in FV3's left-handed frame (the build
    does not define RIGHT_HAND: z = -r sin(lat), lat = acos(z/r) - pi/2)."""
    lon, lat, r = p
    x = r * cos(lon) * cos(lat)
    y = r * sin(lon) * cos(lat)
    z = -(r * sin(lat))
    a = angle_deg * (PI / 180.0)
    c, s = math.cos(a), math.sin(a)
    if axis == 1:
        x, y, z = x, c * y + s * z, -s * y + c * z
    elif axis == 2:
        x, y, z = c * x - s * z, y, s * x + c * z
    else:
        x, y, z = c * x + s * y, -s * x + c * y, z
    r2 = np.sqrt(x * x + y * y + z * z)
    lon2 = np.where(np.abs(x) + np.abs(y) < 1.0e-10, 0.0, atan2(y, x))
    return lon2, acos(z / r2) - PI / 2.0, r2


def _mirror_grid(lon1: np.ndarray, lat1: np.ndarray, radius: float) -> np.ndarray:
    """FV3 ``mirror_grid``: tile 1 made symmetric, tiles 2..6 by rotation; (6, 2, npx, npx)."""
    npx = lon1.shape[0]
    g = np.zeros((N_TILES, 2, npx, npx))
    g[0, 0], g[0, 1] = lon1, lat1
    q = g[0]
    half = math.ceil(npx / 2.0)
    for j in range(1, half + 1):
        for i in range(1, half + 1):
            ii = (i - 1, npx - i, i - 1, npx - i)
            jj = (j - 1, j - 1, npx - j, npx - j)
            for c in (0, 1):
                v = [q[c, ii[m], jj[m]] for m in range(4)]
                x1 = 0.25 * (abs(v[0]) + abs(v[1]) + abs(v[2]) + abs(v[3]))
                for m in range(4):
                    q[c, ii[m], jj[m]] = math.copysign(x1, q[c, ii[m], jj[m]])
            if npx % 2 != 0 and i == 1 + (npx - 1) / 2.0:
                q[0, i - 1, j - 1] = 0.0
                q[0, i - 1, npx - j] = 0.0
    mid = 1 + (npx - 1) / 2.0
    ii, jj = np.meshgrid(np.arange(1, npx + 1), np.arange(1, npx + 1), indexing="ij")
    odd = npx % 2 != 0
    p1 = (g[0, 0], g[0, 1], np.full((npx, npx), radius))
    for nreg in range(2, N_TILES + 1):
        if nreg == 2:
            lon, lat, _ = _rot_3d(3, p1, -90.0)
        elif nreg == 3:
            lon, lat, _ = _rot_3d(1, _rot_3d(3, p1, -90.0), 90.0)
            if odd:  # north pole and dateline consistency
                pole = (ii == mid) & (ii == jj)
                lon, lat = np.where(pole, 0.0, lon), np.where(pole, PI / 2.0, lat)
                lon = np.where((jj == mid) & (ii < mid), 0.0, lon)
                lon = np.where((jj == mid) & (ii > mid), PI, lon)
        elif nreg == 4:
            lon, lat, _ = _rot_3d(1, _rot_3d(3, p1, -180.0), 90.0)
            if odd:
                lon = np.where(jj == mid, PI, lon)
        elif nreg == 5:
            lon, lat, _ = _rot_3d(2, _rot_3d(3, p1, 90.0), 90.0)
        else:
            lon, lat, _ = _rot_3d(3, _rot_3d(2, p1, 90.0), 0.0)
            if odd:  # south pole and dateline consistency
                pole = (ii == mid) & (ii == jj)
                lon, lat = np.where(pole, 0.0, lon), np.where(pole, -PI / 2.0, lat)
                lon = np.where((ii == mid) & (jj > mid), 0.0, lon)
                lon = np.where((ii == mid) & (jj < mid), PI, lon)
        g[nreg - 1, 0], g[nreg - 1, 1] = lon, lat
    return g


def fv3_tile_grid(n: int, radius: float) -> np.ndarray:
    """FV3's cell corners on the six tiles, (6, 2, n+1, n+1): [tile, lon/lat, i, j], radians.

    ``init_grid`` for ``grid_type = 0``: ``gnomonic_grids``, ``mirror_grid``, the shift by
    ``-pi/shift_fac`` with longitudes wrapped to [0, 2 pi), and the copies that make the points of
    shared tile edges identical (bit for bit what FV3 writes to ``grid_spec``).
    """
    lam, th = gnomonic_ed(n)
    lam, th = symm_ed(n, lam, th)
    g = _mirror_grid(lam - PI, th, radius)
    g[:, 0] = g[:, 0] - PI / SHIFT_FAC
    g[:, 0] = np.where(g[:, 0] < 0.0, g[:, 0] + 2.0 * PI, g[:, 0])
    g[0] = np.where(np.abs(g[0]) < 1.0e-10, 0.0, g[0])
    m = n
    g[1][:, 0, :] = g[0][:, m, :]
    g[2][:, 0, :] = g[0][:, m::-1, m]
    g[4][:, :, m] = g[0][:, 0, m::-1]
    g[5][:, :, m] = g[0][:, :, 0]
    g[2][:, :, 0] = g[1][:, :, m]
    g[3][:, :, 0] = g[1][:, m, m::-1]
    g[5][:, m, :] = g[1][:, m::-1, 0]
    g[3][:, 0, :] = g[2][:, m, :]
    g[4][:, 0, :] = g[2][:, m::-1, m]
    g[2][:, m, :] = g[3][:, 0, :]
    g[4][:, :, 0] = g[3][:, :, m]
    g[5][:, :, 0] = g[3][:, m, m::-1]
    g[5][:, 0, :] = g[4][:, m, :]
    return g


# --------------------------------------------------------------------------------------------
# FMS halo updates and FV3 corner fills on (6, ...) tile arrays with halo
# --------------------------------------------------------------------------------------------
#: stagger (in i, in j) of each location
STAGGER = {"center": (0, 0), "corner": (1, 1), "x": (1, 0), "y": (0, 1)}


class TileHalos:
    """FMS ``mpp_update_domains`` / ``mpp_get_boundary`` for a cube with one tile per rank.

    Arrays are ``(6, n+2h+sx, n+2h+sy)`` (tile, i, j) with ``(sx, sy)`` = :data:`STAGGER` of their
    location: ``"center"``, ``"corner"``, ``"x"`` (x-faces, FMS position EAST) or ``"y"`` (y-faces,
    NORTH).  An update fills the edge halos -- the points beyond one tile edge, FMS's west, east,
    south and north overlaps -- with the neighbour tile's compute-domain value at the same place,
    and leaves the tile's own boundary points and the cube-corner regions (beyond two edges)
    alone, as FMS does on a symmetric domain.  Where the place is found by geometry (a k-d tree over
    the neighbour's compute points), an x-face may map to a y-face of a rotated neighbour; a
    ``SCALAR_PAIR`` then copies the other component as it is, a D-grid vector with the sign of the
    two faces' directions (FMS ``DGRID_NE``).
    """

    def __init__(self, n: int, n_halo: int) -> None:
        self.n, self.h = n, n_halo
        c = fill_tile_halos(tile_corners(n), n_halo, "corner")
        self._pos = {
            "center": normalize(c[:, :-1, :-1] + c[:, 1:, :-1] + c[:, 1:, 1:] + c[:, :-1, 1:]),
            "corner": c,
            "x": normalize(c[:, :, :-1] + c[:, :, 1:]),
            "y": normalize(c[:, :-1, :] + c[:, 1:, :]),
        }
        self._tangent = {"x": c[:, :, 1:] - c[:, :, :-1], "y": c[:, 1:, :] - c[:, :-1, :]}
        self._scalar: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for loc in ("center", "corner"):
            dst, comp, src, _ = self._halo_map(loc, (loc,))
            self._scalar[loc] = (dst, src)
        self._faces = {loc: self._halo_map(loc, ("x", "y")) for loc in ("x", "y")}
        self._bounds = {side: self._boundary_map(side) for side in ("west", "east")}

    # --- regions and maps -----------------------------------------------------------------
    def shape(self, loc: str) -> tuple[int, int, int]:
        sx, sy = STAGGER[loc]
        m = self.n + 2 * self.h
        return (N_TILES, m + sx, m + sy)

    def _compute_mask(self, loc: str) -> np.ndarray:
        sx, sy = STAGGER[loc]
        h, n = self.h, self.n
        mask = np.zeros(self.shape(loc)[1:], bool)
        mask[h : h + n + sx, h : h + n + sy] = True
        return mask

    def _side_mask(self, loc: str, side: str) -> np.ndarray:
        sx, sy = STAGGER[loc]
        h, n = self.h, self.n
        ni, nj = self.shape(loc)[1:]
        i = np.arange(ni)[:, None]
        j = np.arange(nj)[None, :]
        in_i = (i >= h) & (i < h + n + sx)
        in_j = (j >= h) & (j < h + n + sy)
        return {
            "west": (i < h) & in_j,
            "east": (i >= h + n + sx) & in_j,
            "south": (j < h) & in_i,
            "north": (j >= h + n + sy) & in_i,
        }[side]

    def _sources(self, tile: int, kinds: tuple[str, ...]):
        pts, meta = [], []
        for c, kind in enumerate(kinds):
            mask = self._compute_mask(kind)
            ii, jj = np.nonzero(mask)
            pts.append(self._pos[kind][tile][ii, jj])
            flat = np.ravel_multi_index((np.full_like(ii, tile), ii, jj), self.shape(kind))
            meta.append(np.stack([np.full_like(ii, c), flat, ii, jj], axis=1))
        return cKDTree(np.concatenate(pts)), np.concatenate(meta)

    def _match(self, loc: str, tile: int, mask: np.ndarray, nb: int, kinds: tuple[str, ...]):
        tree, meta = self._sources(nb, kinds)
        ii, jj = np.nonzero(mask)
        dist, k = tree.query(self._pos[loc][tile][ii, jj])
        if len(dist) and dist.max() > 1e-9:  # pragma: no cover - a geometry bug
            raise RuntimeError(f"halo map: tile {tile} {loc} has no source (distance {dist.max()})")
        src = meta[k]
        dst = np.ravel_multi_index((np.full_like(ii, tile), ii, jj), self.shape(loc))
        sign = np.ones(len(ii))
        if loc in self._tangent:
            mine = self._tangent[loc][tile][ii, jj]
            theirs = np.empty_like(mine)
            for c, kind in enumerate(kinds):
                sel = src[:, 0] == c
                theirs[sel] = self._tangent[kind][nb][src[sel, 2], src[sel, 3]]
            sign = np.sign(np.sum(mine * theirs, axis=-1))
        return dst, src[:, 0], src[:, 1], sign

    def _halo_map(self, loc: str, kinds: tuple[str, ...]):
        conn = connectivity()
        parts = [
            self._match(loc, t, self._side_mask(loc, side), conn[(t, side)].tile, kinds)
            for t in range(N_TILES)
            for side in SIDES
        ]
        return tuple(np.concatenate([p[k] for p in parts]) for k in range(4))

    def _boundary_map(self, side: str):
        """Each tile's west or east boundary x-faces and the neighbour's face at the same place."""
        h, n = self.h, self.n
        conn = connectivity()
        parts = []
        for t in range(N_TILES):
            mask = np.zeros(self.shape("x")[1:], bool)
            mask[h if side == "west" else h + n, h : h + n] = True
            parts.append(self._match("x", t, mask, conn[(t, side)].tile, ("x", "y")))
        return tuple(np.concatenate([p[k] for p in parts]) for k in range(4))

    # --- operations -------------------------------------------------------------------------
    def update(self, q: np.ndarray, loc: str) -> None:
        """``mpp_update_domains(q, position=loc)`` of a scalar at centres or corners, in place."""
        dst, src = self._scalar[loc]
        q.flat[dst] = q.flat[src]

    def update_pair(self, qx: np.ndarray, qy: np.ndarray, *, vector: bool = False) -> None:
        """``mpp_update_domains(qx, qy, ...)`` of an x-face / y-face pair, in place: a
        ``SCALAR_PAIR`` (``vector=False``) or a D-grid vector (``u`` on y-faces, ``v`` on x-faces)."""
        old = (qx.copy(), qy.copy())
        for q, loc in ((qx, "x"), (qy, "y")):
            dst, comp, src, sign = self._faces[loc]
            vals = _gather(old, comp, src)
            q.flat[dst] = vals * sign if vector else vals

    def boundary(self, side: str, qx: np.ndarray, qy: np.ndarray) -> np.ndarray:
        """``mpp_get_boundary`` (``SCALAR_PAIR``, x-direction): the neighbour's values on each
        tile's ``side`` boundary x-faces, (6, n)."""
        dst, comp, src, _ = self._bounds[side]
        return _gather((qx, qy), comp, src).reshape(N_TILES, self.n)


def _gather(arrays: tuple[np.ndarray, np.ndarray], comp: np.ndarray, src: np.ndarray) -> np.ndarray:
    vals = np.empty(len(src))
    for c, a in enumerate(arrays):
        sel = comp == c
        vals[sel] = a.flat[src[sel]]
    return vals


class FortranIndex:
    """Fortran (tile-global, 1-based) indices into the tile arrays: Python index = f + h - 1."""

    def __init__(self, n: int, h: int) -> None:
        self.n, self.h, self.o = n, h, h - 1
        self.npx = self.npy = n + 1
        self.isd = self.jsd = 1 - h
        self.ied = self.jed = n + h

    def __call__(self, f: int) -> int:
        return f + self.o

    def r(self, a: int, b: int) -> slice:
        """The inclusive Fortran range a..b."""
        return slice(a + self.o, b + self.o + 1)


def fill_corners_bgrid(q: np.ndarray, F: FortranIndex, fill: str = "x") -> None:
    """FV3 ``fill_corners(q, npx, npy, FILL=XDir|YDir, BGRID=.true.)`` at all four cube corners."""
    npx, npy, ng = F.npx, F.npy, F.h
    for j in range(1, ng + 1):
        for i in range(1, ng + 1):
            if fill == "x":
                q[:, F(1 - i), F(1 - j)] = q[:, F(1 - j), F(i + 1)]
                q[:, F(1 - i), F(npy + j)] = q[:, F(1 - j), F(npy - i)]
                q[:, F(npx + i), F(1 - j)] = q[:, F(npx + j), F(i + 1)]
                q[:, F(npx + i), F(npy + j)] = q[:, F(npx + j), F(npy - i)]
            else:
                q[:, F(1 - j), F(1 - i)] = q[:, F(i + 1), F(1 - j)]
                q[:, F(1 - j), F(npy + i)] = q[:, F(i + 1), F(npy + j)]
                q[:, F(npx + j), F(1 - i)] = q[:, F(npx - i), F(1 - j)]
                q[:, F(npx + j), F(npy + i)] = q[:, F(npx - i), F(npy + j)]


def fill_corners_agrid_scalar(q: np.ndarray, F: FortranIndex, fill: str = "x") -> None:
    """FV3 ``fill_corners(q, npx, npy, FILL=XDir|YDir, AGRID=.true.)`` (cell-centred scalar)."""
    npx, npy, ng = F.npx, F.npy, F.h
    for j in range(1, ng + 1):
        for i in range(1, ng + 1):
            if fill == "x":
                q[:, F(1 - i), F(1 - j)] = q[:, F(1 - j), F(i)]
                q[:, F(1 - i), F(npy - 1 + j)] = q[:, F(1 - j), F(npy - 1 - i + 1)]
                q[:, F(npx - 1 + i), F(1 - j)] = q[:, F(npx - 1 + j), F(i)]
                q[:, F(npx - 1 + i), F(npy - 1 + j)] = q[:, F(npx - 1 + j), F(npy - 1 - i + 1)]
            else:
                q[:, F(1 - j), F(1 - i)] = q[:, F(i), F(1 - j)]
                q[:, F(1 - j), F(npy - 1 + i)] = q[:, F(i), F(npy - 1 + j)]
                q[:, F(npx - 1 + j), F(1 - i)] = q[:, F(npx - 1 - i + 1), F(1 - j)]
                q[:, F(npx - 1 + j), F(npy - 1 + i)] = q[:, F(npx - 1 - i + 1), F(npy - 1 + j)]


def fill_corners_pair(x: np.ndarray, y: np.ndarray, F: FortranIndex, grid: str, sign: float = 1.0):
    """FV3 ``fill_corners(x, y, npx, npy, AGRID|CGRID|DGRID=.true.[, VECTOR=.true.])``:
    ``fill_corners_agrid`` / ``_cgrid`` / ``_dgrid`` with ``mySign = sign``."""
    npx, npy, ng = F.npx, F.npy, F.h
    s = sign
    rng = [(i, j) for j in range(1, ng + 1) for i in range(1, ng + 1)]
    if grid == "A":
        for i, j in rng:
            x[:, F(1 - i), F(1 - j)] = s * y[:, F(1 - j), F(i)]
            x[:, F(1 - i), F(npy - 1 + j)] = y[:, F(1 - j), F(npy - 1 - i + 1)]
            x[:, F(npx - 1 + i), F(1 - j)] = y[:, F(npx - 1 + j), F(i)]
            x[:, F(npx - 1 + i), F(npy - 1 + j)] = s * y[:, F(npx - 1 + j), F(npy - 1 - i + 1)]
        for i, j in rng:
            y[:, F(1 - j), F(1 - i)] = s * x[:, F(i), F(1 - j)]
            y[:, F(1 - j), F(npy - 1 + i)] = x[:, F(i), F(npy - 1 + j)]
            y[:, F(npx - 1 + j), F(1 - i)] = x[:, F(npx - 1 - i + 1), F(1 - j)]
            y[:, F(npx - 1 + j), F(npy - 1 + i)] = s * x[:, F(npx - 1 - i + 1), F(npy - 1 + j)]
    elif grid == "C":
        for i, j in rng:
            x[:, F(1 - i), F(1 - j)] = y[:, F(j), F(1 - i)]
            x[:, F(1 - i), F(npy - 1 + j)] = s * y[:, F(j), F(npy + i)]
            x[:, F(npx + i), F(1 - j)] = s * y[:, F(npx - j), F(1 - i)]
            x[:, F(npx + i), F(npy - 1 + j)] = y[:, F(npx - j), F(npy + i)]
        for i, j in rng:
            y[:, F(1 - i), F(1 - j)] = x[:, F(1 - j), F(i)]
            y[:, F(1 - i), F(npy + j)] = s * x[:, F(1 - j), F(npy - i)]
            y[:, F(npx - 1 + i), F(1 - j)] = s * x[:, F(npx + j), F(i)]
            y[:, F(npx - 1 + i), F(npy + j)] = x[:, F(npx + j), F(npy - i)]
    elif grid == "D":
        for i, j in rng:
            x[:, F(1 - i), F(1 - j)] = s * y[:, F(1 - j), F(i)]
            x[:, F(1 - i), F(npy + j)] = y[:, F(1 - j), F(npy - i)]
            x[:, F(npx - 1 + i), F(1 - j)] = y[:, F(npx + j), F(i)]
            x[:, F(npx - 1 + i), F(npy + j)] = s * y[:, F(npx + j), F(npy - i)]
        for i, j in rng:
            y[:, F(1 - i), F(1 - j)] = s * x[:, F(j), F(1 - i)]
            y[:, F(1 - i), F(npy - 1 + j)] = x[:, F(j), F(npy + i)]
            y[:, F(npx + i), F(1 - j)] = x[:, F(npx - j), F(1 - i)]
            y[:, F(npx + i), F(npy - 1 + j)] = s * x[:, F(npx - j), F(npy + i)]
    else:  # pragma: no cover
        raise ValueError(grid)


def fill_ghost(q: np.ndarray, F: FortranIndex, value: float) -> None:
    """FV3 ``fill_ghost``: ``value`` in the four cube-corner regions of a cell-centred array."""
    lo, hi = F.r(F.isd, 0), F.r(F.npx, F.ied)
    loj, hij = F.r(F.jsd, 0), F.r(F.npy, F.jed)
    for si in (lo, hi):
        for sj in (loj, hij):
            q[..., si, sj] = value


def _corner_regions(F: FortranIndex, loc: str) -> np.ndarray:
    """Mask of the cube-corner halo regions (beyond two tile edges) of a location."""
    sx, sy = STAGGER[loc]
    ni, nj = F.n + 2 * F.h + sx, F.n + 2 * F.h + sy
    i = np.arange(ni)[:, None]
    j = np.arange(nj)[None, :]
    out_i = (i < F.h) | (i >= F.h + F.n + sx)
    out_j = (j < F.h) | (j >= F.h + F.n + sy)
    return out_i & out_j


# --------------------------------------------------------------------------------------------
# sorted_index.F90
# --------------------------------------------------------------------------------------------
_CYCLE_A = np.array([(0, 0), (0, 1), (1, 1), (1, 0)])  # sorted_inta: around a cell from (i, j)
_CYCLE_B = np.array([(0, 0), (0, -1), (-1, -1), (-1, 0)])  # sorted_intb: around a corner


def _sorted_cycle(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """``sort_rectangle``: (4, ...) cycle positions of the 4 points in integration order.

    FV3 sorts the four points by longitude, then (stably) by latitude, starts at the first and
    goes around the quadrilateral toward the second (the third if the second is the opposite
    corner): the order of operations then does not depend on the tile's orientation.
    """
    orig = np.broadcast_to(np.arange(4).reshape((4,) + (1,) * (xs.ndim - 1)), xs.shape)
    order = np.lexsort((orig, xs, ys), axis=0)
    a, s2, s3 = order[0], order[1], order[2]
    b = np.where((s2 - a) % 4 == 2, s3, s2)
    step = np.where((b - a) % 4 == 1, 1, -1)
    return np.stack([(a + k * step) % 4 for k in range(4)])


def _sorted_triangle(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """``sort_triangle``: the 3 points sorted by longitude, then stably by latitude."""
    return np.lexsort((np.arange(3), xs, ys))


# --------------------------------------------------------------------------------------------
# The cube
# --------------------------------------------------------------------------------------------
def points_at(p: Pair, si: Any, sj: Any) -> Pair:
    """(lon, lat) of ``(6, ...)`` tile arrays at index/slice ``si, sj`` (all tiles)."""
    return p[0][:, si, sj], p[1][:, si, sj]


def vectors_at(v: Vec, si: Any, sj: Any) -> Vec:
    """(x, y, z) of ``(6, ...)`` tile arrays at index/slice ``si, sj`` (all tiles)."""
    return v[0][:, si, sj], v[1][:, si, sj], v[2][:, si, sj]


@dataclass(frozen=True, eq=False)
class CubedSphere:
    """FV3's grid and metric terms on all six tiles (one tile per rank), with halos.

    ``fields[name]`` is a ``(6, ...)`` array of the tile (tile-global Fortran index ``f`` at Python
    index ``f + n_halo - 1``); vectors ``(6, ..., 3)``, FV3's extra index first after the tile
    (``sin_sg``: ``(6, 9, ...)``).  Build with :meth:`build`; cut ranks out with
    :meth:`metric_terms`.  ``alpha`` is the test case's rotation angle that ``init_case`` uses in
    the Coriolis parameters ``fC`` and ``f0``.
    """

    resolution: int
    n_halo: int
    radius: float
    omega: float
    alpha: float
    fields: dict[str, np.ndarray] = field(repr=False)
    da_min: float
    da_max: float
    da_min_c: float
    da_max_c: float
    halos: TileHalos = field(repr=False)

    @classmethod
    def build(
        cls,
        resolution: int,
        *,
        radius: float,
        omega: float,
        alpha: float = 0.0,
        n_halo: int = 3,
    ) -> CubedSphere:
        """FV3's ``init_grid`` + ``grid_utils_init`` (+ ``init_case``'s ``fC``, ``f0``) at C
        ``resolution`` with constants ``radius`` (m), ``omega`` (1/s); ``alpha`` in radians."""
        n = int(resolution)
        if n < 2:
            raise FV3ConfigError(f"resolution C{n} is too small: use at least C2")
        if n % 2:
            raise FV3ConfigError(
                f"resolution C{n}: FV3's efactor_a2c_v needs an even resolution (npx odd)"
            )
        if n_halo < 2:
            raise FV3ConfigError(f"n_halo={n_halo}: FV3's metric terms need at least 2 halo points")
        halos = TileHalos(n, n_halo)
        out, scalars = _build_fields(n, n_halo, float(radius), float(omega), float(alpha), halos)
        for a in out.values():
            a.setflags(write=False)
        return cls(n, n_halo, float(radius), float(omega), float(alpha), out, *scalars, halos)

    def metric_terms(self, spec: SubdomainSpec) -> MetricTerms:
        """One rank's metric terms (compute domain and halo), see :class:`MetricTerms`."""
        if spec.resolution != self.resolution or spec.n_halo != self.n_halo:
            raise FV3ConfigError(
                f"subdomain C{spec.resolution} with n_halo={spec.n_halo} does not fit this cube "
                f"(C{self.resolution}, n_halo={self.n_halo}): build CubedSphere with the same values"
            )
        arrays = {
            name: rank_slice(a, spec, _LOCATIONS[name], leading=name in _LEADING)
            for name, a in self.fields.items()
        }
        return MetricTerms(
            spec=spec,
            radius=self.radius,
            omega=self.omega,
            alpha=self.alpha,
            da_min=self.da_min,
            da_max=self.da_max,
            da_min_c=self.da_min_c,
            da_max_c=self.da_max_c,
            sw_corner=spec.on_west and spec.on_south,
            se_corner=spec.on_east and spec.on_south,
            ne_corner=spec.on_east and spec.on_north,
            nw_corner=spec.on_west and spec.on_north,
            **arrays,
        )


#: location of every field (for cutting ranks); edge factors are 1-D along one axis
_LOCATIONS: dict[str, str] = {}


def _loc(name: str, loc: str) -> None:
    _LOCATIONS[name] = loc


for _n in ("agrid", "dxa", "dya", "rdxa", "rdya", "area", "rarea", "sin_sg", "cos_sg", "cosa_s",
           "rsin2", "ec1", "ec2", "vlon", "vlat", "a11", "a12", "a21", "a22", "f0"):  # fmt: skip
    _loc(_n, "center")
for _n in ("grid", "area_c", "rarea_c", "cosa", "sina", "rsina", "ee1", "ee2", "fC"):
    _loc(_n, "corner")
for _n in ("dy", "rdy", "dxc", "rdxc", "cosa_u", "sina_u", "rsin_u", "divg_v", "del6_v", "ew"):
    _loc(_n, "x")
for _n in ("dx", "rdx", "dyc", "rdyc", "cosa_v", "sina_v", "rsin_v", "divg_u", "del6_u", "es"):
    _loc(_n, "y")
for _n, _l in (("edge_w", "corner_j"), ("edge_e", "corner_j"), ("edge_s", "corner_i"),
               ("edge_n", "corner_i"), ("edge_vect_w", "center_j"), ("edge_vect_e", "center_j"),
               ("edge_vect_s", "center_i"), ("edge_vect_n", "center_i")):  # fmt: skip
    _loc(_n, _l)

# arrays whose FV3 extra index (sin_sg's 9, ew's 2) comes before (i, j)
_LEADING = {"sin_sg", "cos_sg", "ew", "es"}


def rank_slice(
    a: np.ndarray, spec: SubdomainSpec, loc: str, *, leading: bool = False
) -> np.ndarray:
    """One rank's data domain (compute + halo) of a ``(6, ...)`` tile array at ``loc``
    (``leading``: the array has an extra index before i, j, as ``sin_sg``)."""
    h = spec.n_halo
    t = a[spec.tile]
    if loc in ("corner_i", "center_i", "corner_j", "center_j"):
        s = 1 if loc.startswith("corner") else 0
        lo, hi = (spec.i0, spec.i1) if loc.endswith("_i") else (spec.j0, spec.j1)
        return np.array(t[lo : hi + 2 * h + s])
    sx, sy = STAGGER[loc]
    si = slice(spec.i0, spec.i1 + 2 * h + sx)
    sj = slice(spec.j0, spec.j1 + 2 * h + sy)
    if leading:
        return np.array(t[:, si, sj])
    return np.array(t[si, sj])


def _build_fields(n: int, h: int, radius: float, omega: float, alpha: float, halos: TileHalos):
    """The three FV3 routines in their order; returns the fields and (da_min, da_max, da_min_c,
    da_max_c)."""
    F = FortranIndex(n, h)
    out = _init_grid(F, halos, radius)
    scalars = _grid_utils_init(F, halos, out)
    out.update(_init_case_coriolis(out, halos, omega, alpha))
    return out, scalars


def _init_grid(F: FortranIndex, halos: TileHalos, radius: float) -> dict[str, np.ndarray]:
    """fv_grid_tools ``init_grid`` (cubed sphere, not stretched, not nested)."""
    n = F.n
    npx, npy = F.npx, F.npy
    isd, ied, jsd, jed = F.isd, F.ied, F.jsd, F.jed
    r = F.r
    shape = halos.shape

    def new(loc: str, fill: float = np.nan) -> np.ndarray:
        return np.full(shape(loc), fill)

    # corners: FV3's global grid, the halo from the neighbours, the cube corners filled from x
    g = fv3_tile_grid(n, radius)
    lon, lat = new("corner"), new("corner")
    lon[:, r(1, npx), r(1, npy)], lat[:, r(1, npx), r(1, npy)] = g[:, 0], g[:, 1]
    for q in (lon, lat):
        halos.update(q, "corner")
        fill_corners_bgrid(q, F, "x")
    grid = (lon, lat)

    # dx on the compute domain; dy = dx transposed (get_symmetry); FV3 takes the neighbour's dy on
    # the east boundary and, on tiles 1, 3, 5, on the west boundary (mpp_get_boundary)
    dx, dy = new("y"), new("x")
    dx[:, r(1, npx - 1), r(1, npy)] = great_circle_dist(
        points_at(grid, r(2, npx), r(1, npy)), points_at(grid, r(1, npx - 1), r(1, npy)), radius
    )
    dy[:, r(1, npx), r(1, npy - 1)] = np.swapaxes(dx[:, r(1, npx - 1), r(1, npy)], 1, 2)
    wbuffer = halos.boundary("west", dy, dx)
    ebuffer = halos.boundary("east", dy, dx)
    for t in range(0, N_TILES, 2):
        dy[t, F(1), r(1, npy - 1)] = wbuffer[t]
    dy[:, F(npx), r(1, npy - 1)] = ebuffer
    halos.update_pair(dy, dx)
    fill_corners_pair(dx, dy, F, "D")

    # cell centres: cell_center2 of the corners in sorted_inta order
    xs = np.stack([lon[:, :-1, :-1], lon[:, :-1, 1:], lon[:, 1:, 1:], lon[:, 1:, :-1]])
    ys = np.stack([lat[:, :-1, :-1], lat[:, :-1, 1:], lat[:, 1:, 1:], lat[:, 1:, :-1]])
    cyc_a = _sorted_cycle(xs, ys)  # (4, 6, ni, nj) over the whole data domain
    ti, ii, jj = np.meshgrid(*(np.arange(s) for s in shape("center")), indexing="ij")

    def inta(k: int, p: Pair | Vec) -> tuple[np.ndarray, ...]:
        off = _CYCLE_A[cyc_a[k]]
        return tuple(c[ti, ii + off[..., 0], jj + off[..., 1]] for c in p)

    alon, alat = new("center", -1.0e25), new("center", -1.0e25)
    cs = r(1, n)
    pk = [latlon2xyz(inta(k, grid)) for k in range(4)]
    ec = tuple(((pk[0][c] + pk[1][c]) + pk[2][c]) + pk[3][c] for c in range(3))
    dd = np.sqrt(ec[0] ** 2 + ec[1] ** 2 + ec[2] ** 2)
    clon, clat = cart_to_latlon((ec[0] / dd, ec[1] / dd, ec[2] / dd))
    alon[:, cs, cs], alat[:, cs, cs] = clon[:, cs, cs], clat[:, cs, cs]
    halos.update(alon, "center")
    halos.update(alat, "center")
    fill_corners_agrid_scalar(alon, F, "x")  # FV3 fills lon from the x side,
    fill_corners_agrid_scalar(alat, F, "y")  # lat from the y side
    agrid = (alon, alat)

    # dxa, dya on the whole data domain
    c00, c10 = (
        points_at(grid, r(isd, ied), r(jsd, jed)),
        points_at(grid, r(isd + 1, ied + 1), r(jsd, jed)),
    )
    c01, c11 = (
        points_at(grid, r(isd, ied), r(jsd + 1, jed + 1)),
        points_at(grid, r(isd + 1, ied + 1), r(jsd + 1, jed + 1)),
    )  # noqa: E501
    dxa = great_circle_dist(mid_pt_sphere(c10, c11), mid_pt_sphere(c00, c01), radius)
    dya = great_circle_dist(mid_pt_sphere(c01, c11), mid_pt_sphere(c00, c10), radius)
    fill_corners_pair(dxa, dya, F, "A")

    # dxc, dyc between centres
    dxc, dyc = new("x"), new("y")
    dxc[:, r(isd + 1, ied), :] = great_circle_dist(
        points_at(agrid, r(isd + 1, ied), slice(None)),
        points_at(agrid, r(isd, ied - 1), slice(None)),
        radius,
    )
    dxc[:, F(isd), :] = dxc[:, F(isd + 1), :]
    dxc[:, F(ied + 1), :] = dxc[:, F(ied), :]
    dyc[:, :, r(jsd + 1, jed)] = great_circle_dist(
        points_at(agrid, slice(None), r(jsd + 1, jed)),
        points_at(agrid, slice(None), r(jsd, jed - 1)),
        radius,
    )
    dyc[:, :, F(jsd)] = dyc[:, :, F(jsd + 1)]
    dyc[:, :, F(jed + 1)] = dyc[:, :, F(jed)]

    # grid_area: cell areas (sorted_inta) and dual-cell areas around corners (sorted_intb)
    area, area_c = new("center"), new("corner")
    p_ll, p_ul, p_ur, p_lr = (inta(k, grid) for k in range(4))
    a_all = get_area(p_ll, p_ul, p_lr, p_ur, radius)
    area[:, cs, cs] = a_all[:, cs, cs]
    cc = r(1, npx)  # compute corners
    ci, cj = np.meshgrid(np.arange(F(1), F(npx) + 1), np.arange(F(1), F(npy) + 1), indexing="ij")
    cand = [(ci + di, cj + dj) for di, dj in _CYCLE_B]
    xs = np.stack([alon[:, a, b] for a, b in cand])
    ys = np.stack([alat[:, a, b] for a, b in cand])
    cyc_b = _sorted_cycle(xs, ys)  # (4, 6, npx, npy)
    tt = np.arange(N_TILES)[:, None, None]

    def intb(k: int, p: Pair) -> Pair:
        off = _CYCLE_B[cyc_b[k]]
        return tuple(c[tt, ci + off[..., 0], cj + off[..., 1]] for c in p)  # type: ignore[return-value]

    q_ll, q_lr, q_ur, q_ul = (intb(k, agrid) for k in range(4))
    area_c[:, cc, cc] = get_area(q_ll, q_ul, q_lr, q_ur, radius)
    # cube vertices: triangles (sort_triangle)
    for (vi, vj), offs in (
        ((1, 1), ((0, 0), (0, -1), (-1, 0))),
        ((npx, 1), ((0, 0), (-1, 0), (-1, -1))),
        ((npx, npy), ((-1, -1), (0, -1), (-1, 0))),
        ((1, npy), ((0, 0), (-1, -1), (0, -1))),
    ):
        for t in range(N_TILES):
            pts = [(F(vi + di), F(vj + dj)) for di, dj in offs]
            order = _sorted_triangle(
                np.array([alon[t][p] for p in pts]), np.array([alat[t][p] for p in pts])
            )
            tri = [(np.array(alon[t][pts[k]]), np.array(alat[t][pts[k]])) for k in order]
            area_c[t, F(vi), F(vj)] = get_area_tri(tri[0], tri[1], tri[2], radius)

    # symmetrical grids: area_c, dxc, dyc on the tile edges from half cells
    js1 = r(1, npy)  # js..je+1
    jm1 = r(0, npy - 1)
    jp1 = r(2, npy + 1)
    jc = r(1, npy - 1)  # js..je
    mid = mid_pt_sphere
    i = F(1)
    area_c[:, i, js1] = 2.0 * get_area(
        mid(points_at(grid, i, jm1), points_at(grid, i, js1)),
        mid(points_at(grid, i, js1), points_at(grid, i, jp1)),
        points_at(agrid, i, jm1),
        points_at(agrid, i, js1),
        radius,
    )
    dxc[:, i, jc] = 2.0 * great_circle_dist(
        mid(points_at(grid, i, jc), points_at(grid, i, r(2, npy))), points_at(agrid, i, jc), radius
    )
    i, ia = F(npx), F(npx - 1)
    area_c[:, i, js1] = 2.0 * get_area(
        points_at(agrid, ia, jm1),
        points_at(agrid, ia, js1),
        mid(points_at(grid, i, jm1), points_at(grid, i, js1)),
        mid(points_at(grid, i, js1), points_at(grid, i, jp1)),
        radius,
    )
    dxc[:, i, jc] = 2.0 * great_circle_dist(
        points_at(agrid, ia, jc), mid(points_at(grid, i, jc), points_at(grid, i, r(2, npy))), radius
    )
    is1, im1, ip1, ic = r(1, npx), r(0, npx - 1), r(2, npx + 1), r(1, npx - 1)
    j = F(1)
    area_c[:, is1, j] = 2.0 * get_area(
        mid(points_at(grid, im1, j), points_at(grid, is1, j)),
        points_at(agrid, im1, j),
        mid(points_at(grid, is1, j), points_at(grid, ip1, j)),
        points_at(agrid, is1, j),
        radius,
    )
    dyc[:, ic, j] = 2.0 * great_circle_dist(
        mid(points_at(grid, ic, j), points_at(grid, r(2, npx), j)), points_at(agrid, ic, j), radius
    )
    j, ja = F(npy), F(npy - 1)
    area_c[:, is1, j] = 2.0 * get_area(
        points_at(agrid, im1, ja),
        mid(points_at(grid, im1, j), points_at(grid, is1, j)),
        points_at(agrid, is1, ja),
        mid(points_at(grid, is1, j), points_at(grid, ip1, j)),
        radius,
    )
    dyc[:, ic, j] = 2.0 * great_circle_dist(
        points_at(agrid, ic, ja), mid(points_at(grid, ic, j), points_at(grid, r(2, npx), j)), radius
    )

    halos.update_pair(dxc, dyc)
    fill_corners_pair(dxc, dyc, F, "C")
    halos.update(area, "center")
    halos.update(area_c, "corner")
    fill_ghost(area, F, -BIG_NUMBER)
    fill_corners_bgrid(area_c, F, "x")

    out: dict[str, np.ndarray] = {
        "grid": np.stack([lon, lat], axis=-1),
        "agrid": np.stack([alon, alat], axis=-1),
        "dx": dx, "dy": dy, "dxa": dxa, "dya": dya, "dxc": dxc, "dyc": dyc,
        "rdx": 1.0 / dx, "rdy": 1.0 / dy, "rdxc": 1.0 / dxc, "rdyc": 1.0 / dyc,
        "rdxa": 1.0 / dxa, "rdya": 1.0 / dya,
        "area": area, "rarea": 1.0 / area, "area_c": area_c, "rarea_c": 1.0 / area_c,
    }  # fmt: skip
    return out


def _grid_utils_init(F: FortranIndex, halos: TileHalos, out: dict[str, np.ndarray]):
    """fv_grid_utils ``grid_utils_init`` (``non_ortho``, ``grid_type < 3``): adds its fields to
    ``out``; returns (da_min, da_max, da_min_c, da_max_c)."""
    n = F.n
    npx, npy = F.npx, F.npy
    isd, ied, jsd, jed = F.isd, F.ied, F.jsd, F.jed
    r = F.r
    shape = halos.shape
    cs = r(1, n)

    def new(loc: str, fill: float = np.nan) -> np.ndarray:
        return np.full(shape(loc), fill)

    lon, lat = out["grid"][..., 0].copy(), out["grid"][..., 1].copy()
    alon, alat = out["agrid"][..., 0], out["agrid"][..., 1]
    grid, agrid = (lon, lat), (alon, alat)
    dx, dy, dxc, dyc = out["dx"], out["dy"], out["dxc"], out["dyc"]
    area, area_c = out["area"], out["area_c"]
    fill_corners_bgrid(lon, F, "x")  # (again, as grid_utils_init does: no change)
    fill_corners_bgrid(lat, F, "x")
    grid3 = latlon2xyz(grid)

    # get_center_vect: ec1, ec2 (0 in the corner regions, then fill_ghost big_number)
    p00, p10 = (
        vectors_at(grid3, slice(0, -1), slice(0, -1)),
        vectors_at(grid3, slice(1, None), slice(0, -1)),
    )
    p01, p11 = (
        vectors_at(grid3, slice(0, -1), slice(1, None)),
        vectors_at(grid3, slice(1, None), slice(1, None)),
    )  # noqa: E501
    e = tuple(((p00[c] + p10[c]) + p01[c]) + p11[c] for c in range(3))
    d = np.sqrt(e[0] ** 2 + e[1] ** 2 + e[2] ** 2)
    pc = (e[0] / d, e[1] / d, e[2] / d)
    ec1 = normalize_vect(vect_cross(pc, vect_cross(mid_pt3_cart(p10, p11), mid_pt3_cart(p00, p01))))
    ec2 = normalize_vect(vect_cross(pc, vect_cross(mid_pt3_cart(p01, p11), mid_pt3_cart(p00, p10))))
    ec1, ec2 = np.stack(ec1, axis=-1), np.stack(ec2, axis=-1)
    corner_cells = _corner_regions(F, "center")
    ec1[:, corner_cells], ec2[:, corner_cells] = 0.0, 0.0
    fill_ghost(np.moveaxis(ec1, -1, 0), F, BIG_NUMBER)
    fill_ghost(np.moveaxis(ec2, -1, 0), F, BIG_NUMBER)

    axyz = latlon2xyz(agrid)
    # ew: unit vectors at x-faces (i = isd+1..ied); 0 in the corner regions; isd, ied+1 unset
    ew = np.full((N_TILES, 2) + shape("x")[1:] + (3,), np.nan)
    fi = np.arange(isd, ied + 2)[:, None]  # Fortran i of x-faces
    fj = np.arange(jsd, jed + 1)[None, :]
    s_i = r(isd + 1, ied)
    pp = mid_pt_cart(points_at(grid, s_i, r(jsd, jed)), points_at(grid, s_i, r(jsd + 1, jed + 1)))
    a_left = vectors_at(axyz, r(isd, ied - 1), slice(None))
    a_right = vectors_at(axyz, r(isd + 1, ied), slice(None))
    # interior: p3 x p1 with p3 = left centre, p1 = right centre; i = 1: pp x right; i = npx: left x pp
    p2 = vect_cross(a_left, a_right)
    fi_s = fi[s_i]
    p2_w = vect_cross(pp, a_right)
    p2_e = vect_cross(a_left, pp)
    p2 = tuple(
        np.where(fi_s == 1, p2_w[c], np.where(fi_s == npx, p2_e[c], p2[c])) for c in range(3)
    )
    ew1 = normalize_vect(vect_cross(p2, pp))
    ew2 = normalize_vect(
        vect_cross(
            vect_cross(
                vectors_at(grid3, s_i, r(jsd, jed)), vectors_at(grid3, s_i, r(jsd + 1, jed + 1))
            ),
            pp,
        )
    )
    ew[:, 0, s_i], ew[:, 1, s_i] = np.stack(ew1, -1), np.stack(ew2, -1)
    zero = ((fi < 1) | (fi > npx)) & ((fj < 1) | (fj > npy - 1))
    ew[:, :, zero & (fi > isd) & (fi < ied + 1)] = 0.0

    # es: unit vectors at y-faces (j = jsd+1..jed); 0 in the corner regions; jsd, jed+1 unset
    es = np.full((N_TILES, 2) + shape("y")[1:] + (3,), np.nan)
    gi = np.arange(isd, ied + 1)[:, None]
    gj = np.arange(jsd, jed + 2)[None, :]
    s_j = r(jsd + 1, jed)
    pp = mid_pt_cart(points_at(grid, r(isd, ied), s_j), points_at(grid, r(isd + 1, ied + 1), s_j))
    a_low = vectors_at(axyz, slice(None), r(jsd, jed - 1))
    a_up = vectors_at(axyz, slice(None), r(jsd + 1, jed))
    gj_s = gj[:, s_j]
    p2 = vect_cross(a_low, a_up)
    p2_s = vect_cross(pp, a_up)
    p2_n = vect_cross(a_low, pp)
    p2 = tuple(
        np.where(gj_s == 1, p2_s[c], np.where(gj_s == npy, p2_n[c], p2[c])) for c in range(3)
    )
    es2 = normalize_vect(vect_cross(p2, pp))
    es1 = normalize_vect(
        vect_cross(
            vect_cross(
                vectors_at(grid3, r(isd, ied), s_j), vectors_at(grid3, r(isd + 1, ied + 1), s_j)
            ),
            pp,
        )
    )
    es[:, 0, :, s_j], es[:, 1, :, s_j] = np.stack(es1, -1), np.stack(es2, -1)
    zero = ((gi < 1) | (gi > npx - 1)) & ((gj < 1) | (gj > npy))
    es[:, :, zero & (gj > jsd) & (gj < jed + 1)] = 0.0

    # cos_sg / sin_sg at the 9 points of the super grid
    #     9---4---8
    #     |       |
    #     1   5   3
    #     |       |
    #     6---2---7
    cos_sg = np.empty((N_TILES, 9) + shape("center")[1:])
    cos_sg[:, 5] = cos_angle(p00, p10, p01)
    cos_sg[:, 6] = -cos_angle(p10, p00, p11)
    cos_sg[:, 7] = cos_angle(p11, p10, p01)
    cos_sg[:, 8] = -cos_angle(p01, p00, p11)
    cos_sg[:, 0] = cos_angle(mid_pt3_cart(p00, p01), axyz, p01)
    cos_sg[:, 1] = cos_angle(mid_pt3_cart(p00, p10), p10, axyz)
    cos_sg[:, 2] = cos_angle(mid_pt3_cart(p10, p11), axyz, p10)
    cos_sg[:, 3] = cos_angle(mid_pt3_cart(p01, p11), p01, axyz)
    cos_sg[:, 4] = inner_prod(
        tuple(ec1[..., c] for c in range(3)), tuple(ec2[..., c] for c in range(3))
    )
    sin_sg = np.minimum(1.0, np.sqrt(np.maximum(0.0, 1.0 - cos_sg**2)))

    def S(k: int, fi_: int, fj_: int) -> tuple:  # FV3 sin_sg(fi, fj, k) for all tiles
        return (slice(None), k - 1, F(fi_), F(fj_))

    def corner_sin_first() -> None:  # the first "for transport operation" block (sin_sg only)
        for t in range(-2, 1):
            sin_sg[S(3, 0, t)] = sin_sg[S(2, t, 1)]
            sin_sg[S(4, t, 0)] = sin_sg[S(1, 1, t)]
        for t in range(npy, npy + 3):
            sin_sg[S(3, 0, t)] = sin_sg[S(4, npy - t, npy - 1)]
        for t in range(-2, 1):
            sin_sg[S(2, t, npy)] = sin_sg[S(1, 1, npx + t)]
        for t in range(-2, 1):
            sin_sg[S(1, npx, t)] = sin_sg[S(2, npx - t, 1)]
        for t in range(npx, npx + 3):
            sin_sg[S(4, t, 0)] = sin_sg[S(3, npx - 1, npx - t)]
        for t in range(npy, npy + 3):
            sin_sg[S(1, npx, t)] = sin_sg[S(4, t, npy - 1)]
            sin_sg[S(2, t, npy)] = sin_sg[S(3, npx - 1, t)]

    corner_sin_first()

    # non_ortho: ee1, ee2 and cosa, sina at the compute corners
    ee1 = np.full(shape("corner") + (3,), np.nan)
    ee2 = np.full(shape("corner") + (3,), np.nan)
    ic_ = r(1, npx)
    fic = np.arange(1, npx + 1)[:, None]
    fjc = np.arange(1, npy + 1)[None, :]
    gc = vectors_at(grid3, ic_, ic_)
    cross_x = vect_cross(
        vectors_at(grid3, r(0, npx - 1), ic_), vectors_at(grid3, r(2, npx + 1), ic_)
    )
    cross_w = vect_cross(gc, vectors_at(grid3, r(2, npx + 1), ic_))
    cross_e = vect_cross(vectors_at(grid3, r(0, npx - 1), ic_), gc)
    pp = tuple(
        np.where(fic == 1, cross_w[c], np.where(fic == npx, cross_e[c], cross_x[c]))
        for c in range(3)
    )
    ee1[:, ic_, ic_] = np.stack(normalize_vect(vect_cross(pp, gc)), -1)
    cross_y = vect_cross(
        vectors_at(grid3, ic_, r(0, npy - 1)), vectors_at(grid3, ic_, r(2, npy + 1))
    )
    cross_s = vect_cross(gc, vectors_at(grid3, ic_, r(2, npy + 1)))
    cross_n = vect_cross(vectors_at(grid3, ic_, r(0, npy - 1)), gc)
    pp = tuple(
        np.where(fjc == 1, cross_s[c], np.where(fjc == npy, cross_n[c], cross_y[c]))
        for c in range(3)
    )
    ee2[:, ic_, ic_] = np.stack(normalize_vect(vect_cross(pp, gc)), -1)
    cosa, sina = new("corner", BIG_NUMBER), new("corner", BIG_NUMBER)
    cosa[:, ic_, ic_] = 0.5 * (cos_sg[:, 7, r(0, npx - 1), r(0, npy - 1)] + cos_sg[:, 5, ic_, ic_])
    sina[:, ic_, ic_] = 0.5 * (sin_sg[:, 7, r(0, npx - 1), r(0, npy - 1)] + sin_sg[:, 5, ic_, ic_])

    cosa_u, sina_u, rsin_u = new("x", BIG_NUMBER), new("x", BIG_NUMBER), new("x", BIG_NUMBER)
    sx_ = r(isd + 1, ied)
    cosa_u[:, sx_] = 0.5 * (cos_sg[:, 2, r(isd, ied - 1)] + cos_sg[:, 0, r(isd + 1, ied)])
    sina_u[:, sx_] = 0.5 * (sin_sg[:, 2, r(isd, ied - 1)] + sin_sg[:, 0, r(isd + 1, ied)])
    rsin_u[:, sx_] = 1.0 / np.maximum(TINY_NUMBER, sina_u[:, sx_] ** 2)
    cosa_v, sina_v, rsin_v = new("y", BIG_NUMBER), new("y", BIG_NUMBER), new("y", BIG_NUMBER)
    sy_ = r(jsd + 1, jed)
    cosa_v[:, :, sy_] = 0.5 * (cos_sg[:, 3, :, r(jsd, jed - 1)] + cos_sg[:, 1, :, r(jsd + 1, jed)])
    sina_v[:, :, sy_] = 0.5 * (sin_sg[:, 3, :, r(jsd, jed - 1)] + sin_sg[:, 1, :, r(jsd + 1, jed)])
    rsin_v[:, :, sy_] = 1.0 / np.maximum(TINY_NUMBER, sina_v[:, :, sy_] ** 2)
    cosa_s = cos_sg[:, 4].copy()
    rsin2 = 1.0 / np.maximum(TINY_NUMBER, sin_sg[:, 4] ** 2)
    fill_ghost(cosa_s, F, BIG_NUMBER)
    rsina = new("corner")
    edge = (fic == 1) | (fic == npx) | (fjc == 1) | (fjc == npy)
    rsina[:, ic_, ic_] = np.where(
        edge, BIG_NUMBER, 1.0 / np.maximum(TINY_NUMBER, sina[:, ic_, ic_] ** 2)
    )
    for fi_ in (1, npx):
        su = sina_u[:, F(fi_), :]
        rsin_u[:, F(fi_), :] = 1.0 / np.copysign(np.maximum(TINY_NUMBER, np.abs(su)), su)
    for fj_ in (1, npy):
        sv = sina_v[:, :, F(fj_)]
        rsin_v[:, :, F(fj_)] = 1.0 / np.copysign(np.maximum(TINY_NUMBER, np.abs(sv)), sv)

    fill_ghost(sin_sg, F, TINY_NUMBER)
    fill_ghost(cos_sg, F, BIG_NUMBER)
    for arr in (sin_sg, cos_sg):  # the second "for transport operation" block
        for t in (0, -1, -2):
            arr[S(3, 0, t)] = arr[S(2, t, 1)]
            arr[S(4, t, 0)] = arr[S(1, 1, t)]
        for t in range(npy, npy + 3):
            arr[S(3, 0, t)] = arr[S(4, npy - t, npy - 1)]
        for t in (0, -1, -2):
            arr[S(2, t, npy)] = arr[S(1, 1, npy - t)]
        for t in (0, -1, -2):
            arr[S(1, npx, t)] = arr[S(2, npx - t, 1)]
        for t in range(npx, npx + 3):
            arr[S(4, t, 0)] = arr[S(3, npx - 1, npx - t)]
        for t in range(3):
            arr[S(1, npx, npy + t)] = arr[S(4, npx + t, npy - 1)]
            arr[S(2, npx + t, npy)] = arr[S(3, npx - 1, npy + t)]

    # divergence and del6 weights
    divg_u, del6_u = new("y"), new("y")
    ss_edge = 0.5 * (sin_sg[:, 1, :, r(jsd + 1, jed)] + sin_sg[:, 3, :, r(jsd, jed - 1)])
    fj_y = np.arange(jsd, jed + 2)
    sv = sina_v.copy()
    sv[:, :, r(jsd + 1, jed)] = np.where(
        np.isin(fj_y[1:-1], (1, npy))[None, None, :], ss_edge, sina_v[:, :, r(jsd + 1, jed)]
    )
    divg_u[:] = sv * dyc / dx
    del6_u[:] = sv * dx / dyc
    su = sina_u.copy()
    for fi_, (a_, b_) in ((1, (1, 0)), (npx, (npx, npx - 1))):
        su[:, F(fi_), :] = 0.5 * (sin_sg[:, 0, F(a_), :] + sin_sg[:, 2, F(b_), :])
    divg_v = su * dxc / dy
    del6_v = su * dy / dxc

    # init_cubed_to_latlon
    vlon, vlat = np.full(shape("center") + (3,), np.nan), np.full(shape("center") + (3,), np.nan)
    s2 = r(-1, n + 2)
    elon, elat = get_latlon_vector(points_at(agrid, s2, s2))
    vlon[:, s2, s2], vlat[:, s2, s2] = np.stack(elon, -1), np.stack(elat, -1)
    a11, a12, a21, a22 = (new("center") for _ in range(4))
    s1 = r(0, n + 1)
    e1 = tuple(ec1[:, s1, s1, c] for c in range(3))
    e2 = tuple(ec2[:, s1, s1, c] for c in range(3))
    vo = tuple(vlon[:, s1, s1, c] for c in range(3))
    va = tuple(vlat[:, s1, s1, c] for c in range(3))
    z11, z12 = inner_prod(e1, vo), inner_prod(e1, va)
    z21, z22 = inner_prod(e2, vo), inner_prod(e2, va)
    s5 = sin_sg[:, 4, s1, s1]
    a11[:, s1, s1] = 0.5 * z22 / s5
    a12[:, s1, s1] = -0.5 * z12 / s5
    a21[:, s1, s1] = -0.5 * z21 / s5
    a22[:, s1, s1] = 0.5 * z11 / s5

    da = area[:, cs, cs]
    dac = area_c[:, cs, cs]
    scalars = (float(da.min()), float(da.max()), float(dac.min()), float(dac.max()))

    halos.update_pair(divg_v, divg_u)
    halos.update_pair(del6_v, del6_u)

    edges = _edge_factors(F, grid, agrid)
    edges.update(_efactor_a2c_v(F, grid, agrid))

    out.update(
        sin_sg=sin_sg, cos_sg=cos_sg, cosa=cosa, sina=sina, cosa_u=cosa_u, sina_u=sina_u,
        rsin_u=rsin_u, cosa_v=cosa_v, sina_v=sina_v, rsin_v=rsin_v, cosa_s=cosa_s, rsin2=rsin2,
        rsina=rsina, ee1=ee1, ee2=ee2, ec1=ec1, ec2=ec2, ew=ew, es=es, divg_u=divg_u,
        divg_v=divg_v, del6_u=del6_u, del6_v=del6_v, vlon=vlon, vlat=vlat, a11=a11, a12=a12,
        a21=a21, a22=a22, **edges,
    )  # fmt: skip
    return scalars


def _init_case_coriolis(out: dict[str, np.ndarray], halos: TileHalos, omega: float, alpha: float):
    """test_cases ``init_case``: ``fC`` on all corners, ``f0`` on all centres then updated (its
    ``fill_corners(f0, npx, npy, YDir)`` names neither AGRID nor BGRID and does nothing)."""
    lon, lat = out["grid"][..., 0], out["grid"][..., 1]
    alon, alat = out["agrid"][..., 0], out["agrid"][..., 1]
    sa, ca = math.sin(alpha), math.cos(alpha)
    fC = 2.0 * omega * (-(1.0 * cos(lon) * cos(lat) * sa) + sin(lat) * ca)
    f0 = 2.0 * omega * (-(1.0 * cos(alon) * cos(alat) * sa) + sin(alat) * ca)
    halos.update(f0, "center")
    return {"fC": fC, "f0": f0}


def _edge_factors(F: FortranIndex, grid: Pair, agrid: Pair) -> dict[str, np.ndarray]:
    """FV3 ``edge_factors``: a2b_ord4's weights at the tile edges, on corner points along the edge
    (``edge_w[j]`` at corner j, Python index); 1 < j < npy set, j = 1 and npy big_number."""
    npx, npy = F.npx, F.npy
    m = F.n + 2 * F.h + 1
    out = {}
    for name, along_i, k, ka in (("edge_w", False, 1, 0), ("edge_e", False, npx, npx - 1),
                                 ("edge_s", True, 1, 0), ("edge_n", True, npy, npy - 1)):  # fmt: skip
        e = np.full((N_TILES, m), np.nan)
        e[:, F(1) : F(npy) + 1] = BIG_NUMBER
        a = F.r(1, npy - 1)
        if along_i:
            pm = mid_pt_sphere(points_at(agrid, a, F(ka)), points_at(agrid, a, F(k)))
            gk = points_at(grid, F.r(2, npx - 1), F(k))
        else:
            pm = mid_pt_sphere(points_at(agrid, F(ka), a), points_at(agrid, F(k), a))
            gk = points_at(grid, F(k), F.r(2, npy - 1))
        d1 = great_circle_dist((pm[0][:, :-1], pm[1][:, :-1]), gk)
        d2 = great_circle_dist((pm[0][:, 1:], pm[1][:, 1:]), gk)
        e[:, F(2) : F(npy - 1) + 1] = d2 / (d1 + d2)
        out[name] = e
    return out


def _efactor_a2c_v(F: FortranIndex, grid: Pair, agrid: Pair) -> dict[str, np.ndarray]:
    """FV3 ``efactor_a2c_v``: d2a2c_vect's weights at the tile edges, on cell centres along the
    edge (``edge_vect_w[j]``, Python index); set at j = 0 .. npy (FV3), big_number elsewhere."""
    npx, npy, n = F.npx, F.npy, F.n
    m = n + 2 * F.h
    im2 = (npx - 1) // 2
    out = {}
    for name, along_i, k, ka in (("edge_vect_w", False, 1, 0), ("edge_vect_e", False, npx, npx - 1),
                                 ("edge_vect_s", True, 1, 0), ("edge_vect_n", True, npy, npy - 1)):  # fmt: skip
        e = np.full((N_TILES, m), BIG_NUMBER)
        a = F.r(-1, n + 2)  # js-2 .. je+2
        if along_i:
            py = mid_pt_sphere(points_at(agrid, a, F(ka)), points_at(agrid, a, F(k)))
            p2 = mid_pt_sphere(points_at(grid, a, F(k)), points_at(grid, F.r(0, n + 3), F(k)))
        else:
            py = mid_pt_sphere(points_at(agrid, F(ka), a), points_at(agrid, F(k), a))
            p2 = mid_pt_sphere(points_at(grid, F(k), a), points_at(grid, F(k), F.r(0, n + 3)))
        # local index q = j + 1 (j = -1 .. n+2); the loop runs over j = 0 .. npy
        for j in range(0, npy + 1):
            q = j + 1
            if j <= im2:
                d1 = great_circle_dist((py[0][:, q], py[1][:, q]), (p2[0][:, q], p2[1][:, q]))
                d2 = great_circle_dist(
                    (py[0][:, q + 1], py[1][:, q + 1]), (p2[0][:, q], p2[1][:, q])
                )
                e[:, F(j)] = d1 / (d1 + d2)
            else:
                d2 = great_circle_dist(
                    (py[0][:, q - 1], py[1][:, q - 1]), (p2[0][:, q], p2[1][:, q])
                )
                d1 = great_circle_dist((py[0][:, q], py[1][:, q]), (p2[0][:, q], p2[1][:, q]))
                e[:, F(j)] = d1 / (d2 + d1)
        e[:, F(0)] = e[:, F(1)]
        e[:, F(npy)] = e[:, F(n)]
        out[name] = e
    return out


# --------------------------------------------------------------------------------------------
# One rank's metric terms
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class MetricTerms:
    """Every grid quantity FV3's shallow-water dynamics reads, on one rank with its halo.

    Built by :meth:`build` (or :meth:`CubedSphere.metric_terms`); shapes and index conventions in the
    module docstring (``h = spec.n_halo``; Python index ``h`` is the first compute point).  Lengths
    m, areas m^2, angles rad.  Names and meanings are FV3's (``fv_arrays.F90 fv_grid_type``):

    * positions: ``grid`` (corners), ``agrid`` (centres, FV3's ``cell_center2``), ``(..., 2)`` lon/lat
    * lengths: ``dx`` (y-faces), ``dy`` (x-faces), ``dxa``, ``dya`` (centres), ``dxc`` (x-faces),
      ``dyc`` (y-faces) and their reciprocals ``rdx`` ... ``rdya``
    * areas: ``area``, ``rarea`` (centres), ``area_c``, ``rarea_c`` (corners)
    * angles: ``sin_sg``, ``cos_sg`` ``(9, ...)`` at FV3's super-grid points (1 west, 2 south, 3 east,
      4 north edge midpoint, 5 centre, 6 SW, 7 SE, 8 NE, 9 NW corner), ``cosa``, ``sina``, ``rsina``
      (corners), ``cosa_u``, ``sina_u``, ``rsin_u`` (x-faces), ``cosa_v``, ``sina_v``, ``rsin_v``
      (y-faces), ``cosa_s``, ``rsin2`` (centres)
    * unit vectors ``(..., 3)``: ``ee1``, ``ee2`` (corners), ``ec1``, ``ec2`` (centres), ``ew``
      ``(2, x-faces, 3)``, ``es`` ``(2, y-faces, 3)``, ``vlon``, ``vlat`` (centres)
    * A-grid wind rotation (``cubed_to_latlon``): ``a11``, ``a12``, ``a21``, ``a22`` (centres, set one
      halo point deep)
    * damping weights: ``divg_u``, ``del6_u`` (y-faces), ``divg_v``, ``del6_v`` (x-faces)
    * tile-edge interpolation weights, 1-D along the edge: ``edge_w``, ``edge_e`` (corner j),
      ``edge_s``, ``edge_n`` (corner i) of ``a2b_ord4``; ``edge_vect_w``, ``edge_vect_e`` (centre j),
      ``edge_vect_s``, ``edge_vect_n`` (centre i) of ``d2a2c_vect``
    * Coriolis: ``fC`` (corners), ``f0`` (centres), with ``alpha``
    * global (the same on every rank): ``da_min``, ``da_max`` (cell areas), ``da_min_c``,
      ``da_max_c`` (``area_c`` over the corners 1..n)
    * whether the rank holds a cube corner: ``sw_corner``, ``se_corner``, ``ne_corner``, ``nw_corner``
    """

    spec: SubdomainSpec
    radius: float
    omega: float
    alpha: float
    grid: np.ndarray = field(repr=False)
    agrid: np.ndarray = field(repr=False)
    dx: np.ndarray = field(repr=False)
    dy: np.ndarray = field(repr=False)
    dxa: np.ndarray = field(repr=False)
    dya: np.ndarray = field(repr=False)
    dxc: np.ndarray = field(repr=False)
    dyc: np.ndarray = field(repr=False)
    rdx: np.ndarray = field(repr=False)
    rdy: np.ndarray = field(repr=False)
    rdxa: np.ndarray = field(repr=False)
    rdya: np.ndarray = field(repr=False)
    rdxc: np.ndarray = field(repr=False)
    rdyc: np.ndarray = field(repr=False)
    area: np.ndarray = field(repr=False)
    rarea: np.ndarray = field(repr=False)
    area_c: np.ndarray = field(repr=False)
    rarea_c: np.ndarray = field(repr=False)
    sin_sg: np.ndarray = field(repr=False)
    cos_sg: np.ndarray = field(repr=False)
    cosa: np.ndarray = field(repr=False)
    sina: np.ndarray = field(repr=False)
    rsina: np.ndarray = field(repr=False)
    cosa_u: np.ndarray = field(repr=False)
    sina_u: np.ndarray = field(repr=False)
    rsin_u: np.ndarray = field(repr=False)
    cosa_v: np.ndarray = field(repr=False)
    sina_v: np.ndarray = field(repr=False)
    rsin_v: np.ndarray = field(repr=False)
    cosa_s: np.ndarray = field(repr=False)
    rsin2: np.ndarray = field(repr=False)
    ee1: np.ndarray = field(repr=False)
    ee2: np.ndarray = field(repr=False)
    ec1: np.ndarray = field(repr=False)
    ec2: np.ndarray = field(repr=False)
    ew: np.ndarray = field(repr=False)
    es: np.ndarray = field(repr=False)
    vlon: np.ndarray = field(repr=False)
    vlat: np.ndarray = field(repr=False)
    a11: np.ndarray = field(repr=False)
    a12: np.ndarray = field(repr=False)
    a21: np.ndarray = field(repr=False)
    a22: np.ndarray = field(repr=False)
    divg_u: np.ndarray = field(repr=False)
    divg_v: np.ndarray = field(repr=False)
    del6_u: np.ndarray = field(repr=False)
    del6_v: np.ndarray = field(repr=False)
    edge_w: np.ndarray = field(repr=False)
    edge_e: np.ndarray = field(repr=False)
    edge_s: np.ndarray = field(repr=False)
    edge_n: np.ndarray = field(repr=False)
    edge_vect_w: np.ndarray = field(repr=False)
    edge_vect_e: np.ndarray = field(repr=False)
    edge_vect_s: np.ndarray = field(repr=False)
    edge_vect_n: np.ndarray = field(repr=False)
    fC: np.ndarray = field(repr=False)
    f0: np.ndarray = field(repr=False)
    da_min: float
    da_max: float
    da_min_c: float
    da_max_c: float
    sw_corner: bool
    se_corner: bool
    ne_corner: bool
    nw_corner: bool

    @classmethod
    def build(
        cls,
        spec: SubdomainSpec,
        *,
        radius: float,
        omega: float,
        alpha: float = 0.0,
    ) -> MetricTerms:
        """FV3's metric terms of one rank (this builds the whole cube; to build many ranks of
        one cube, build :class:`CubedSphere` once and call :meth:`CubedSphere.metric_terms`)."""
        cube = CubedSphere.build(
            spec.resolution, radius=radius, omega=omega, alpha=alpha, n_halo=spec.n_halo
        )
        return cube.metric_terms(spec)

    @property
    def n_halo(self) -> int:
        return self.spec.n_halo

    @property
    def lon(self) -> np.ndarray:
        """Corner longitudes (rad)."""
        return self.grid[..., 0]

    @property
    def lat(self) -> np.ndarray:
        """Corner latitudes (rad)."""
        return self.grid[..., 1]

    @property
    def lon_agrid(self) -> np.ndarray:
        """Centre longitudes (rad)."""
        return self.agrid[..., 0]

    @property
    def lat_agrid(self) -> np.ndarray:
        """Centre latitudes (rad)."""
        return self.agrid[..., 1]

    def interior(self, name: str) -> np.ndarray:
        """The compute-domain part of a field (cells, corners or faces by its location)."""
        a = getattr(self, name)
        loc = _LOCATIONS[name]
        h, nx, ny = self.n_halo, self.spec.nx, self.spec.ny
        if loc.endswith(("_i", "_j")):
            s = 1 if loc.startswith("corner") else 0
            m = nx if loc.endswith("_i") else ny
            return a[h : h + m + s]
        sx, sy = STAGGER[loc]
        si, sj = slice(h, h + nx + sx), slice(h, h + ny + sy)
        return a[:, si, sj] if name in _LEADING else a[si, sj]

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        """Names of the array fields."""
        return tuple(f.name for f in fields(cls) if f.name in _LOCATIONS)

"""Regridding of cell-centre cubed-sphere fields (6, N, N) to a regular lon-lat grid.

Method: linear interpolation on the spherical Delaunay triangulation of the cell centres.  The
6 N^2 centres (FV3's ``agrid``, as lon/lat in degrees, the arrays the driver gathers) become unit
vectors; their 3-D convex hull (``scipy.spatial.ConvexHull``, triangulated) is the Delaunay
triangulation of the sphere, with no special case at tile edges, cube corners (three cells meet),
the poles or the date line.  Each target point ``x`` (a unit vector) is located in the triangle
its ray from the centre of the sphere crosses (candidates from a KD-tree of the triangles'
centroid directions, every target checked, a full search for the rare miss); its weights are the
barycentric coordinates of that crossing point in the triangle's plane (a gnomonic projection
onto the facet), and the value is ``f0 + w1 (f1 - f0) + w2 (f2 - f0)``, so a constant field comes
back bit for bit.

Accuracy: second order, ``max |error| <= C h^2 max|D^2 f|`` with h the cell size (the error of
linear interpolation on triangles of centres one cell apart).  Measured on 1 x 1 degree targets
(``tests/fv3core/test_latlon_regrid.py``), maximum absolute error for unit-amplitude fields:

=================================================  ========  ========  =====
field                                              C24       C48       ratio
=================================================  ========  ========  =====
``cos(lat) cos(lon)``                              1.24e-3   2.88e-4   4.3
Gaussian bump, e-folding 15 degrees, on the pole   3.64e-2   8.43e-3   4.3
the same bump on a cube corner (three tiles meet)  1.65e-2   3.87e-3   4.3
=================================================  ========  ========  =====

(C96: 5.98e-5 and 2.32e-3 for the first two.)  At a pole the interpolated ``sin(lat)`` is
``1 - O(h^2)`` (3.3e-4 at C48): the chord of the centres around it.  The interpolation is not
conservative and creates no new extrema (weights in [0, 1], round-off clipped).

Conventions: source fields ``(6, N, N)`` or ``(6, N, N, ...)`` (``[tile, i, j]``, trailing axes
such as levels carried along); results ``(nlat, nlon)`` or ``(nlat, nlon, ...)`` indexed
``[lat, lon]``, latitudes south to north, longitudes 0..360 east.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fv3core.errors import FV3ConfigError


def unit_vectors(lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
    """Cartesian unit vectors (..., 3) of points at ``lon``, ``lat`` (degrees)."""
    lam, phi = np.deg2rad(lon), np.deg2rad(lat)
    c = np.cos(phi)
    return np.stack([c * np.cos(lam), c * np.sin(lam), np.sin(phi)], axis=-1)


def regular_lonlat(nlon: int, nlat: int) -> tuple[np.ndarray, np.ndarray]:
    """Cell-centred regular grid: ``lon = (i + 1/2) 360/nlon`` (0..360 E), ``lat = -90 +
    (j + 1/2) 180/nlat`` (degrees); 1 degree x 1 degree is ``regular_lonlat(360, 180)``."""
    if nlon < 1 or nlat < 1:
        raise FV3ConfigError(f"regular_lonlat: nlon={nlon}, nlat={nlat} must be >= 1")
    lon = (np.arange(nlon) + 0.5) * (360.0 / nlon)
    lat = -90.0 + (np.arange(nlat) + 0.5) * (180.0 / nlat)
    return lon, lat


@dataclass(frozen=True)
class LatLonRegridder:
    """Linear (barycentric) interpolation from cubed-sphere cell centres to the lon-lat grid
    ``lon`` x ``lat`` (1-D, degrees).  Build with :meth:`build` (once per grid), apply with
    ``regridder(field)``.

    ``vertices`` (nlat, nlon, 3): the flat indices (into the ``(6, N, N)`` order) of the
    triangle's cells; ``weights`` (nlat, nlon, 2): the barycentric weights of vertices 1 and 2."""

    lon: np.ndarray
    lat: np.ndarray
    source_shape: tuple[int, int, int]
    vertices: np.ndarray = field(repr=False)
    weights: np.ndarray = field(repr=False)

    @classmethod
    def build(cls, lon: np.ndarray, lat: np.ndarray, *, nlon: int = 360, nlat: int = 180,
              target_lon: np.ndarray | None = None, target_lat: np.ndarray | None = None,
              candidates: int = 16) -> LatLonRegridder:  # fmt: skip
        """Regridder from cell centres ``lon``, ``lat`` (6, N, N) in degrees to
        :func:`regular_lonlat` ``(nlon, nlat)`` or to the given 1-D ``target_lon``,
        ``target_lat`` (degrees; the poles allowed)."""
        from scipy.spatial import ConvexHull, cKDTree

        lon, lat = np.asarray(lon, dtype=np.float64), np.asarray(lat, dtype=np.float64)
        if lon.ndim != 3 or lon.shape[0] != 6 or lon.shape[1] != lon.shape[2]:
            raise FV3ConfigError(f"LatLonRegridder: cell-centre lon has shape {lon.shape}; "
                                 f"expected (6, N, N) (the gathered agrid, degrees)")  # fmt: skip
        if lat.shape != lon.shape:
            raise FV3ConfigError(f"LatLonRegridder: lat {lat.shape} and lon {lon.shape} differ")
        if not (np.all(np.isfinite(lon)) and np.all(np.isfinite(lat))):
            raise FV3ConfigError("LatLonRegridder: cell-centre lon/lat hold NaN or inf (pass "
                                 "the interior agrid, without halo)")  # fmt: skip
        if np.any(np.abs(lat) > 90.0):
            raise FV3ConfigError("LatLonRegridder: |lat| > 90 degrees: are lon/lat in radians "
                                 "or swapped?")  # fmt: skip
        if (target_lon is None) != (target_lat is None):
            raise FV3ConfigError("LatLonRegridder: pass both target_lon and target_lat or neither")
        if target_lon is None:
            tlon, tlat = regular_lonlat(nlon, nlat)
        else:
            tlon = np.asarray(target_lon, dtype=np.float64)
            tlat = np.asarray(target_lat, dtype=np.float64)
            if tlon.ndim != 1 or tlat.ndim != 1 or np.any(np.abs(tlat) > 90.0):
                raise FV3ConfigError(f"LatLonRegridder: target_lon {tlon.shape} and target_lat "
                                     f"{tlat.shape} must be 1-D, |lat| <= 90")  # fmt: skip
        points = unit_vectors(lon, lat).reshape(-1, 3)
        hull = ConvexHull(points)
        tri = hull.simplices  # (ntri, 3) vertex indices
        a, b, c = points[tri[:, 0]], points[tri[:, 1]], points[tri[:, 2]]
        triangles = _Triangles.of(a, b, c)
        centroid = a + b + c
        centroid /= np.linalg.norm(centroid, axis=1)[:, None]
        tree = cKDTree(centroid)
        lon2, lat2 = np.meshgrid(tlon, tlat)  # (nlat, nlon)
        x = unit_vectors(lon2, lat2).reshape(-1, 3)
        m = len(x)
        choice = np.zeros(m, dtype=np.intp)
        weights = np.zeros((m, 3))
        todo = np.arange(m)
        for k in (4, candidates, len(tri)):  # nearest centroids first; all triangles last
            k = min(k, len(tri))
            if todo.size == 0 or (k == len(tri) and todo.size > 64):
                break
            if k < len(tri):
                cand = tree.query(x[todo], k=k)[1].reshape(todo.size, k)
            else:
                cand = np.broadcast_to(np.arange(len(tri)), (todo.size, k))
            w, ok = triangles.weights(x[todo], cand)
            first = np.argmax(ok, axis=1)  # the nearest-centroid triangle holding the ray
            rows = np.arange(todo.size)
            found = ok[rows, first]
            choice[todo[found]] = cand[rows, first][found]
            weights[todo[found]] = w[rows, first][found]
            todo = todo[~found]
        if todo.size:
            raise FV3ConfigError(f"LatLonRegridder: target (lon {lon2.ravel()[todo[0]]}, lat "
                                 f"{lat2.ravel()[todo[0]]}) lies in no triangle of the cell "
                                 f"centres: are they a full cubed sphere?")  # fmt: skip
        # round-off outside [0, 1] clipped: the weights stay a convex combination
        w1 = np.clip(weights[:, 1], 0.0, 1.0)
        w2 = np.clip(weights[:, 2], 0.0, 1.0 - w1)
        shape = lon2.shape
        return cls(tlon, tlat, tuple(int(s) for s in lon.shape), tri[choice].reshape(shape + (3,)),
                   np.stack([w1, w2], axis=-1).reshape(shape + (2,)))  # fmt: skip

    @classmethod
    def from_cube(cls, cube, **kwargs) -> LatLonRegridder:
        """From a :class:`~fv3core.grid.metric_terms.CubedSphere`'s interior ``agrid`` (radians)."""
        h, n = cube.n_halo, cube.resolution
        agrid = cube.fields["agrid"][:, h : h + n, h : h + n]
        return cls.build(np.rad2deg(agrid[..., 0]), np.rad2deg(agrid[..., 1]), **kwargs)

    @property
    def shape(self) -> tuple[int, int]:
        """(nlat, nlon)."""
        return (len(self.lat), len(self.lon))

    def __call__(self, values: np.ndarray) -> np.ndarray:
        """``values`` (6, N, N[, ...]) at the lon-lat points: (nlat, nlon[, ...])."""
        values = np.asarray(values)
        if values.shape[:3] != self.source_shape:
            raise FV3ConfigError(f"LatLonRegridder: field has shape {values.shape}; this "
                                 f"regridder was built for cells {self.source_shape} "
                                 f"(+ trailing axes)")  # fmt: skip
        flat = values.reshape((-1,) + values.shape[3:])
        f0, f1, f2 = (flat[self.vertices[..., i]] for i in range(3))
        extra = (1,) * (values.ndim - 3)
        w1 = self.weights[..., 0].reshape(self.shape + extra)
        w2 = self.weights[..., 1].reshape(self.shape + extra)
        return f0 + w1 * (f1 - f0) + w2 * (f2 - f0)


@dataclass(frozen=True)
class _Triangles:
    """Per-triangle vectors of the barycentric weights: vertex ``a``, plane normal ``n``
    (either orientation), and ``e1``, ``e2`` with ``w1 = (p - a).e1``, ``w2 = (p - a).e2`` for a
    point ``p`` in the plane."""

    a: np.ndarray
    n: np.ndarray
    e1: np.ndarray
    e2: np.ndarray
    good: np.ndarray

    @classmethod
    def of(cls, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> _Triangles:
        n = np.cross(b - a, c - a)
        nn = np.sum(n * n, axis=-1)
        good = nn > 1e-28  # not degenerate (|n| = twice the area > 1e-14)
        with np.errstate(invalid="ignore", divide="ignore"):
            e1 = np.cross(c - a, n) / nn[:, None]
            e2 = np.cross(n, b - a) / nn[:, None]
        return cls(a, n, e1, e2, good)

    def weights(self, x: np.ndarray, which: np.ndarray, tol: float = 1e-12
                ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
        """Barycentric weights (m, k, 3) where the rays along ``x`` (m, 3) cross the planes of
        the triangles ``which`` (m, k), and whether they cross inside them."""
        a, n = self.a[which], self.n[which]
        xx = x[:, None, :]
        with np.errstate(invalid="ignore", divide="ignore"):
            t = np.einsum("mkj,mkj->mk", n, a) / np.einsum("mkj,mj->mk", n, x)
            d = t[..., None] * xx - a
        w1 = np.einsum("mkj,mkj->mk", d, self.e1[which])
        w2 = np.einsum("mkj,mkj->mk", d, self.e2[which])
        w0 = 1.0 - w1 - w2
        ok = (t > 0.0) & self.good[which] & (w0 >= -tol) & (w1 >= -tol) & (w2 >= -tol)
        return np.stack([w0, w1, w2], axis=-1), ok

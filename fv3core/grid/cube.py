"""The gnomonic cubed sphere in FV3 conventions: tile corner points and tile connectivity.

Tile 0 is FV3's tile 1 (centred on the equator at 350 E, i east, j north); tiles 1..5 follow
from FV3's rotations of tile 0 (``mirror_grid`` in fv_grid_tools), including its left-handed
(lon, lat) <-> Cartesian conversion, and the whole sphere is shifted by -pi/18 in longitude
(``shift_fac = 18``).  The connectivity between tiles is *derived* from the geometry (shared
edge points), so it cannot disagree with the points themselves.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from fv3core.errors import FV3ConfigError
from fv3core.grid.spherical import normalize, xyz_to_lonlat

N_TILES = 6
SIDES = ("west", "east", "south", "north")
SHIFT_LON = -np.pi / 18.0

# FV3 mirror_grid: per tile, a sequence of (axis, angle in degrees) rotations of tile 0.
_TILE_ROTATIONS: tuple[tuple[tuple[int, float], ...], ...] = (
    (),
    ((3, -90.0),),
    ((3, -90.0), (1, 90.0)),
    ((3, -180.0), (1, 90.0)),
    ((3, 90.0), (2, 90.0)),
    ((2, 90.0), (3, 0.0)),
)


def face_coordinates(n: int, grid_type: str = "equal_distance") -> np.ndarray:
    """Coordinates s_k (k = 0..n) of the grid lines on the cube face x = 1/sqrt(3).

    ``equal_distance`` is FV3's default ``gnomonic_ed`` (points equally spaced along the tile
    edges); ``equiangular`` spaces the central angle from the face centre equally.
    """
    k = np.arange(n + 1, dtype=np.float64)
    if grid_type == "equal_distance":
        alpha = np.arcsin(1.0 / np.sqrt(3.0))
        return np.sqrt(2.0 / 3.0) * np.tan(-alpha + 2.0 * alpha * k / n)
    if grid_type == "equiangular":
        return np.tan(-np.pi / 4.0 + 0.5 * np.pi * k / n) / np.sqrt(3.0)
    raise FV3ConfigError(
        f"grid_type={grid_type!r} is unknown: use 'equal_distance' (FV3 default) or 'equiangular'"
    )


def _rotate_fv3(xyz: np.ndarray, axis: int, angle_deg: float) -> np.ndarray:
    """FV3's ``rot_3d`` applied in its left-handed frame (z flipped), returned right-handed."""
    a = np.deg2rad(angle_deg)
    c, s = np.cos(a), np.sin(a)
    x, y, z = xyz[..., 0], xyz[..., 1], -xyz[..., 2]
    if axis == 1:
        x, y, z = x, c * y + s * z, -s * y + c * z
    elif axis == 2:
        x, y, z = c * x - s * z, y, s * x + c * z
    else:
        x, y, z = c * x + s * y, -s * x + c * y, z
    return np.stack([x, y, -z], axis=-1)


def _rotate_lon(xyz: np.ndarray, dlon: float) -> np.ndarray:
    c, s = np.cos(dlon), np.sin(dlon)
    return np.stack(
        [c * xyz[..., 0] - s * xyz[..., 1], s * xyz[..., 0] + c * xyz[..., 1], xyz[..., 2]], axis=-1
    )


@lru_cache(maxsize=8)
def _tile_corners_cached(n: int, grid_type: str) -> np.ndarray:
    s = face_coordinates(n, grid_type)
    base = np.empty((n + 1, n + 1, 3))
    base[..., 0] = 1.0 / np.sqrt(3.0)
    base[..., 1] = s[:, None]
    base[..., 2] = s[None, :]
    base = normalize(base)
    tiles = np.empty((N_TILES, n + 1, n + 1, 3))
    for t, rotations in enumerate(_TILE_ROTATIONS):
        p = base
        for axis, angle in rotations:
            p = _rotate_fv3(p, axis, angle)
        tiles[t] = normalize(_rotate_lon(p, SHIFT_LON))
    tiles.setflags(write=False)
    return tiles


def tile_corners(n: int, grid_type: str = "equal_distance") -> np.ndarray:
    """Corner points of all tiles, shape (6, n+1, n+1, 3), indices [tile, i, j, xyz]."""
    if n < 2:
        raise FV3ConfigError(f"resolution C{n} is too small: use at least C2")
    return _tile_corners_cached(int(n), grid_type)


def tile_corners_lonlat(n: int, grid_type: str = "equal_distance") -> tuple[np.ndarray, np.ndarray]:
    return xyz_to_lonlat(tile_corners(n, grid_type))


def _edge_points(corners: np.ndarray, side: str) -> np.ndarray:
    """Corner points along one side of a tile, in increasing along-edge index."""
    return {
        "west": corners[0, :],
        "east": corners[-1, :],
        "south": corners[:, 0],
        "north": corners[:, -1],
    }[side]


@dataclass(frozen=True)
class Neighbour:
    """Across ``side`` of a tile lies ``tile``'s side ``side``; ``reversed``: along-edge indices run
    opposite ways on the two tiles."""

    tile: int
    side: str
    reversed: bool


@lru_cache(maxsize=1)
def connectivity() -> dict[tuple[int, str], Neighbour]:
    """Tile connectivity, derived from shared edge points on a C4 sphere."""
    corners = tile_corners(4)
    result: dict[tuple[int, str], Neighbour] = {}
    for t in range(N_TILES):
        for side in SIDES:
            mine = _edge_points(corners[t], side)
            found = []
            for t2 in range(N_TILES):
                if t2 == t:
                    continue
                for side2 in SIDES:
                    other = _edge_points(corners[t2], side2)
                    if np.allclose(mine, other, atol=1e-12):
                        found.append(Neighbour(t2, side2, False))
                    elif np.allclose(mine, other[::-1], atol=1e-12):
                        found.append(Neighbour(t2, side2, True))
            if len(found) != 1:  # pragma: no cover - a geometry bug
                raise RuntimeError(f"tile {t} {side}: found {len(found)} matching edges")
            result[(t, side)] = found[0]
    return result


def _point_index(side: str, inward: np.ndarray, along: np.ndarray, n_i: int, n_j: int):
    """Array indices of points at ``inward`` distance from ``side`` and ``along``-edge index."""
    if side == "west":
        return inward, along
    if side == "east":
        return n_i - 1 - inward, along
    if side == "south":
        return along, inward
    return along, n_j - 1 - inward


def fill_tile_halos(interior: np.ndarray, n_halo: int, location: str) -> np.ndarray:
    """Embed per-tile arrays in halos filled from the neighbouring tiles (scalars only).

    ``interior``: shape (6, n_i, n_j, ...) with n_i = n_j = n for ``location="center"`` and n+1
    for ``"corner"``.  Returns (6, n_i + 2h, n_j + 2h, ...).  The halo corner regions (beyond a
    cube vertex, where no cell exists) are filled by FV3's x-direction corner rule
    (a 90 degree rotation of the west/east halo about the vertex).
    """
    h = n_halo
    ntile, n_i, n_j = interior.shape[:3]
    stag = 1 if location == "corner" else 0
    n = n_i - stag
    out = np.full((ntile, n_i + 2 * h, n_j + 2 * h) + interior.shape[3:], np.nan)
    out[:, h : h + n_i, h : h + n_j] = interior
    conn = connectivity()
    # distance outward d = 1..h; the shared edge line itself (corner points) is distance 0
    d = np.arange(1, h + 1)
    along = np.arange(n_i if location == "corner" else n)
    for t in range(ntile):
        for side in SIDES:
            nb = conn[(t, side)]
            src_along = (n_i - 1 - along) if nb.reversed else along
            # centres: outward distance d <-> inward index d-1; corners: d <-> d
            src_in = d - 1 + stag
            D, A = np.meshgrid(src_in, src_along, indexing="ij")
            si, sj = _point_index(nb.side, D, A, n_i, n_j)
            vals = interior[nb.tile][si, sj]  # (h, n_along, ...)
            DD, AA = np.meshgrid(d, along, indexing="ij")
            # destination indices in the haloed array
            if side == "west":
                di, dj = h - DD, h + AA
            elif side == "east":
                di, dj = h + n_i - 1 + DD, h + AA
            elif side == "south":
                di, dj = h + AA, h - DD
            else:
                di, dj = h + AA, h + n_j - 1 + DD
            out[t][di, dj] = vals
    _fill_vertex_regions(out, h, stag)
    return out


def _fill_vertex_regions(out: np.ndarray, h: int, stag: int) -> None:
    """FV3 x-direction corner fill about each cube vertex.

    In the south-west, the point at (-a, -b) (relative to the first interior point) takes the
    value at (-b, a - 1 + stag); the other vertices are mirror images (flipped views).
    """
    for view in (out, out[:, ::-1], out[:, :, ::-1], out[:, ::-1, ::-1]):
        for a in range(1, h + 1):
            for b in range(1, h + 1):
                view[:, h - a, h - b] = view[:, h - b, h + a - 1 + stag]

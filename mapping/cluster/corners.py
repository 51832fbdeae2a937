"""FV3-style corner fill at the three-tile cube corners, where no diagonal neighbour exists.

The empty halo corner is filled with an adjacent (already exchanged) halo rotated by 90 degrees
about the cube corner. Scalars (pace ``fill_corners_2d``, A- and B-grid): from the west/east
halo for ``"x"``, from the south/north halo for ``"y"``. Vector pairs (FV3 ``fill_corners``
with ``VECTOR=.true.``: pace ``fill_corners_agrid`` / ``_cgrid`` / ``_dgrid``): each component's
corner comes from the *other* component's halo on one side, and the vector is rotated with the
points, which gives the swaps and sign flips of FV3's formulas.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mapping.cluster.arrays import array_module
from mapping.cluster.errors import HaloError
from mapping.cluster.geometry import DIRECTIONS
from mapping.cluster.partitioner import TilePartitioner

#: per vector grid, the halo side ("x": west/east, "y": south/north) that u's and v's empty
#: corners are filled from (FV3 fill_corners_agrid / fill_corners_cgrid / fill_corners_dgrid)
VECTOR_CORNER_SOURCES: dict[str, tuple[str, str]] = {
    "A": ("x", "y"),
    "C": ("y", "x"),
    "D": ("x", "y"),
}


def cube_corners(partitioner: TilePartitioner, rank: int) -> list[str]:
    """This rank's corners where three tiles meet (no diagonal neighbour, both edges exist)."""
    out = []
    for corner in ("southwest", "southeast", "northwest", "northeast"):
        ns, ew = corner[:5], corner[5:]
        edges = (partitioner.boundary(rank, ns), partitioner.boundary(rank, ew))
        if partitioner.boundary(rank, corner) is None and None not in edges:
            if edges[0].tile_offset != (0, 0) and edges[1].tile_offset != (0, 0):
                out.append(corner)
    return out


def corner_gathers(
    partitioner: TilePartitioner,
    rank: int,
    target_stagger: tuple[int, int],
    source_stagger: tuple[int, int],
    n_halo: int,
    depth: int,
    local_cells: tuple[int, int],
    direction: str,
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, bool]]:
    """Per cube corner of ``rank``: ``(ti, tj, si, sj, clockwise)``.

    ``(ti, tj)`` are the ``depth x depth`` points of the empty halo corner of a field at
    ``target_stagger``; ``(si, sj)`` the points of a field at ``source_stagger`` in the west/east
    (``"x"``) or south/north (``"y"``) halo they are read from. The source is the target rotated
    by 90 degrees about the cube corner, ``clockwise`` (doubled offsets (p, q) -> (q, -p)) or
    counter-clockwise ((p, q) -> (-q, p)); a vector read there is turned back the other way.
    """
    if direction not in ("x", "y"):
        raise HaloError(f"corner_fill must be False, True, 'x' or 'y', got {direction!r}")
    nx, ny = local_cells
    (tx, ty), (sx, sy) = target_stagger, source_stagger
    h, d = n_halo, depth
    out = []
    for corner in cube_corners(partitioner, rank):
        dx, dy = DIRECTIONS[corner]
        ox, oy = (2 * nx if dx > 0 else 0), (2 * ny if dy > 0 else 0)  # the corner, doubled
        ii = np.arange(h + nx + tx, h + nx + tx + d) if dx > 0 else np.arange(h - d, h)
        jj = np.arange(h + ny + ty, h + ny + ty + d) if dy > 0 else np.arange(h - d, h)
        ti, tj = (a.ravel() for a in np.meshgrid(ii, jj, indexing="ij"))
        p = 2 * (ti - h) + 1 - tx - ox  # doubled offsets from the cube corner point
        q = 2 * (tj - h) + 1 - ty - oy
        clockwise = (direction == "x") == (dx == dy)
        ps, qs = (q, -p) if clockwise else (-q, p)
        if np.any((ps + ox - 1 + sx) % 2) or np.any((qs + oy - 1 + sy) % 2):
            raise HaloError(  # pragma: no cover - callers pair staggers that rotate onto each other
                f"internal: stagger {target_stagger} does not rotate onto {source_stagger}"
            )
        si = (ps + ox - 1 + sx) // 2 + h
        sj = (qs + oy - 1 + sy) // 2 + h
        out.append((ti, tj, si, sj, clockwise))
    return out


class CornerFill:
    """Scalar corner fill, gathers built once for one field on one rank; ``__call__`` fills."""

    def __init__(
        self,
        partitioner: TilePartitioner,
        rank: int,
        array: Any,
        stagger: tuple[int, int],
        n_halo: int,
        depth: int,
        local_cells: tuple[int, int],
        direction: str,
    ) -> None:
        self.array = array
        xp = array_module(array)  # index arrays live where the data lives (NumPy / CuPy)
        self._moves = [
            ((xp.asarray(ti), xp.asarray(tj)), (xp.asarray(si), xp.asarray(sj)))
            for ti, tj, si, sj, _ in corner_gathers(
                partitioner, rank, stagger, stagger, n_halo, depth, local_cells, direction
            )
        ]

    @property
    def active(self) -> bool:
        return bool(self._moves)

    def __call__(self) -> None:
        a = self.array
        for target, source in self._moves:
            a[target] = a[source]


class VectorCornerFill:
    """FV3's vector corner fill for an (u, v) pair on the A-, C- or D-grid at the cube corners.

    u's empty halo corner is read from v's halo and v's from u's, on the sides
    :data:`VECTOR_CORNER_SOURCES` names; the sign is that of the 90-degree vector rotation
    (FV3 ``mysign = -1``: A/D-grid flip at the south-west and north-east corners, C-grid at the
    north-west and south-east ones).
    """

    def __init__(
        self,
        partitioner: TilePartitioner,
        rank: int,
        u: Any,
        v: Any,
        grid: str,
        staggers: tuple[tuple[int, int], tuple[int, int]],
        n_halo: int,
        depth: int,
        local_cells: tuple[int, int],
    ) -> None:
        self.arrays = (u, v)
        rows: dict[tuple[int, int], list[tuple[np.ndarray, ...]]] = {}
        for tc, direction in enumerate(VECTOR_CORNER_SOURCES[grid]):
            for ti, tj, si, sj, clockwise in corner_gathers(
                partitioner, rank, staggers[tc], staggers[1 - tc], n_halo, depth, local_cells,
                direction,
            ):
                # source = target turned clockwise, so the vector is turned counter-clockwise:
                # (u, v) = (-v', u'); the other sense gives (u, v) = (v', -u')
                sign = -1 if clockwise == (tc == 0) else 1
                rows.setdefault((tc, sign), []).append((ti, tj, si, sj))
        xp = array_module(u)
        self._moves = [
            (tc, sign, *(xp.asarray(np.concatenate(col)) for col in zip(*parts)))
            for (tc, sign), parts in sorted(rows.items())
        ]

    @property
    def active(self) -> bool:
        return bool(self._moves)

    def __call__(self) -> None:
        for tc, sign, ti, tj, si, sj in self._moves:
            src = self.arrays[1 - tc][si, sj]
            self.arrays[tc][ti, tj] = src if sign > 0 else -src

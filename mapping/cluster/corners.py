"""FV3-style corner fill at the three-tile cube corners, where no diagonal neighbour exists.

The empty halo corner is filled with the adjacent (already exchanged) halo rotated by 90 degrees
about the cube corner: from the west/east halo for ``"x"``, from the south/north halo for
``"y"`` -- the rule of FV3's ``fill_corners`` (pace ``fill_corners_2d`` A- and B-grid variants).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mapping.cluster.arrays import array_module
from mapping.cluster.errors import HaloError
from mapping.cluster.geometry import DIRECTIONS
from mapping.cluster.partitioner import TilePartitioner


class CornerFill:
    """Gathers built once for one field on one rank; ``__call__`` fills the corners in place."""

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
        if direction not in ("x", "y"):
            raise HaloError(f"corner_fill must be False, True, 'x' or 'y', got {direction!r}")
        self.array = array
        self._moves: list[tuple[tuple[Any, Any], tuple[Any, Any]]] = []
        nx, ny = local_cells
        sx, sy = stagger
        h, d = n_halo, depth
        for corner in ("southwest", "southeast", "northwest", "northeast"):
            dx, dy = DIRECTIONS[corner]
            edges = (
                partitioner.boundary(rank, "east" if dx > 0 else "west"),
                partitioner.boundary(rank, "north" if dy > 0 else "south"),
            )
            if partitioner.boundary(rank, corner) is not None or None in edges:
                continue  # a real neighbour fills it, or no cube corner here
            if edges[0].tile_offset == (0, 0) or edges[1].tile_offset == (0, 0):
                continue  # corner of the rank, not of the tile
            ii = np.arange(h + nx + sx, h + nx + sx + d) if dx > 0 else np.arange(h - d, h)
            jj = np.arange(h + ny + sy, h + ny + sy + d) if dy > 0 else np.arange(h - d, h)
            ti, tj = np.meshgrid(ii, jj, indexing="ij")
            # doubled offsets from the cube corner point
            p = 2 * (ti - h) + 1 - sx - (2 * nx if dx > 0 else 0)
            q = 2 * (tj - h) + 1 - sy - (2 * ny if dy > 0 else 0)
            same_sign = dx == dy
            if (direction == "x") == same_sign:
                ps, qs = q, -p
            else:
                ps, qs = -q, p
            si = (ps + (2 * nx if dx > 0 else 0) - 1 + sx) // 2 + h
            sj = (qs + (2 * ny if dy > 0 else 0) - 1 + sy) // 2 + h
            xp = array_module(array)  # index arrays live where the data lives (NumPy / CuPy)
            self._moves.append(
                (
                    (xp.asarray(ti.ravel()), xp.asarray(tj.ravel())),
                    (xp.asarray(si.ravel()), xp.asarray(sj.ravel())),
                )
            )

    @property
    def active(self) -> bool:
        return bool(self._moves)

    def __call__(self) -> None:
        a = self.array
        for target, source in self._moves:
            a[target] = a[source]


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


class DGridVectorCornerFill:
    """FV3's ``fill_corners_dgrid`` for a D-grid (u, v) pair at the cube corners.

    The empty halo corner of u is filled from v's halo and vice versa; at the south-west and
    north-east corners with a sign flip (``vector=True`` in FV3), at the other two without.
    """

    def __init__(
        self,
        partitioner: TilePartitioner,
        rank: int,
        u: Any,
        v: Any,
        n_halo: int,
        depth: int,
        local_cells: tuple[int, int],
    ) -> None:
        self.arrays = (u, v)
        nx, ny = local_cells
        is_ = js = n_halo
        ie, je = n_halo + nx - 1, n_halo + ny - 1
        # (target comp, target i, j, source comp, source i, j, sign) per corner, FV3 formulas
        rules = {
            "southwest": lambda i, j: [
                (0, is_ - i, js - j, 1, is_ - j, js + i - 1, -1),
                (1, is_ - i, js - j, 0, is_ + j - 1, js - i, -1),
            ],
            "northwest": lambda i, j: [
                (0, is_ - i, je + 1 + j, 1, is_ - j, je + 1 - i, 1),
                (1, is_ - i, je + j, 0, is_ + j - 1, je + 1 + i, 1),
            ],
            "southeast": lambda i, j: [
                (0, ie + i, js - j, 1, ie + 1 + j, js + i - 1, 1),
                (1, ie + 1 + i, js - j, 0, ie - j + 1, js - i, 1),
            ],
            "northeast": lambda i, j: [
                (0, ie + i, je + 1 + j, 1, ie + 1 + j, je - i + 1, -1),
                (1, ie + 1 + i, je + j, 0, ie - j + 1, je + 1 + i, -1),
            ],
        }
        rows = [
            row
            for corner in cube_corners(partitioner, rank)
            for i in range(1, depth + 1)
            for j in range(1, depth + 1)
            for row in rules[corner](i, j)
        ]
        xp = array_module(u)
        self._moves = []
        for tc in (0, 1):
            for sign in (1, -1):
                sel = np.array([r for r in rows if r[0] == tc and r[6] == sign], dtype=np.int64)
                if sel.size:
                    self._moves.append(
                        (tc, xp.asarray(sel[:, 1]), xp.asarray(sel[:, 2]), int(sel[0, 3]),
                         xp.asarray(sel[:, 4]), xp.asarray(sel[:, 5]), sign)
                    )

    @property
    def active(self) -> bool:
        return bool(self._moves)

    def __call__(self) -> None:
        for tc, ti, tj, sc, si, sj, sign in self._moves:
            src = self.arrays[sc][si, sj]
            self.arrays[tc][ti, tj] = src if sign > 0 else -src

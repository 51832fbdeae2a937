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

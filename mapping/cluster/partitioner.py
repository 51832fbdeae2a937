"""Domain decomposition of one tile or of the six-tile cubed sphere into MPI ranks.

Ranks are numbered tile by tile; inside a tile the subtile index ``i`` (along x) runs fastest:
``rank = tile * nx * ny + j * nx + i`` for ``layout = (nx, ny)``. Tile numbering, orientation
and edge connectivity follow FV3 / pace-util (see ``docs/cluster.md`` for the table).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mapping.cluster.errors import PartitionError
from mapping.cluster.geometry import LOCATIONS, direction_offset, map_across_edge


@dataclass(frozen=True)
class Boundary:
    """The rank across one edge or corner of a subdomain.

    ``n_rotations``: clockwise 90-degree rotations from this rank's axes to the neighbour's axes
    (pace's ``n_clockwise_rotations``). ``tile_offset``: the tile-level direction of the
    neighbour's tile, ``(0, 0)`` when both ranks share a tile.
    """

    neighbour_rank: int
    n_rotations: int
    tile_offset: tuple[int, int] = (0, 0)


#: FV3 cube connectivity: (tile, edge) -> (neighbour tile, clockwise rotations). Even tiles
#: (0, 2, 4) and odd tiles (1, 3, 5) follow one rule each, as in FV3 and pace-util.
def _cube_link(tile: int, edge: tuple[int, int]) -> tuple[int, int]:
    even = tile % 2 == 0
    if edge == (-1, 0):  # west
        return ((tile - 2) % 6, 1) if even else ((tile - 1) % 6, 0)
    if edge == (1, 0):  # east
        return ((tile + 1) % 6, 0) if even else ((tile + 2) % 6, 1)
    if edge == (0, 1):  # north
        return ((tile + 2) % 6, 3) if even else ((tile + 1) % 6, 0)
    if edge == (0, -1):  # south
        return ((tile - 1) % 6, 0) if even else ((tile - 2) % 6, 3)
    raise PartitionError(f"not a tile edge: {edge}")


class TilePartitioner:
    """``layout = (nx, ny)`` ranks on a single tile, with closed or periodic boundaries."""

    n_tiles = 1

    def __init__(self, layout: tuple[int, int], periodic: bool = False) -> None:
        nx, ny = (int(v) for v in layout)
        if nx < 1 or ny < 1:
            raise PartitionError(f"layout must be two positive integers (nx, ny), got {layout!r}")
        self.layout = (nx, ny)
        self.periodic = bool(periodic)

    # --- ranks -----------------------------------------------------------------------------
    @property
    def ranks_per_tile(self) -> int:
        return self.layout[0] * self.layout[1]

    @property
    def total_ranks(self) -> int:
        return self.n_tiles * self.ranks_per_tile

    def _check_rank(self, rank: int) -> int:
        if not 0 <= int(rank) < self.total_ranks:
            raise PartitionError(
                f"rank {rank} out of range: this partitioner has {self.total_ranks} ranks"
            )
        return int(rank)

    def tile_index(self, rank: int) -> int:
        return self._check_rank(rank) // self.ranks_per_tile

    def subtile_index(self, rank: int) -> tuple[int, int]:
        """(i, j) position of ``rank`` inside its tile, ``i`` along x."""
        within = self._check_rank(rank) % self.ranks_per_tile
        return within % self.layout[0], within // self.layout[0]

    def rank(self, tile: int, i: int, j: int) -> int:
        nx, ny = self.layout
        if not (0 <= tile < self.n_tiles and 0 <= i < nx and 0 <= j < ny):
            raise PartitionError(
                f"no rank at tile={tile}, i={i}, j={j}: tiles 0..{self.n_tiles - 1}, "
                f"i 0..{nx - 1}, j 0..{ny - 1}"
            )
        return tile * self.ranks_per_tile + j * nx + i

    # --- neighbours ------------------------------------------------------------------------
    def _tile_link(self, tile: int, edge: tuple[int, int]) -> tuple[int, int] | None:
        """(neighbour tile, rotations) across a tile edge or periodic corner; None if closed."""
        return (tile, 0) if self.periodic else None

    def boundary(self, rank: int, direction: str) -> Boundary | None:
        """The neighbour across ``direction`` (edge or corner), or None if there is none."""
        dx, dy = direction_offset(direction)
        tile = self.tile_index(rank)
        i, j = self.subtile_index(rank)
        nx, ny = self.layout
        ti, tj = i + dx, j + dy
        ox = -1 if ti < 0 else (1 if ti >= nx else 0)
        oy = -1 if tj < 0 else (1 if tj >= ny else 0)
        if ox == 0 and oy == 0:
            return Boundary(self.rank(tile, ti, tj), 0)
        link = self._tile_link(tile, (ox, oy))
        if link is None:
            return None
        ntile, rot = link
        # map the centre of the target subtile (doubled subtile coordinates) into the other tile
        X, Y = map_across_edge(
            np.array(2 * ti + 1), np.array(2 * tj + 1), (2 * nx, 2 * ny), (ox, oy), rot
        )
        return Boundary(self.rank(ntile, int(X) // 2, int(Y) // 2), rot, (ox, oy))

    # --- index helpers ---------------------------------------------------------------------
    def subdomain_extent(self, rank: int, nx_tile: int, ny_tile: int) -> tuple[int, int, int, int]:
        """Global cell range ``(i0, i1, j0, j1)`` (half-open) of ``rank``'s interior on its tile."""
        nx, ny = self.layout
        if nx_tile % nx or ny_tile % ny:
            raise PartitionError(
                f"tile of {nx_tile}x{ny_tile} cells does not divide evenly onto layout "
                f"{self.layout}: pick a tile size that is a multiple of the layout"
            )
        i, j = self.subtile_index(rank)
        sx, sy = nx_tile // nx, ny_tile // ny
        return i * sx, (i + 1) * sx, j * sy, (j + 1) * sy

    def global_slices(
        self, rank: int, nx_tile: int, ny_tile: int, location: str = "center"
    ) -> tuple[slice, slice]:
        """Index ranges of ``rank``'s interior in a global tile array at ``location``.

        Staggered dimensions include both boundary points (``n + 1`` of them), which the rank
        shares with its neighbours.
        """
        sx, sy = location_stagger(location)
        i0, i1, j0, j1 = self.subdomain_extent(rank, nx_tile, ny_tile)
        return slice(i0, i1 + sx), slice(j0, j1 + sy)

    def local_slices(
        self, rank: int, nx_tile: int, ny_tile: int, n_halo: int, location: str = "center"
    ) -> tuple[slice, slice]:
        """Index ranges of the interior inside ``rank``'s local array (halo of ``n_halo``)."""
        sx, sy = location_stagger(location)
        i0, i1, j0, j1 = self.subdomain_extent(rank, nx_tile, ny_tile)
        return slice(n_halo, n_halo + i1 - i0 + sx), slice(n_halo, n_halo + j1 - j0 + sy)

    def global_to_local(
        self, rank: int, nx_tile: int, ny_tile: int, n_halo: int, gi: int, gj: int
    ) -> tuple[int, int]:
        """Local array index of global index ``(gi, gj)`` (same location, halo of ``n_halo``)."""
        i0, _, j0, _ = self.subdomain_extent(rank, nx_tile, ny_tile)
        return gi - i0 + n_halo, gj - j0 + n_halo

    def local_to_global(
        self, rank: int, nx_tile: int, ny_tile: int, n_halo: int, li: int, lj: int
    ) -> tuple[int, int]:
        """Global tile index of local array index ``(li, lj)`` (halo points lie off the range)."""
        i0, _, j0, _ = self.subdomain_extent(rank, nx_tile, ny_tile)
        return li + i0 - n_halo, lj + j0 - n_halo

    def __repr__(self) -> str:
        return f"{type(self).__name__}(layout={self.layout}, periodic={self.periodic})"


class CubedSpherePartitioner(TilePartitioner):
    """Six FV3 tiles, each split by ``layout``: ``6 * nx * ny`` ranks.

    Only square layouts ``(n, n)`` exist on the cube: every tile has edges that join its x
    direction to a neighbour tile's y direction, so rank boundaries line up across those edges
    (one neighbour per edge, as halo exchange needs) only when ``nx == ny``.
    """

    n_tiles = 6

    def __init__(self, layout: tuple[int, int]) -> None:
        super().__init__(layout, periodic=False)
        nx, ny = self.layout
        if nx != ny:
            raise PartitionError(
                f"cubed-sphere layout {self.layout} is not square: the layouts that work are "
                f"(n, n), e.g. (1, 1), (2, 2), (3, 3) = 6, 24, 54 ranks, because each tile's "
                f"north/west edges join a neighbour tile's west/north edges rotated by 90 degrees, "
                f"so x and y must be split alike (a non-square split would need different, "
                f"permuted layouts per tile with unequal rank counts, which one layout cannot "
                f"express). Use TilePartitioner for non-square layouts."
            )

    def _tile_link(self, tile: int, edge: tuple[int, int]) -> tuple[int, int] | None:
        if edge[0] != 0 and edge[1] != 0:
            return None  # three tiles meet at a cube corner: no diagonal neighbour
        return _cube_link(tile, edge)

    def __repr__(self) -> str:
        return f"CubedSpherePartitioner(layout={self.layout})"


def location_stagger(location: str) -> tuple[int, int]:
    try:
        return LOCATIONS[location]
    except KeyError:
        raise PartitionError(
            f"unknown location {location!r}; use one of {', '.join(LOCATIONS)}"
        ) from None

"""Partitioners: rank numbering, neighbours and rotations, index helpers, bad layouts."""

from __future__ import annotations

import numpy as np
import pytest
from cube_oracle import FRAMES

from mapping.cluster import (
    CORNER_DIRECTIONS,
    DIRECTIONS,
    EDGE_DIRECTIONS,
    CubedSpherePartitioner,
    PartitionError,
    TilePartitioner,
)


def _cw(v: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Rotate the 3-D in-plane vector v (plane spanned by right-handed a, b) 90 deg clockwise."""
    x, y = v @ a, v @ b
    return y * a - x * b


@pytest.mark.parametrize("tile", range(6))
@pytest.mark.parametrize("edge", EDGE_DIRECTIONS)
def test_cube_connectivity_matches_3d_geometry(tile: int, edge: str) -> None:
    """Checked against the 3-D cube: the neighbour tile is the face whose normal is the edge's
    outward axis, and the rotation count is the number of clockwise turns taking this tile's
    axes onto the neighbour's axes unfolded across the edge (exact integer vectors)."""
    part = CubedSpherePartitioner((1, 1))
    bnd = part.boundary(part.rank(tile, 0, 0), edge)
    C, X, Y = (np.array(v) for v in FRAMES[tile])
    dx, dy = DIRECTIONS[edge]
    out = dx * X + dy * Y
    ntile = next(t for t, f in enumerate(FRAMES) if np.array_equal(f[0], out))
    nC, nX, nY = (np.array(v) for v in FRAMES[ntile])
    assert part.tile_index(bnd.neighbour_rank) == ntile

    def unfold(v: np.ndarray) -> np.ndarray:  # neighbour plane -> this plane: -C -> out
        return (v @ -C) * out + (v @ (X if dx == 0 else Y)) * (X if dx == 0 else Y)

    ux, uy = unfold(nX), unfold(nY)
    ax, ay = X, Y
    for _ in range(bnd.n_rotations):
        ax, ay = _cw(ax, X, Y), _cw(ay, X, Y)
    assert np.array_equal(ax, ux) and np.array_equal(ay, uy)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_rank_numbering_and_neighbour_symmetry(n: int) -> None:
    """Checked against the definition: rank <-> (tile, i, j) round-trips; every neighbour
    relation is mutual with opposite rotation; cube corners (8, shared by 3 ranks each) have no
    diagonal neighbour."""
    part = CubedSpherePartitioner((n, n))
    assert part.total_ranks == 6 * n * n
    missing = 0
    for rank in range(part.total_ranks):
        t, (i, j) = part.tile_index(rank), part.subtile_index(rank)
        assert part.rank(t, i, j) == rank
        for d in DIRECTIONS:
            b = part.boundary(rank, d)
            if b is None:
                assert d in CORNER_DIRECTIONS
                missing += 1
                continue
            back = [
                part.boundary(b.neighbour_rank, e)
                for e in DIRECTIONS
                if part.boundary(b.neighbour_rank, e) is not None
                and part.boundary(b.neighbour_rank, e).neighbour_rank == rank
            ]
            assert any((x.n_rotations + b.n_rotations) % 4 == 0 for x in back)
    assert missing == 8 * 3


@pytest.mark.parametrize("layout", [(2, 1), (3, 2), (1, 3)])
def test_non_square_cube_layout_is_refused_with_working_layouts_named(layout) -> None:
    with pytest.raises(PartitionError, match=r"\(n, n\)"):
        CubedSpherePartitioner(layout)


def _edges_line_up(layouts) -> bool:
    """Rank boundaries meet across all 12 cube edges for per-tile ``layouts`` (3-D frames of
    ``cube_oracle``: a tile splits an edge along its X axis into layout[0] pieces, else [1])."""
    for t1, (c1, x1, _) in enumerate(FRAMES):
        for t2, (c2, x2, _) in enumerate(FRAMES):
            if np.dot(c1, c2) != 0:
                continue  # same or opposite face: no shared edge
            along = np.cross(c1, c2)
            pieces = [lay[0] if np.dot(x, along) else lay[1]
                      for x, lay in ((x1, layouts[t1]), (x2, layouts[t2]))]
            if pieces[0] != pieces[1]:
                return False
    return True


def test_non_square_layouts_need_different_layouts_per_tile() -> None:
    """The refusal is geometric (3-D cube, not the package's table): one layout (a, b) for all
    tiles lines up across every cube edge only when a == b; a non-square split exists only as
    per-tile permutations (a, b), (c, b), (c, a), (b, a), (b, c), (a, c) -- tiles with unequal
    rank counts, which one ``layout`` cannot express."""
    assert _edges_line_up([(2, 2)] * 6)
    for a, b in [(2, 1), (3, 2), (1, 3)]:
        assert not _edges_line_up([(a, b)] * 6)
    a, b, c = 2, 1, 3
    assert _edges_line_up([(a, b), (c, b), (c, a), (b, a), (b, c), (a, c)])


def test_tile_partitioner_closed_and_periodic_non_square() -> None:
    """Checked by hand on a 3x2 layout: ranks numbered x-fastest; closed tiles have no
    neighbour past the edge, periodic ones wrap (0 rotations)."""
    closed = TilePartitioner((3, 2))
    assert closed.total_ranks == 6 and closed.subtile_index(4) == (1, 1)
    assert closed.boundary(0, "west") is None and closed.boundary(0, "southwest") is None
    assert closed.boundary(0, "northeast").neighbour_rank == 4
    periodic = TilePartitioner((3, 2), periodic=True)
    assert periodic.boundary(0, "west").neighbour_rank == 2
    assert periodic.boundary(0, "south").neighbour_rank == 3
    assert periodic.boundary(0, "southwest").neighbour_rank == 5
    assert {periodic.boundary(r, d).n_rotations for r in range(6) for d in DIRECTIONS} == {0}


def test_index_helpers_cell_centred_and_staggered() -> None:
    """Checked against hand-computed ranges for a 12x12 tile on a 2x3 layout."""
    part = TilePartitioner((2, 3))
    assert part.subdomain_extent(5, 12, 12) == (6, 12, 8, 12)
    assert part.global_slices(5, 12, 12, "center") == (slice(6, 12), slice(8, 12))
    assert part.global_slices(5, 12, 12, "corner") == (slice(6, 13), slice(8, 13))
    assert part.global_slices(5, 12, 12, "x_interface") == (slice(6, 13), slice(8, 12))
    assert part.local_slices(5, 12, 12, 3, "y_interface") == (slice(3, 9), slice(3, 8))
    assert part.global_to_local(5, 12, 12, 3, 6, 8) == (3, 3)
    assert part.local_to_global(5, 12, 12, 3, 0, 0) == (3, 5)
    with pytest.raises(PartitionError, match="multiple of the layout"):
        part.subdomain_extent(0, 13, 12)
    with pytest.raises(PartitionError, match="out of range"):
        part.tile_index(6)
    with pytest.raises(PartitionError, match="unknown direction"):
        part.boundary(0, "up")

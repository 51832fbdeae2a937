"""Grid locations, directions and the point map across tile edges, in doubled coordinates.

Every point of a tile is addressed by *doubled* integer coordinates ``(X, Y)`` in ``[0, 2N]``
for an ``N x N`` tile: cell centres sit at odd ``X``, cell edges/corners at even ``X``. Rotations
of a tile frame then map centres to centres, x-interfaces to y-interfaces and so on, which is how
staggered vector components swap under rotation.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

#: direction name -> (dx, dy); the order is the canonical order of messages and plans.
DIRECTIONS: Mapping[str, tuple[int, int]] = {
    "west": (-1, 0),
    "east": (1, 0),
    "south": (0, -1),
    "north": (0, 1),
    "southwest": (-1, -1),
    "southeast": (1, -1),
    "northwest": (-1, 1),
    "northeast": (1, 1),
}
EDGE_DIRECTIONS = ("west", "east", "south", "north")
CORNER_DIRECTIONS = ("southwest", "southeast", "northwest", "northeast")

#: location name -> stagger (sx, sy): 1 where the field has one extra point along that axis.
LOCATIONS: Mapping[str, tuple[int, int]] = {
    "center": (0, 0),
    "corner": (1, 1),
    "x_interface": (1, 0),  # on west/east cell faces: C-grid uc, D-grid v
    "y_interface": (0, 1),  # on south/north cell faces: C-grid vc, D-grid u
}


def direction_offset(direction: str) -> tuple[int, int]:
    from mapping.cluster.errors import PartitionError

    try:
        return DIRECTIONS[direction]
    except KeyError:
        raise PartitionError(
            f"unknown direction {direction!r}; use one of {', '.join(DIRECTIONS)}"
        ) from None


def rotate_offsets(p: np.ndarray, q: np.ndarray, n_rotations: int) -> tuple[np.ndarray, np.ndarray]:
    """Coordinates in a frame rotated ``n_rotations`` x 90 degrees clockwise from the (p, q) frame."""
    r = n_rotations % 4
    if r == 0:
        return p, q
    if r == 1:
        return -q, p
    if r == 2:
        return -p, -q
    return q, -p


def map_across_edge(
    X: np.ndarray,
    Y: np.ndarray,
    size: tuple[int, int],
    tile_offset: tuple[int, int],
    n_rotations: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Doubled coordinates of points beyond a tile edge, in the neighbour tile's own frame.

    ``size`` is the doubled tile size ``(2 Nx, 2 Ny)``; ``tile_offset`` the tile-level direction
    of the neighbour tile (``(0, 0)`` on the same tile); ``n_rotations`` the number of clockwise
    90-degree rotations from this tile's axes to the neighbour tile's axes (unfolded).
    """
    sx, sy = size
    dx, dy = tile_offset
    if dx == 0 and dy == 0:
        return X, Y
    p = X - (sx // 2 + sx * dx)
    q = Y - (sy // 2 + sy * dy)
    pr, qr = rotate_offsets(p, q, n_rotations)
    return pr + sx // 2, qr + sy // 2

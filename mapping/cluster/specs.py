"""What one halo exchange moves: scalar fields and (u, v) vector pairs with their staggering."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

#: stagger of (u, v) per grid: A both centred; C normal components on the faces; D tangential.
VECTOR_GRIDS: dict[str, tuple[tuple[int, int], tuple[int, int]]] = {
    "A": ((0, 0), (0, 0)),
    "C": ((1, 0), (0, 1)),
    "D": ((0, 1), (1, 0)),
}

CornerFill = bool | Literal["x", "y"]


@dataclass(frozen=True, eq=False)
class ScalarHalo:
    """A scalar field ``data[i, j(, k)]`` with ``n_halo`` halo points on both sides in i and j.

    ``location``: ``"center"`` (nx+2h, ny+2h) or ``"corner"`` (nx+1+2h, ny+1+2h).
    ``depth``: halo width this exchange fills (default ``n_halo``).
    ``corner_fill``: fill the halo corners at the three-tile cube corners (where no neighbour
    exists) from the adjacent halo as FV3's ``fill_corners`` does; ``True``/``"x"`` copies from
    the west/east halo, ``"y"`` from the south/north halo.
    ``sync_edges``: for staggered locations, overwrite this rank's north/east boundary points
    with the neighbour's values (the neighbour owns them), so shared points agree bit for bit.
    """

    data: Any
    n_halo: int
    location: str = "center"
    corner_fill: CornerFill = False
    depth: int | None = None
    sync_edges: bool = True


@dataclass(frozen=True, eq=False)
class VectorHalo:
    """A vector pair (u, v) on the A-, C- or D-grid; components swap and change sign under the
    90-degree rotations between tile frames.

    Shapes: A: u, v (nx+2h, ny+2h); C: u (nx+1+2h, ny+2h), v (nx+2h, ny+1+2h);
    D: u (nx+2h, ny+1+2h), v (nx+1+2h, ny+2h). ``depth`` and ``sync_edges`` as for ScalarHalo.
    ``corner_fill``: at the three-tile cube corners fill u's empty halo corner from v's halo and
    v's from u's, rotated as vectors -- FV3's ``fill_corners_agrid`` / ``fill_corners_cgrid`` /
    ``fill_corners_dgrid`` with ``vector=True`` for grid A / C / D (a no-op on other ranks).
    """

    u: Any
    v: Any
    n_halo: int
    grid: str = "D"
    depth: int | None = None
    sync_edges: bool = True
    corner_fill: bool = False

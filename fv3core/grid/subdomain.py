"""Which part of which cubed-sphere tile a rank owns (:class:`SubdomainSpec`).

Array conventions follow FV3/pace, indices [i, j] = [x, y], ``n_halo`` points on each side:
cell centres (nx+2h, ny+2h); corners (nx+1+2h, ny+1+2h); x-faces / C-grid u (nx+1+2h, ny+2h);
y-faces / C-grid v (nx+2h, ny+1+2h); D-grid edges dx (nx+2h, ny+1+2h), dy (nx+1+2h, ny+2h).
"""

from __future__ import annotations

from dataclasses import dataclass

from fv3core.errors import FV3ConfigError
from stencils.directions import Direction


@dataclass(frozen=True)
class SubdomainSpec:
    """Which part of which tile a rank owns: global interior index range [i0, i1) x [j0, j1)."""

    resolution: int
    tile: int
    i0: int
    i1: int
    j0: int
    j1: int
    n_halo: int = 3

    def __post_init__(self) -> None:
        n = self.resolution
        if not (0 <= self.i0 < self.i1 <= n and 0 <= self.j0 < self.j1 <= n):
            raise FV3ConfigError(
                f"subdomain [{self.i0}:{self.i1}, {self.j0}:{self.j1}] lies outside tile C{n}"
            )
        if not 0 <= self.tile < 6:
            raise FV3ConfigError(f"tile={self.tile} is not a cubed-sphere tile (0..5)")

    @property
    def nx(self) -> int:
        return self.i1 - self.i0

    @property
    def ny(self) -> int:
        return self.j1 - self.j0

    @property
    def on_west(self) -> bool:
        return self.i0 == 0

    @property
    def on_east(self) -> bool:
        return self.i1 == self.resolution

    @property
    def on_south(self) -> bool:
        return self.j0 == 0

    @property
    def on_north(self) -> bool:
        return self.j1 == self.resolution

    def cells(self, d: Direction) -> int:
        """Compute cells along ``d`` (``nx`` or ``ny``)."""
        return self.nx if d.axis == 0 else self.ny

    def on_edges(self, d: Direction) -> tuple[bool, bool]:
        """Whether the subdomain touches the tile edge at the start and at the end along ``d``
        (west/east for x, south/north for y)."""
        return (self.on_west, self.on_east) if d.axis == 0 else (self.on_south, self.on_north)

"""Direction-generic stencil externals: write a directional scheme once, build it for x or y.

GTScript offsets and horizontal regions cannot be computed at run time, but they can come
from externals.  A directional stencil reads ``q[DI, DJ, 0]`` (one cell downstream),
``q[-DI2, -DJ2, 0]`` (two cells upstream), ... and restricts tile-edge code to
``region[sa:sb, sc:sd]`` (the first interior cell row/column along the direction) and
``region[ea:eb, ec:ed]`` (the last one); ``sa + DI`` etc. move those along the direction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gt4py.cartesian.gtscript import I, J

FAR = 10_000  # offset that puts a region outside any domain


@dataclass(frozen=True)
class Direction:
    name: str  # "x" or "y"

    @property
    def axis(self) -> int:
        return 0 if self.name == "x" else 1

    def offsets(self) -> dict[str, int]:
        x = self.name == "x"
        return {"DI": int(x), "DJ": int(not x), "DI2": 2 * int(x), "DJ2": 2 * int(not x)}

    def edge_regions(
        self,
        origin: tuple[int, ...],
        first_interior: int,
        last_interior: int,
        on_start: bool,
        on_end: bool,
    ) -> dict[str, Any]:
        """Region bounds of the tile's first and last interior cell along this direction.

        ``first_interior``/``last_interior``: array indices (along this axis) of the tile's
        first/last interior cell; ``on_start``/``on_end``: whether this subdomain touches those
        tile edges (if not, the region is placed out of reach).
        """
        ax = self.axis
        o = origin[ax]
        A = I if ax == 0 else J
        B = J if ax == 0 else I
        s = A[0] + (first_interior - o) if on_start else A[0] - FAR
        e = A[0] + (last_interior - o) if on_end else A[0] - FAR
        whole_lo, whole_hi = B[0] - FAR, B[-1] + FAR
        if ax == 0:
            return {
                "sa": s, "sb": s + 1, "sc": whole_lo, "sd": whole_hi,
                "ea": e, "eb": e + 1, "ec": whole_lo, "ed": whole_hi,
            }  # fmt: skip
        return {
            "sa": whole_lo, "sb": whole_hi, "sc": s, "sd": s + 1,
            "ea": whole_lo, "eb": whole_hi, "ec": e, "ed": e + 1,
        }  # fmt: skip


X = Direction("x")
Y = Direction("y")

"""Direction-generic stencil externals: write a directional scheme once, build it for x or y.

GTScript offsets and horizontal regions cannot be computed at run time, but they can come
from externals.  A directional stencil reads ``q[DI, DJ, 0]`` (one cell downstream),
``q[-DI2, -DJ2, 0]`` (two cells upstream), ``q[AI, AJ, 0]`` (one cell along the face the
direction crosses), ... and restricts edge code to ``region[sa:sb, sc:sd]`` (the first cell
row/column along the direction) and ``region[ea:eb, ec:ed]`` (the last one).

This module is the one definition of that convention: models build their x and y variants
with :meth:`Direction.externals` and :meth:`Direction.edge_regions`, and schedule tuning
builds the same variants of any registered definition from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gt4py.cartesian.gtscript import I, J

#: an offset that puts a region outside any domain
FAR = 10_000


@dataclass(frozen=True)
class Direction:
    """The x (``axis`` 0) or y (``axis`` 1) direction of a directional stencil."""

    name: str

    def __post_init__(self) -> None:
        if self.name not in ("x", "y"):
            raise ValueError(f"Direction name {self.name!r}: use 'x' or 'y'")

    @property
    def axis(self) -> int:
        return 0 if self.name == "x" else 1

    @property
    def across(self) -> Direction:
        """The other direction (the one along the faces this direction crosses)."""
        return Y if self.axis == 0 else X

    def halo_across(self, n_halo: int) -> tuple[int, int]:
        """``(halo_x, halo_y)`` of the faces crossed along this direction with every halo row
        across and none along it (FV3's ``is:ie+1, jsd:jed`` for x)."""
        return (0, n_halo) if self.axis == 0 else (n_halo, 0)

    def offsets(self) -> dict[str, int]:
        """``DI, DJ`` (unit step along the direction) and ``DI2, DJ2`` (two steps)."""
        x = int(self.axis == 0)
        return {"DI": x, "DJ": 1 - x, "DI2": 2 * x, "DJ2": 2 * (1 - x)}

    def face_offsets(self) -> dict[str, int]:
        """:meth:`offsets` plus the offsets of a face stencil: along the face (``AI, AJ``),
        back across the face and along (``BAI, BAJ``), back and against (``BMI, BMJ``)."""
        off = self.offsets()
        di, dj = off["DI"], off["DJ"]
        return {**off, "AI": dj, "AJ": di, "BAI": dj - di, "BAJ": di - dj,
                "BMI": -dj - di, "BMJ": -di - dj}  # fmt: skip

    def band(self, start: int, n: int, prefix: str = "b") -> dict[str, Any]:
        """Region externals ``{prefix}a..{prefix}d``: the cells [start, start + n) along this
        direction (relative to the call origin) and the whole other axis."""
        a, b = (I, J) if self.axis == 0 else (J, I)
        along, whole = (a[0] + start, a[0] + start + n), (b[0] - FAR, b[-1] + FAR)
        bounds = (*along, *whole) if self.axis == 0 else (*whole, *along)
        return dict(zip((f"{prefix}a", f"{prefix}b", f"{prefix}c", f"{prefix}d"), bounds))

    def edge_regions(
        self,
        origin: tuple[int, ...],
        first: int,
        last: int,
        on_start: bool,
        on_end: bool,
    ) -> dict[str, Any]:
        """Region externals ``sa..sd`` and ``ea..ed`` of the first and last cell row along this
        direction.

        ``first``/``last``: array indices (along this axis) of those cells, ``origin`` the
        call origin; ``on_start``/``on_end``: whether the subdomain touches that edge (if not,
        the region is placed out of reach)."""
        o = origin[self.axis]
        start = self.band(first - o if on_start else -FAR, 1, "s")
        end = self.band(last - o if on_end else -FAR, 1, "e")
        return {**start, **end}

    def domain_edge_regions(self) -> dict[str, Any]:
        """``sa..ed`` on the first and last cell of the compute domain itself (both edges
        present): the regions a directional stencil is built with when it runs on its own."""
        a = I if self.axis == 0 else J
        b = J if self.axis == 0 else I
        whole = (b[0] - FAR, b[-1] + FAR)
        out: dict[str, Any] = {}
        for side, (lo, hi) in (("s", (a[0], a[0] + 1)), ("e", (a[-1], a[-1] + 1))):
            bounds = (lo, hi, *whole) if self.axis == 0 else (*whole, lo, hi)
            out.update(zip((f"{side}a", f"{side}b", f"{side}c", f"{side}d"), bounds))
        return out

    def externals(self) -> dict[str, Any]:
        """:meth:`face_offsets` and :meth:`domain_edge_regions`: everything a directional
        definition reads, for a build on its own (tuning, tests)."""
        return {**self.face_offsets(), **self.domain_edge_regions()}


X = Direction("x")
Y = Direction("y")
DIRECTIONS: tuple[Direction, ...] = (X, Y)


def direction(name: str) -> Direction:
    """The :class:`Direction` called ``name`` (``x`` or ``y``)."""
    for d in DIRECTIONS:
        if d.name == name:
            return d
    raise ValueError(f"unknown direction {name!r}: use 'x' or 'y'")

"""GTScript region externals for FV3's tile-edge index conditions (``i == 1``, ``i == npx``,
``j == 1``, ``j == npy``, ...) of one rank's launch.

FV3 writes its tile-edge treatment as branches on tile-global indices; a GTScript stencil
restricts the same statements to ``horizontal(region[...])``.  :func:`edge_line` places one of
FV3's index lines relative to the launch domain's first or last point (so a build depends only
on which tile edges the rank touches and on the launch's halo, not on the resolution or the
rank's place along the edge), out of reach where the rank does not touch that edge.
"""

from __future__ import annotations

from typing import Any

from gt4py.cartesian.gtscript import I, J

from fv3core.grid.subdomain import SubdomainSpec
from stencils.directions import FAR, Direction


def edge_line(axis: int, spec: SubdomainSpec, origin: tuple[int, ...], domain: tuple[int, ...],
              line: int) -> Any:  # fmt: skip
    """The GTScript ``AxisIndex`` of FV3's corner-index line ``line`` along ``axis`` (1, 2, ...:
    from the tile's start edge; -1 = npx, -2 = npx - 1, ...: from its end edge) for a launch at
    ``origin``/``domain``, relative to the domain's first (start edge) or last (end edge) point,
    so that the externals, and the build, depend only on which tile edges the rank touches and
    on the launch's halo, not on the resolution or the rank's place along the edge.  Out of
    reach where the rank does not touch that edge."""
    a = (I, J)[axis]
    h, n = spec.n_halo, spec.resolution
    first = spec.i0 if axis == 0 else spec.j0
    on_start, on_end = (spec.on_west, spec.on_east) if axis == 0 else (spec.on_south, spec.on_north)
    if not (on_start if line > 0 else on_end):
        return a[0] - FAR
    index = (line if line > 0 else n + 2 + line) - (first + 1) + h
    if line > 0:
        return a[0] + (index - origin[axis])
    return a[-1] + (index - (origin[axis] + domain[axis] - 1))


def tile_edges(spec: SubdomainSpec, origin: tuple[int, ...], domain: tuple[int, ...]
               ) -> dict[str, Any]:  # fmt: skip
    """``i_start``, ``i_end``, ``j_start``, ``j_end``: FV3's lines 1 and npx - 1 of each axis
    (:func:`edge_line`; the east/north edge line npx is ``i_end + 1``, line 0 ``i_start - 1``)."""
    return {"i_start": edge_line(0, spec, origin, domain, 1),
            "i_end": edge_line(0, spec, origin, domain, -2),
            "j_start": edge_line(1, spec, origin, domain, 1),
            "j_end": edge_line(1, spec, origin, domain, -2)}  # fmt: skip


def line_band(d: Direction, spec: SubdomainSpec, origin: tuple[int, ...], domain: tuple[int, ...],
              line: int, prefix: str) -> dict[str, Any]:  # fmt: skip
    """Region externals ``{prefix}a..d``: FV3's corner-index line ``line`` (see
    :func:`edge_line`) across the whole other axis."""
    at = edge_line(d.axis, spec, origin, domain, line)
    other = (J, I)[d.axis]
    along, whole = (at, at + 1), (other[0] - FAR, other[-1] + FAR)
    bounds = (*along, *whole) if d.axis == 0 else (*whole, *along)
    return dict(zip((f"{prefix}a", f"{prefix}b", f"{prefix}c", f"{prefix}d"), bounds))

"""GTScript region externals for FV3's tile-edge index conditions (``i == 1``, ``i == npx``,
``j == 1``, ``j == npy``, ...) of one rank's stencil, relative to the stencil's origin.

FV3 writes its tile-edge treatment as branches on tile-global indices; a GTScript stencil
restricts the same statements to ``horizontal(region[...])``.  :func:`tile_edge_externals`
gives, for a rank and a call origin, the ``AxisIndex`` of FV3's index 1 and of ``npx - 1``
along each axis (``i_start``, ``i_end``, ``j_start``, ``j_end``), placed out of reach where
the rank does not touch that tile edge; FV3's ``i == npx`` (the east face) is ``i_end + 1``,
``i == 0`` is ``i_start - 1``, and so on.
"""

from __future__ import annotations

from typing import Any

from gt4py.cartesian.gtscript import I, J

from fv3core.grid.metric import SubdomainSpec
from stencils.directions import FAR


def tile_edge_externals(spec: SubdomainSpec, origin: tuple[int, ...]) -> dict[str, Any]:
    """``i_start``/``i_end``/``j_start``/``j_end`` for a stencil of ``spec``'s rank called at
    ``origin`` (array indices; FV3's i is at array index i - (i0 + 1) + n_halo)."""
    h = spec.n_halo

    def at(fortran: int, start: int, axis: Any, o: int, on: bool) -> Any:
        return axis[0] + (fortran - (start + 1) + h - o) if on else axis[0] - FAR

    n = spec.resolution
    return {
        "i_start": at(1, spec.i0, I, origin[0], spec.on_west),
        "i_end": at(n, spec.i0, I, origin[0], spec.on_east),
        "j_start": at(1, spec.j0, J, origin[1], spec.on_south),
        "j_end": at(n, spec.j0, J, origin[1], spec.on_north),
    }

"""Named dimensions and the index space of one subdomain: compute domains by staggering.

A stencil's compute domain is named by the staggering of what it computes, e.g.
``(X_INTERFACE_DIM, Y_DIM, Z_DIM)`` for x-face values, and the number of halo cells it also
computes on each side; :class:`GridIndexing` turns that into GT4Py's ``origin``/``domain``
and into the allocation of a field of that staggering.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from stencils.directions import Direction
from stencils.errors import StencilError
from stencils.storage import Domain

X_DIM = "x"
X_INTERFACE_DIM = "x_interface"
Y_DIM = "y"
Y_INTERFACE_DIM = "y_interface"
Z_DIM = "z"
Z_INTERFACE_DIM = "z_interface"

#: (axis, whether the dimension is staggered) of each named dimension
_AXES: dict[str, tuple[int, bool]] = {
    X_DIM: (0, False), X_INTERFACE_DIM: (0, True),
    Y_DIM: (1, False), Y_INTERFACE_DIM: (1, True),
    Z_DIM: (2, False), Z_INTERFACE_DIM: (2, True),
}  # fmt: skip

Dims = tuple[str, str, str]

#: cell centres, corners (both horizontal dims staggered)
CELL_DIMS: Dims = (X_DIM, Y_DIM, Z_DIM)
CORNER_DIMS: Dims = (X_INTERFACE_DIM, Y_INTERFACE_DIM, Z_DIM)
Bounds = tuple[tuple[int, int, int], tuple[int, int, int]]


def face_dims(d: Direction) -> Dims:
    """The staggering of the faces crossed along ``d``: x-faces ``(X_INTERFACE_DIM, Y_DIM,
    Z_DIM)``, y-faces ``(X_DIM, Y_INTERFACE_DIM, Z_DIM)``."""
    return (X_INTERFACE_DIM, Y_DIM, Z_DIM) if d.axis == 0 else (X_DIM, Y_INTERFACE_DIM, Z_DIM)


def _axes(dims: Sequence[str]) -> list[tuple[int, bool]]:
    unknown = [d for d in dims if d not in _AXES]
    if unknown:
        raise StencilError(f"unknown dimension(s) {unknown}: use names of {sorted(_AXES)}")
    axes = [_AXES[d] for d in dims]
    if [a for a, _ in axes] != [0, 1, 2]:
        raise StencilError(f"dims {tuple(dims)} must name the x, y and z axes in that order")
    return axes


@dataclass(frozen=True)
class GridIndexing:
    """A subdomain of ``nx x ny`` cells and ``nz`` levels with ``n_halo`` halo cells on each
    horizontal side; every field of it is allocated with that halo (plus one point along each
    staggered dimension)."""

    nx: int
    ny: int
    nz: int
    n_halo: int

    def __post_init__(self) -> None:
        if min(self.nx, self.ny, self.nz) < 1 or self.n_halo < 0:
            raise StencilError(f"GridIndexing{(self.nx, self.ny, self.nz, self.n_halo)}: "
                               "sizes must be positive and the halo >= 0")  # fmt: skip

    def bounds(self, dims: Sequence[str], halo: int | tuple[int, int] = 0) -> Bounds:
        """(origin, domain) of a computation on ``dims`` that also covers ``halo`` halo cells
        on each side (one number for both horizontal axes, or ``(halo_x, halo_y)``)."""
        hx, hy = (halo, halo) if isinstance(halo, int) else halo
        if not (0 <= hx <= self.n_halo and 0 <= hy <= self.n_halo):
            raise StencilError(f"halo {halo} is outside the allocated halo of {self.n_halo} cells")
        origin, domain = [], []
        for (axis, staggered), h in zip(_axes(dims), (hx, hy, 0)):
            n = (self.nx, self.ny, self.nz)[axis] + int(staggered)
            origin.append(self.n_halo - h if axis < 2 else 0)
            domain.append(n + 2 * h)
        return (origin[0], origin[1], origin[2]), (domain[0], domain[1], domain[2])

    def domain_of(self, dims: Sequence[str]) -> Domain:
        """The allocation (:class:`stencils.storage.Domain`) of a field staggered as ``dims``."""
        sizes = [(self.nx, self.ny, self.nz)[a] + int(s) for a, s in _axes(dims)]
        return Domain(sizes[0], sizes[1], sizes[2], self.n_halo)

    def interior(self, dims: Sequence[str]) -> tuple[slice, slice]:
        """Index of the compute points of a field staggered as ``dims`` in its allocation."""
        (i, j, _), (ni, nj, _) = self.bounds(dims)
        return slice(i, i + ni), slice(j, j + nj)

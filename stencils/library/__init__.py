"""A validated library of classic stencils, each with a NumPy reference implementation.

``LIBRARY`` maps a name to a :class:`LibraryStencil`: the GTScript definition, its NumPy
reference, the fields it reads and writes, the halo it needs and a generator of valid inputs.
"""

from __future__ import annotations

from stencils.library.base import LibraryStencil
from stencils.library.hdiff import HDIFF
from stencils.library.jacobi import JACOBI_2D, JACOBI_3D
from stencils.library.laplacian import LAPLACIAN_2D, LAPLACIAN_3D
from stencils.library.upwind import UPWIND
from stencils.library.vadv import VADV

LIBRARY: dict[str, LibraryStencil] = {
    s.name: s for s in (LAPLACIAN_2D, LAPLACIAN_3D, HDIFF, VADV, JACOBI_2D, JACOBI_3D, UPWIND)
}

__all__ = ["LIBRARY", "LibraryStencil"]

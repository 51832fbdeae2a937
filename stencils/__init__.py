"""The DSL layer: GT4Py configuration, storages, a validated stencil library, stencil programs.

Import order matters: :mod:`stencils.config` sets the compiler flags GT4Py reads at import.
"""

from stencils.config import (  # noqa: I001  (must run before gt4py is imported)
    ALL_BACKENDS,
    COMPILED_BACKENDS,
    CPU_BACKENDS,
    GPU_BACKENDS,
    StencilConfig,
    default_backend,
)
from stencils.errors import StencilError
from stencils.factory import Stencil, StencilFactory
from stencils.storage import Domain, from_numpy, to_numpy, zeros

__all__ = [
    "ALL_BACKENDS",
    "COMPILED_BACKENDS",
    "CPU_BACKENDS",
    "GPU_BACKENDS",
    "Domain",
    "Stencil",
    "StencilConfig",
    "StencilError",
    "StencilFactory",
    "default_backend",
    "from_numpy",
    "to_numpy",
    "zeros",
]

"""The DSL layer: GT4Py configuration, storages, a validated stencil library, stencil programs.

Import order matters: :mod:`stencils.config` sets the compiler flags GT4Py reads at import.
"""

import importlib
from typing import Any

from stencils.config import (  # noqa: I001  (must run before gt4py is imported)
    ALL_BACKENDS,
    COMPILED_BACKENDS,
    CPU_BACKENDS,
    GPU_BACKENDS,
    StencilConfig,
    default_backend,
)
from stencils.errors import StencilError

# GT4Py-backed names load on first use, so that light users of the package (the CLI's argument
# parsers, :mod:`stencils.atomic`) start without importing GT4Py and DaCe.
_LAZY = {
    "Stencil": "stencils.factory",
    "StencilFactory": "stencils.factory",
    "Domain": "stencils.storage",
    "from_numpy": "stencils.storage",
    "to_numpy": "stencils.storage",
    "zeros": "stencils.storage",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'stencils' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


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

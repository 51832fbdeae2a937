"""Array-library dispatch: NumPy arrays (any strides, e.g. gt4py CPU storages) or CuPy arrays."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np


def array_module(array: Any) -> ModuleType:
    """``cupy`` for CuPy arrays (GPU gt4py storages), ``numpy`` otherwise."""
    if type(array).__module__.split(".")[0] == "cupy":
        import cupy

        return cupy
    return np


def as_3d(array: Any) -> Any:
    """A 3-D view ``[i, j, k]`` of a 2-D or 3-D field (2-D fields get one level)."""
    return array[:, :, None] if array.ndim == 2 else array

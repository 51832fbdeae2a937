"""Fields with halos for any backend: allocation, origin/domain helpers, numpy conversion."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from stencils.errors import StencilError


@dataclass(frozen=True)
class Domain:
    """A compute domain of ``nx x ny x nz`` cells with ``halo`` extra cells on each side in i, j.

    ``shape`` is the allocated array shape, ``origin`` the index of the first interior point and
    ``domain`` the interior size, in the order GT4Py's stencil calls take them.
    """

    nx: int
    ny: int
    nz: int
    halo: int = 0

    def __post_init__(self) -> None:
        for name in ("nx", "ny", "nz"):
            if getattr(self, name) < 1:
                raise StencilError(f"Domain.{name} must be >= 1, got {getattr(self, name)}")
        if self.halo < 0:
            raise StencilError(f"Domain.halo must be >= 0, got {self.halo}")

    @property
    def shape(self) -> tuple[int, int, int]:
        return (self.nx + 2 * self.halo, self.ny + 2 * self.halo, self.nz)

    @property
    def origin(self) -> tuple[int, int, int]:
        return (self.halo, self.halo, 0)

    @property
    def domain(self) -> tuple[int, int, int]:
        return (self.nx, self.ny, self.nz)

    @property
    def interior(self) -> tuple[slice, slice, slice]:
        h = self.halo
        return (slice(h, h + self.nx), slice(h, h + self.ny), slice(0, self.nz))

    @property
    def points(self) -> int:
        return self.nx * self.ny * self.nz

    def with_halo(self, halo: int) -> Domain:
        return Domain(self.nx, self.ny, self.nz, halo)


def zeros(domain: Domain, backend: str, dtype: Any = np.float64) -> Any:
    """A zero field of ``domain.shape``, laid out for ``backend`` (gt4py storage)."""
    import gt4py.storage as gt_storage

    return gt_storage.zeros(domain.shape, dtype, backend=backend, aligned_index=domain.origin)


def from_numpy(array: np.ndarray, backend: str, origin: tuple[int, ...] | None = None) -> Any:
    """Copy a numpy array into a gt4py storage laid out for ``backend``."""
    import gt4py.storage as gt_storage

    array = np.asarray(array)
    aligned = origin if origin is not None else (0,) * array.ndim
    return gt_storage.from_array(array, array.dtype, backend=backend, aligned_index=aligned)


def to_numpy(field: Any) -> np.ndarray:
    """A numpy copy of a storage (numpy, gt4py CPU storage, or a cupy array)."""
    if hasattr(field, "get") and not isinstance(field, np.ndarray):  # cupy
        return np.asarray(field.get())
    return np.array(field, copy=True)


def check_field(
    name: str,
    array: Any,
    *,
    shape: tuple[int, ...] | None = None,
    dtype: Any = None,
) -> None:
    """Raise a StencilError naming ``name`` if ``array`` has the wrong shape or dtype."""
    if not hasattr(array, "shape") or not hasattr(array, "dtype"):
        raise StencilError(f"field {name!r} must be an array or storage, got {type(array).__name__}")
    if shape is not None and tuple(array.shape) != tuple(shape):
        raise StencilError(
            f"field {name!r} has shape {tuple(array.shape)} but {tuple(shape)} is required "
            "(interior + 2*halo in i and j)"
        )
    if dtype is not None and np.dtype(array.dtype) != np.dtype(dtype):
        raise StencilError(f"field {name!r} has dtype {array.dtype} but {np.dtype(dtype)} is required")

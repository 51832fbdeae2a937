"""Fields with halos for any backend: allocation, origin/domain helpers, numpy conversion."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
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


def stacked_zeros(domain: Domain, count: int, backend: str, dtype: Any = np.float64) -> list[Any]:
    """``count`` zero fields of ``domain`` that are slices of one allocation, stacked along the
    backend's slowest-varying axis: each slice has the strides of a :func:`zeros` field (so
    compiled stencils see the same layout), and code that moves data between the fields (an
    in-process halo exchange of all ranks) can do it with one copy per buffer."""
    if count < 1:
        raise StencilError(f"stacked_zeros needs a positive count, got {count}")
    axis = int(np.argmax(zeros(Domain(2, 3, 4), backend, dtype).strides))
    shape = list(domain.shape)
    n = shape[axis]
    shape[axis] *= count
    import gt4py.storage as gt_storage

    whole = gt_storage.zeros(tuple(shape), dtype, backend=backend, aligned_index=domain.origin)
    index = [slice(None)] * 3
    out = []
    for c in range(count):
        index[axis] = slice(c * n, (c + 1) * n)
        out.append(whole[tuple(index)])
    return out


class StackedStorages:
    """Named fields for ``count`` owners (e.g. the ranks of one process), each name allocated
    once for all owners by :func:`stacked_zeros`; ``allocator(i)`` is owner ``i``'s
    ``(name, domain) -> field``.  A name asked for with another domain gets its own field."""

    def __init__(self, backend: str, count: int) -> None:
        self.backend, self.count = backend, count
        self._fields: dict[str, tuple[Domain, list[Any]]] = {}

    def allocator(self, index: int) -> Any:
        if not 0 <= index < self.count:
            raise StencilError(f"StackedStorages: owner {index} of {self.count} does not exist")

        def allocate(name: str, domain: Domain) -> Any:
            known = self._fields.get(name)
            if known is None:
                known = self._fields[name] = (
                    domain,
                    stacked_zeros(domain, self.count, self.backend),
                )
            if known[0] != domain:
                return zeros(domain, self.backend)
            return known[1][index]

        return allocate


def _root(array: np.ndarray) -> int:
    """Identity of the outermost NumPy array whose memory ``array`` views (through
    ``as_strided`` helpers too)."""
    root, obj = array, array.base
    while obj is not None:
        if isinstance(obj, np.ndarray):
            root = obj
        obj = getattr(obj, "base", None)
    return id(root)


def _address(array: np.ndarray) -> int:
    return int(array.__array_interface__["data"][0])


def flat_locations(
    fields: Sequence[tuple[str, np.ndarray]],
) -> tuple[list[np.ndarray], list[tuple[int, np.ndarray]]]:
    """Flat views of the buffers behind ``fields`` (``(name, array)``; one view per root
    allocation, spanning its fields) and, per field, (buffer number, flat index of every point
    in that buffer): code that moves values between many fields of few allocations (see
    :class:`StackedStorages`) can then do it with one fancy-index copy per buffer pair."""
    groups: dict[int, list[int]] = defaultdict(list)
    for n, (name, a) in enumerate(fields):
        if any(s < 0 for s in a.strides) or any(s % a.itemsize for s in a.strides):
            raise StencilError(f"{name}: strides {a.strides} are not supported")
        groups[_root(a)].append(n)
    buffers: list[np.ndarray] = []
    located: list[tuple[int, np.ndarray]] = [(0, np.empty(0, dtype=np.int64))] * len(fields)
    for members in groups.values():
        arrays = [fields[n][1] for n in members]
        lows = [_address(a) for a in arrays]
        low = min(lows)
        high = max(lo + sum((m - 1) * s for m, s in zip(a.shape, a.strides)) + a.itemsize
                   for lo, a in zip(lows, arrays))  # fmt: skip
        itemsize = arrays[0].itemsize
        if any((lo - low) % itemsize for lo in lows):
            raise StencilError(f"{fields[members[0]][0]}: fields of one buffer are not aligned "
                               f"to their element size")  # fmt: skip
        first = arrays[lows.index(low)]
        buffers.append(np.lib.stride_tricks.as_strided(
            first, shape=((high - low) // itemsize,), strides=(itemsize,)))  # fmt: skip
        for n, a, lo in zip(members, arrays, lows):
            index = (lo - low) // itemsize + sum(
                np.arange(m).reshape([-1 if ax == d else 1 for ax in range(a.ndim)])
                * (s // itemsize)
                for d, (m, s) in enumerate(zip(a.shape, a.strides))
            )
            located[n] = (len(buffers) - 1, np.broadcast_to(index, a.shape))
    return buffers, located


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
        raise StencilError(
            f"field {name!r} must be an array or storage, got {type(array).__name__}"
        )
    if shape is not None and tuple(array.shape) != tuple(shape):
        raise StencilError(
            f"field {name!r} has shape {tuple(array.shape)} but {tuple(shape)} is required "
            "(interior + 2*halo in i and j)"
        )
    if dtype is not None and np.dtype(array.dtype) != np.dtype(dtype):
        raise StencilError(
            f"field {name!r} has dtype {array.dtype} but {np.dtype(dtype)} is required"
        )

"""Fortran-indexed views of NumPy arrays: ``a[R(is, ie), j]`` is FV3's ``a(is:ie, j)``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class R:
    """The inclusive Fortran index range ``lo:hi``; ``R(lo, hi) + k`` shifts it by ``k``."""

    lo: int
    hi: int

    def __add__(self, k: int) -> R:
        return R(self.lo + k, self.hi + k)

    def __sub__(self, k: int) -> R:
        return R(self.lo - k, self.hi - k)

    @property
    def size(self) -> int:
        return max(0, self.hi - self.lo + 1)


Index = int | R


class FArray:
    """A 2-D NumPy array indexed with Fortran bounds ``(ilo, jlo)`` (FV3: ``isd``, ``jsd``).

    Indices are ints or :class:`R` ranges; an empty range (``hi < lo``) selects nothing."""

    def __init__(self, data: np.ndarray, lo: tuple[int, int]) -> None:
        self.data = data
        self.lo = lo

    @classmethod
    def full(cls, lo: tuple[int, int], hi: tuple[int, int], value: float = 0.0) -> FArray:
        """A new array with Fortran bounds ``lo(0):hi(0), lo(1):hi(1)``."""
        shape = (hi[0] - lo[0] + 1, hi[1] - lo[1] + 1)
        return cls(np.full(shape, value, dtype=np.float64), lo)

    @property
    def hi(self) -> tuple[int, int]:
        return (self.lo[0] + self.data.shape[0] - 1, self.lo[1] + self.data.shape[1] - 1)

    def _key(self, key: tuple[Index, Index]) -> tuple[Any, Any]:
        out = []
        for k, lo, n in zip(key, self.lo, self.data.shape):
            if isinstance(k, R):
                a, b = k.lo - lo, k.hi - lo + 1
                if k.size and (a < 0 or b > n):
                    raise IndexError(f"Fortran range {k.lo}:{k.hi} outside bounds {lo}:{lo + n - 1}")
                out.append(slice(a, max(a, b)))
            else:
                i = int(k) - lo
                if not 0 <= i < n:
                    raise IndexError(f"Fortran index {k} outside bounds {lo}:{lo + n - 1}")
                out.append(i)
        return tuple(out)

    def __getitem__(self, key: tuple[Index, Index]) -> Any:
        return self.data[self._key(key)]

    def __setitem__(self, key: tuple[Index, Index], value: Any) -> None:
        self.data[self._key(key)] = value

    def copy(self) -> FArray:
        return FArray(self.data.copy(), self.lo)


class FVector:
    """A 1-D NumPy array indexed with a Fortran lower bound (FV3's ``edge_w(jsd:jed+1)`` ...)."""

    def __init__(self, data: np.ndarray, lo: int) -> None:
        self.data = data
        self.lo = lo

    def __getitem__(self, k: Index) -> Any:
        if isinstance(k, R):
            return self.data[k.lo - self.lo : k.hi - self.lo + 1]
        return self.data[int(k) - self.lo]

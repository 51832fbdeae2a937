"""C/OpenMP peers: ``csrc/peers/stencils.c`` compiled once per run into a temporary shared
library (``gcc -O3 -march=native -fopenmp -fno-trapping-math``) and called through ctypes.

``-fno-trapping-math`` lets gcc turn the selects of hdiff's limiter and upwind's upwind side into
SIMD blends (with trapping math it keeps a branch per point); it changes no result.
"""

from __future__ import annotations

import ctypes
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from benchmarks.common import CSRC, BenchmarkError, compile_c

SOURCE = CSRC / "peers" / "stencils.c"
EXTRA_FLAGS = ("-fno-trapping-math",)
#: fields (inputs then outputs) of each C function; all take (ni, nj, nz, h) after them
_FIELDS = {
    "laplacian_2d": 2, "laplacian_3d": 2, "jacobi_2d": 2, "jacobi_3d": 2,
    "hdiff": 3, "upwind": 4, "vadv": 3,
}  # fmt: skip
#: scalar parameters after (ni, nj, nz, h)
_PARAMS = {"vadv": 1}


class CLibrary:
    """The compiled peers; ``kernels[name](*fields, halo, *params)`` runs one."""

    def __init__(self) -> None:
        self._dir = Path(tempfile.mkdtemp(prefix="stratoflow-peers-"))
        try:
            path = compile_c(SOURCE, self._dir / "libpeers.so", shared=True, extra_flags=EXTRA_FLAGS)
            self._lib = ctypes.CDLL(str(path))
        except BaseException:
            shutil.rmtree(self._dir, ignore_errors=True)
            raise
        self.kernels: dict[str, Callable[..., None]] = {
            name: self._wrap(name, n, _PARAMS.get(name, 0)) for name, n in _FIELDS.items()
        }

    def _wrap(self, name: str, nfields: int, nparams: int) -> Callable[..., None]:
        fn = getattr(self._lib, name)
        fn.restype = None
        fn.argtypes = ([ctypes.c_void_p] * nfields + [ctypes.c_int] * 4
                       + [ctypes.c_double] * nparams)  # fmt: skip

        def kernel(*args: object) -> None:
            fields, halo, params = args[:nfields], args[nfields], args[nfields + 1 :]
            for f in fields:
                _check(name, f)
            ni, nj, nz = fields[0].shape  # type: ignore[attr-defined]
            fn(*(f.ctypes.data for f in fields), ni, nj, nz, halo, *params)  # type: ignore[attr-defined]

        kernel.__name__ = name
        return kernel

    def close(self) -> None:
        shutil.rmtree(self._dir, ignore_errors=True)


def _check(stencil: str, array: object) -> None:
    if not (isinstance(array, np.ndarray) and array.dtype == np.float64
            and array.flags.c_contiguous):  # fmt: skip
        raise BenchmarkError(f"{stencil}: the C peer needs C-contiguous float64 numpy arrays")

"""Hand-written peers of the library stencils: NumPy slicing, Numba and C/OpenMP.

Every peer of a stencil is a *kernel* ``kernel(*fields, halo, *params)`` on the arrays that
``LIBRARY[name].allocate`` gives (C order, k contiguous: the GT4Py numpy backend's layout);
``fields`` are the stencil's inputs then its outputs, ``params`` its scalar parameters in
``LibraryStencil.params`` order.  A kernel writes the outputs on the interior columns and the
stencil's vertical interval, as the GTScript definition does.

:class:`PeerKernels` owns the compiled kernels of one run (a C shared library in a temporary
folder, Numba's JIT functions); :func:`check_outputs` compares a candidate with the reference.
Importing this package imports neither Numba nor a compiler.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from benchmarks.common import BenchmarkError

log = logging.getLogger(__name__)

#: the library stencils every peer kind implements
PEER_STENCILS: tuple[str, ...] = ("laplacian_2d", "laplacian_3d", "hdiff", "vadv", "jacobi_2d", "jacobi_3d", "upwind")
#: peer kinds, in the order they are reported
PEER_KINDS: tuple[str, ...] = ("numpy", "numba", "c")
#: largest |peer - reference| accepted before a peer is timed
TOLERANCE = 1e-10

Kernel = Callable[..., None]


class PeerKernels:
    """The kernels of ``kinds`` for every library stencil, built once (C compiled, Numba
    compiled on first call); ``close()`` removes the C library's temporary folder."""

    def __init__(self, kinds: Sequence[str] = PEER_KINDS) -> None:
        unknown = [k for k in kinds if k not in PEER_KINDS]
        if unknown:
            raise BenchmarkError(f"unknown peer kinds {unknown}; choose from {list(PEER_KINDS)}")
        self.kinds = tuple(kinds)
        self._kernels: dict[str, Mapping[str, Kernel]] = {}
        self._c_lib: Any = None
        for kind in self.kinds:
            if kind == "numpy":
                from benchmarks.peers.numpy_peers import KERNELS
            elif kind == "numba":
                from benchmarks.peers.numba_peers import build_kernels

                KERNELS = build_kernels()
            else:
                from benchmarks.peers.c_peers import CLibrary

                self._c_lib = CLibrary()
                KERNELS = self._c_lib.kernels
            self._kernels[kind] = KERNELS

    def kernel(self, kind: str, stencil: str) -> Kernel:
        try:
            return self._kernels[kind][stencil]
        except KeyError:
            raise BenchmarkError(f"no {kind} peer for stencil {stencil!r}") from None

    def bind(
        self, kind: str, stencil: Any, arrays: Mapping[str, np.ndarray], halo: int
    ) -> Callable[[], None]:
        """A call of the ``kind`` peer of library stencil ``stencil`` (a ``LibraryStencil``) on
        ``arrays`` with ``halo`` cells around the interior in i and j."""
        kernel = self.kernel(kind, stencil.name)
        fields = [arrays[n] for n in (*stencil.inputs, *stencil.outputs)]
        params = [float(stencil.params[p]) for p in stencil.params]

        def call() -> None:
            kernel(*fields, halo, *params)

        return call

    def close(self) -> None:
        if self._c_lib is not None:
            self._c_lib.close()
            self._c_lib = None

    def __enter__(self) -> PeerKernels:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def check_outputs(
    stencil: str,
    candidate: str,
    got: Mapping[str, np.ndarray],
    reference: Mapping[str, np.ndarray],
    tol: float = TOLERANCE,
) -> float:
    """Largest |got - reference| over the outputs; BenchmarkError naming the stencil and the
    candidate if it exceeds ``tol`` (or is not finite)."""
    worst = 0.0
    for name, ref in reference.items():
        diff = float(np.max(np.abs(got[name] - ref))) if ref.size else 0.0
        if not np.isfinite(diff) or diff > tol:
            raise BenchmarkError(
                f"{stencil}: {candidate} differs from the numpy backend in {name!r} by {diff:.3g} "
                f"(tolerance {tol:g}); fix the {candidate} implementation before timing it"
            )
        worst = max(worst, diff)
    return worst

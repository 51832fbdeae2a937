"""Numba peers: explicit loops, ``@njit(parallel=True)`` with ``prange`` over i, k innermost
(contiguous), ``fastmath`` off so results match GT4Py to rounding.

Numba is imported by :func:`build_kernels` only (not at import time of this module).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.common import BenchmarkError
from benchmarks.peers import PEER_STENCILS


def build_kernels() -> dict[str, Callable[..., None]]:
    """The JIT-compiled kernels (``kernel(*inputs, *outputs, halo, *params)``); each compiles
    on its first call."""
    try:
        from numba import njit, prange
    except ImportError as exc:
        raise BenchmarkError(
            f"the numba peers need numba ({exc}); install it with pip install -e '.[bench]'"
        ) from exc
    jit = njit(parallel=True, fastmath=False, cache=False)

    @njit(inline="always")
    def neighbours_ij(f, i, j, k):
        return f[i + 1, j, k] + f[i - 1, j, k] + f[i, j + 1, k] + f[i, j - 1, k]

    def column_kernel(point, k_lo, k_top):
        """``out[i, j, k] = point(f, i, j, k)`` on the interior and levels [k_lo, nz - k_top)."""

        @jit
        def kernel(f, out, h):
            ni, nj, nz = f.shape
            for i in prange(h, ni - h):
                for j in range(h, nj - h):
                    for k in range(k_lo, nz - k_top):
                        out[i, j, k] = point(f, i, j, k)

        return kernel

    laplacian_2d = column_kernel(njit(inline="always")(
        lambda f, i, j, k: neighbours_ij(f, i, j, k) - 4.0 * f[i, j, k]), 0, 0)
    laplacian_3d = column_kernel(njit(inline="always")(
        lambda f, i, j, k: neighbours_ij(f, i, j, k) - 4.0 * f[i, j, k]
        + f[i, j, k + 1] + f[i, j, k - 1] - 2.0 * f[i, j, k]), 1, 1)
    jacobi_2d = column_kernel(njit(inline="always")(lambda f, i, j, k: 0.25 * neighbours_ij(f, i, j, k)), 0, 0)
    jacobi_3d = column_kernel(njit(inline="always")(
        lambda f, i, j, k: (neighbours_ij(f, i, j, k) + f[i, j, k + 1] + f[i, j, k - 1]) / 6.0), 1, 1)

    @jit
    def upwind(phi, cx, cy, out, h):
        ni, nj, nz = phi.shape
        for i in prange(h, ni - h):
            for j in range(h, nj - h):
                for k in range(nz):
                    p, u, v = phi[i, j, k], cx[i, j, k], cy[i, j, k]
                    dx = u * (p - phi[i - 1, j, k]) if u > 0.0 else u * (phi[i + 1, j, k] - p)
                    dy = v * (p - phi[i, j - 1, k]) if v > 0.0 else v * (phi[i, j + 1, k] - p)
                    out[i, j, k] = p - dx - dy

    @jit
    def hdiff(f, coeff, out, h):
        """Per i-row, walking j: the Laplacian of (i, j) and the y-flux of (i, j - 1) carry over
        from the previous column as k-vectors."""
        ni, nj, nz = f.shape
        for i in prange(h, ni - h):
            lap_c = np.empty(nz)
            fly_s = np.empty(nz)
            for k in range(nz):
                lap_s = 4.0 * f[i, h - 1, k] - (f[i + 1, h - 1, k] + f[i - 1, h - 1, k]
                                                + f[i, h, k] + f[i, h - 2, k])  # fmt: skip
                lap_c[k] = 4.0 * f[i, h, k] - (f[i + 1, h, k] + f[i - 1, h, k]
                                               + f[i, h + 1, k] + f[i, h - 1, k])  # fmt: skip
                flux = lap_c[k] - lap_s
                fly_s[k] = 0.0 if flux * (f[i, h, k] - f[i, h - 1, k]) > 0.0 else flux
            for j in range(h, nj - h):
                for k in range(nz):
                    lap_n = 4.0 * f[i, j + 1, k] - (f[i + 1, j + 1, k] + f[i - 1, j + 1, k]
                                                    + f[i, j + 2, k] + f[i, j, k])  # fmt: skip
                    lap_e = 4.0 * f[i + 1, j, k] - (f[i + 2, j, k] + f[i, j, k]
                                                    + f[i + 1, j + 1, k] + f[i + 1, j - 1, k])  # fmt: skip
                    lap_w = 4.0 * f[i - 1, j, k] - (f[i, j, k] + f[i - 2, j, k]
                                                    + f[i - 1, j + 1, k] + f[i - 1, j - 1, k])  # fmt: skip
                    lc, fc = lap_c[k], f[i, j, k]
                    flx = lap_e - lc
                    flx = 0.0 if flx * (f[i + 1, j, k] - fc) > 0.0 else flx
                    flx_w = lc - lap_w
                    flx_w = 0.0 if flx_w * (fc - f[i - 1, j, k]) > 0.0 else flx_w
                    fly = lap_n - lc
                    fly = 0.0 if fly * (f[i, j + 1, k] - fc) > 0.0 else fly
                    out[i, j, k] = fc - coeff[i, j, k] * (flx - flx_w + fly - fly_s[k])
                    fly_s[k] = fly
                    lap_c[k] = lap_n

    @jit
    def vadv(phi, w, out, h, dt_dz):
        """Thomas algorithm per column (contiguous in k)."""
        ni, nj, nz = phi.shape
        for i in prange(h, ni - h):
            cp = np.empty(nz)
            dp = np.empty(nz)
            for j in range(h, nj - h):
                cp[0] = 0.5 * w[i, j, 0] * dt_dz
                dp[0] = phi[i, j, 0]
                for k in range(1, nz):
                    a = -0.5 * w[i, j, k] * dt_dz
                    denom = 1.0 - a * cp[k - 1]
                    cp[k] = 0.5 * w[i, j, k] * dt_dz / denom
                    dp[k] = (phi[i, j, k] - a * dp[k - 1]) / denom
                out[i, j, nz - 1] = dp[nz - 1]
                for k in range(nz - 2, -1, -1):
                    out[i, j, k] = dp[k] - cp[k] * out[i, j, k + 1]

    kernels = locals()
    launch_threads_keeping_openmp_nesting(njit, prange)
    return {name: kernels[name] for name in PEER_STENCILS}


def launch_threads_keeping_openmp_nesting(njit: Callable[..., Any], prange: Callable[..., Any]) -> None:
    """Start Numba's thread pool now and give OpenMP back its nesting limit.

    Numba's ``omp`` threading layer, when it starts, sets the process's OpenMP
    ``max-active-levels`` to 255 (nested parallelism on) in the libgomp it shares with the
    compiled GT4Py backends. A backend whose generated code has nested ``omp parallel``
    regions (``dace:cpu_kfirst``: one inside every k iteration) then starts a new thread team
    per inner region and, on this 2-core machine, runs 600x slower (7 ms -> 4.4 s per call of
    laplacian_2d at 128x128x80). The limit it had before is restored after Numba's start.
    """
    gomp = _libgomp()
    before = gomp.omp_get_max_active_levels() if gomp is not None else None

    @njit(parallel=True)
    def touch(a):
        for i in prange(a.size):
            a[i] = 0.0

    touch(np.ones(4))
    if gomp is not None and before is not None and gomp.omp_get_max_active_levels() != before:
        gomp.omp_set_max_active_levels(before)


def _libgomp() -> Any:
    """GNU OpenMP of this process (the one GT4Py's and DaCe's builds and Numba's ``omp`` layer
    load), or None where it cannot be loaded."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("gomp") or "libgomp.so.1"
    try:
        return ctypes.CDLL(name)
    except OSError:
        return None

"""Roofline bounds of the library stencils: compulsory bytes and flops per point, the machine's
measured peak FMA rate, and the time below which no implementation can run.

A stencil moves ``LibraryStencil.bytes_moved`` bytes (each field once) and does
``FLOPS_PER_POINT`` floating-point operations per computed point; with STREAM bandwidth ``B``
and peak rate ``P`` its attainable rate is ``min(P, B * flops / bytes)``, i.e. its time bound is
``max(bytes / B, flops / P)``.  ``achieved_over_bound`` = bound time / measured time.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from benchmarks.common import CSRC, BenchmarkError, run_c_program

log = logging.getLogger(__name__)

#: Floating-point operations (add, sub, mul, div; FMA = 2) per computed point, counted from the
#: GTScript definitions with every intermediate computed once per point; comparisons and
#: selects are not counted.
FLOPS_PER_POINT: dict[str, int] = {
    # f[i+1] + f[i-1] + f[j+1] + f[j-1]: 3 adds; - 4 f: 1 mul + 1 sub
    "laplacian_2d": 5,
    # lap_ij: 5; + f[k+1] + f[k-1]: 2 adds; - 2 f: 1 mul + 1 sub
    "laplacian_3d": 9,
    # lap = 4 f - (4-neighbour sum): 1 mul + 3 adds + 1 sub = 5;
    # flx, fly: lap difference + field difference + their product = 3 each;
    # out = f - coeff * (flx - flx[i-1] + fly - fly[j-1]): 3 add/sub + 1 mul + 1 sub = 5
    "hdiff": 16,
    # with c = w * (dt_dz / 2) (1 mul): forward denom = 1 + c * cp[k-1] (2), cp = c / denom (1 div),
    # dp = (phi + c * dp[k-1]) / denom (2 + 1 div); backward dp - cp * phi_new[k+1] (2)
    "vadv": 9,
    # 4-neighbour sum: 3 adds; * 0.25: 1 mul
    "jacobi_2d": 4,
    # 6-neighbour sum: 5 adds; / 6: 1 div
    "jacobi_3d": 6,
    # per axis the taken branch: one difference + one mul (2 x 2); phi - dx - dy: 2
    "upwind": 6,
}


@dataclass(frozen=True)
class PeakResult:
    gflops: float
    threads: int


def fma_peak(iterations: int = 20_000_000, repeats: int = 5, threads: int | None = None) -> PeakResult:
    """Compile and run ``csrc/fma_peak.c`` (independent SIMD FMA chains on every thread, all
    cores); best GFLOP/s of ``repeats``."""
    out = run_c_program(CSRC / "fma_peak.c", [str(iterations), str(repeats)], threads)
    result = PeakResult(gflops=float(out[0]), threads=int(out[1]))
    log.info("peak FMA rate: %.1f GFLOP/s on %d threads", result.gflops, result.threads)
    return result


@dataclass(frozen=True)
class Bound:
    """The roofline of one stencil on one domain."""

    bytes: int
    flops: int
    #: seconds below which no implementation can run
    time_s: float
    #: "memory" or "compute": which roof gives ``time_s``
    limit: str

    @property
    def intensity(self) -> float:
        """Flops per compulsory byte."""
        return self.flops / self.bytes


def computed_points(stencil: Any, domain: Any) -> int:
    """Points the stencil computes: interior columns x its vertical interval."""
    levels = len(range(domain.nz)[stencil.levels])
    return domain.nx * domain.ny * levels


def bound(stencil: Any, domain: Any, stream_gbs: float, peak_gflops: float) -> Bound:
    """Roofline time bound of library stencil ``stencil`` on ``domain``."""
    if stencil.name not in FLOPS_PER_POINT:
        raise BenchmarkError(f"no flop count for stencil {stencil.name!r} in FLOPS_PER_POINT")
    nbytes = stencil.bytes_moved(domain)
    flops = FLOPS_PER_POINT[stencil.name] * computed_points(stencil, domain)
    t_mem, t_flop = nbytes / (stream_gbs * 1e9), flops / (peak_gflops * 1e9)
    return Bound(nbytes, flops, max(t_mem, t_flop), "memory" if t_mem >= t_flop else "compute")

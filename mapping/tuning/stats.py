"""Statistics for timings on a noisy shared machine: bootstrap intervals and paired tests.

Timings are compared by their medians. :func:`median_interval` is the percentile bootstrap
interval of one median; :func:`ratio_interval` that of median(a) / median(b) with both samples
resampled independently (two schedules measured in the same interleaved rounds);
:func:`verdict` calls ``a`` "faster" or "slower" than ``b`` only when that interval excludes 1,
and "same" otherwise. :func:`paired_test` compares two methods over many stencils (Wilcoxon's
signed-rank test on the per-stencil log ratios).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mapping.tuning.errors import TuningError

#: Bootstrap resamples (the percentile interval's Monte-Carlo error is ~0.5% of its width).
RESAMPLES = 4000
LEVEL = 0.95


def _array(samples: Sequence[float], what: str) -> np.ndarray:
    x = np.asarray(samples, dtype=np.float64)
    if x.ndim != 1 or x.size == 0 or not np.isfinite(x).all():
        raise TuningError(f"{what}: need a non-empty 1-D sample of finite numbers, got {x.size} values")
    return x


def _bootstrap_medians(x: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    idx = rng.integers(0, x.size, size=(resamples, x.size))
    return np.median(x[idx], axis=1)


@dataclass(frozen=True)
class Interval:
    """A point estimate with its two-sided bootstrap interval."""

    estimate: float
    low: float
    high: float
    level: float = LEVEL

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high

    def to_dict(self) -> dict[str, float]:
        return {"estimate": self.estimate, "low": self.low, "high": self.high, "level": self.level}


def median_interval(
    samples: Sequence[float], level: float = LEVEL, resamples: int = RESAMPLES, seed: int = 0
) -> Interval:
    """The median of ``samples`` and its percentile bootstrap interval."""
    x = _array(samples, "median_interval")
    meds = _bootstrap_medians(x, resamples, np.random.default_rng(seed))
    lo, hi = np.quantile(meds, [(1 - level) / 2, (1 + level) / 2])
    return Interval(float(np.median(x)), float(lo), float(hi), level)


def ratio_interval(
    a: Sequence[float], b: Sequence[float], level: float = LEVEL, resamples: int = RESAMPLES,
    seed: int = 0,
) -> Interval:  # fmt: skip
    """median(a) / median(b) and its percentile bootstrap interval (independent resampling)."""
    xa, xb = _array(a, "ratio_interval (a)"), _array(b, "ratio_interval (b)")
    if (xb <= 0).any() or (xa <= 0).any():
        raise TuningError("ratio_interval: timings must be positive")
    rng = np.random.default_rng(seed)
    ratios = _bootstrap_medians(xa, resamples, rng) / _bootstrap_medians(xb, resamples, rng)
    lo, hi = np.quantile(ratios, [(1 - level) / 2, (1 + level) / 2])
    return Interval(float(np.median(xa) / np.median(xb)), float(lo), float(hi), level)


#: Outcomes of :func:`verdict`.
VERDICTS = ("faster", "same", "slower")


def verdict(ratio: Interval) -> str:
    """"faster" (the whole interval of a/b below 1), "slower" (above 1) or "same"."""
    if ratio.high < 1.0:
        return "faster"
    if ratio.low > 1.0:
        return "slower"
    return "same"


@dataclass(frozen=True)
class PairedTest:
    """Method A against method B over the same stencils (ratios to the same best)."""

    n: int
    wins: int  # stencils where A's ratio is lower
    losses: int
    ties: int
    median_log_ratio: float  # median of log(A / B) over stencils
    p_value: float  # two-sided Wilcoxon signed-rank (1.0 if every pair ties)

    def to_dict(self) -> dict[str, float]:
        return dict(vars(self))


def paired_test(a: Sequence[float], b: Sequence[float]) -> PairedTest:
    """Wilcoxon's signed-rank test of log(a) - log(b) (per-stencil ratios of methods A and B)."""
    from scipy.stats import wilcoxon

    xa, xb = _array(a, "paired_test (a)"), _array(b, "paired_test (b)")
    if xa.size != xb.size:
        raise TuningError(f"paired_test: {xa.size} against {xb.size} values; pairs needed")
    d = np.log(xa) - np.log(xb)
    nonzero = d[d != 0.0]
    p = float(wilcoxon(nonzero).pvalue) if nonzero.size else 1.0
    return PairedTest(int(d.size), int((d < 0).sum()), int((d > 0).sum()), int((d == 0).sum()),
                      float(np.median(d)), p)  # fmt: skip

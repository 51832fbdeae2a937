"""Bootstrap intervals and paired tests of mapping.tuning.stats against SciPy's implementations
(scipy.stats.bootstrap, percentile method; scipy.stats.wilcoxon) and against the asymptotic
normal interval of a median."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from mapping.tuning.errors import TuningError
from mapping.tuning.stats import (
    Interval,
    median_interval,
    paired_test,
    ratio_interval,
    verdict,
)


def test_median_interval_equals_scipy_percentile_bootstrap() -> None:
    """Lognormal timings (n = 21): the interval equals SciPy's percentile bootstrap of the median
    to within the Monte-Carlo error of 4000 resamples (measured 1-3% of the width; tolerance 10%)."""
    x = np.random.default_rng(1).lognormal(mean=-6.0, sigma=0.2, size=21)
    ours = median_interval(x, seed=3)
    ref = sps.bootstrap((x,), np.median, n_resamples=20000, method="percentile",
                        confidence_level=0.95, random_state=4).confidence_interval  # fmt: skip
    width = ref.high - ref.low
    assert ours.estimate == np.median(x)
    assert abs(ours.low - ref.low) < 0.1 * width and abs(ours.high - ref.high) < 0.1 * width


def test_median_interval_width_is_the_asymptotic_one() -> None:
    """Normal samples (n = 400, sigma 1): the 95% interval of the median has half-width
    1.96 * sqrt(pi/2) * sigma / sqrt(n) = 0.1228 asymptotically. One sample's bootstrap
    half-width scatters by ~12% (the median's bootstrap distribution is discrete), so the mean
    over 20 independent samples is compared (measured 0.1225; tolerance 5%); the intervals
    contain the true median 10 in at least 17 of the 20 (95% coverage: 19 expected)."""
    halves, covered = [], 0
    for s in range(20):
        iv = median_interval(np.random.default_rng(100 + s).normal(10.0, 1.0, size=400), seed=s)
        halves.append((iv.high - iv.low) / 2)
        covered += iv.contains(10.0)
    assert np.mean(halves) == pytest.approx(1.96 * np.sqrt(np.pi / 2) / 20.0, rel=0.05)
    assert covered >= 17


def test_ratio_interval_and_verdicts() -> None:
    """Two schedules 10% apart with 3% noise (n = 21 each): the ratio's interval excludes 1
    ("faster" / "slower" by symmetry); two draws of the same distribution are "same"; the
    interval contains the true ratio 1/1.1."""
    rng = np.random.default_rng(5)
    fast = 1.0 + 0.03 * rng.standard_normal(21)
    slow = 1.1 * (1.0 + 0.03 * rng.standard_normal(21))
    r = ratio_interval(fast, slow)
    assert r.contains(1 / 1.1) and verdict(r) == "faster"
    assert verdict(ratio_interval(slow, fast)) == "slower"
    same = 1.0 + 0.03 * rng.standard_normal(21)
    assert verdict(ratio_interval(fast, same)) == "same"
    assert verdict(Interval(1.0, 0.99, 1.01)) == "same"


def test_bad_samples_are_errors() -> None:
    with pytest.raises(TuningError, match="non-empty"):
        median_interval([])
    with pytest.raises(TuningError, match="finite"):
        median_interval([1.0, float("nan")])
    with pytest.raises(TuningError, match="positive"):
        ratio_interval([1.0], [0.0])
    with pytest.raises(TuningError, match="pairs"):
        paired_test([1.0, 2.0], [1.0])


def test_paired_test_equals_scipy_wilcoxon() -> None:
    """Per-stencil ratios of two methods: the p-value is SciPy's two-sided signed-rank test of
    the log differences; wins/losses/ties counted; identical methods give p = 1."""
    rng = np.random.default_rng(7)
    a = np.exp(0.05 * rng.standard_normal(40))
    b = a * np.exp(0.2 + 0.05 * rng.standard_normal(40))  # B about 22% slower
    t = paired_test(a, b)
    assert t.p_value == pytest.approx(sps.wilcoxon(np.log(a) - np.log(b)).pvalue, rel=1e-12)
    assert t.p_value < 1e-6 and t.wins == 40 and t.losses == 0 and t.n == 40
    assert t.median_log_ratio == pytest.approx(np.median(np.log(a / b)), rel=1e-12)
    same = paired_test(a, a)
    assert same.p_value == 1.0 and same.ties == 40

"""Bootstrap intervals and paired tests of mean scores (ens10.metrics.uncertainty) against
analytic results: the coverage of the true mean for independent normal scores, the standard
error of the mean of an AR(1) series (persistent weather), and the CRPS estimators of
ens10.metrics.crps against the independent implementations of ``scoringrules``."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scoringrules as sr

from ens10.metrics.crps import crps_ensemble, crps_gaussian
from ens10.metrics.uncertainty import BlockBootstrap, default_block


def test_block_length_rule_and_bad_arguments() -> None:
    assert [default_block(n) for n in (1, 8, 9, 27, 28, 1000)] == [1, 2, 3, 3, 4, 10]
    with pytest.raises(ValueError, match="at least 2"):
        BlockBootstrap(1)
    with pytest.raises(ValueError, match="outside 1..10"):
        BlockBootstrap(10, block=11)
    with pytest.raises(ValueError, match="expected 10 scores"):
        BlockBootstrap(10).interval(np.zeros(9))


def test_95_percent_intervals_cover_the_true_mean_of_independent_scores() -> None:
    """400 samples of 100 N(3, 1) scores: the 95% interval holds 3 in 91-98% of them (the
    binomial 99% range of 400 draws at 95% is about 92-98%, the percentile interval
    undercovers slightly at n = 100)."""
    rng = np.random.default_rng(1)
    boot = BlockBootstrap(100, resamples=1000, seed=2)
    hits = 0
    for _ in range(400):
        iv = boot.interval(rng.normal(3.0, 1.0, 100))
        hits += iv.low <= 3.0 <= iv.high
    assert 0.91 <= hits / 400 <= 0.98


def test_blocks_capture_the_standard_error_of_a_persistent_series() -> None:
    """AR(1) scores with phi = 0.8 (n = 400): the mean width of the block-bootstrap interval
    (block 20) is within 25% of the analytic 2 x 1.96 x se, se^2 = (1 + phi) / (1 - phi) /
    (1 - phi^2) / n; resampling single initialisations (block 1) gives less than 60% of it."""
    phi, n = 0.8, 400
    se = math.sqrt((1 + phi) / (1 - phi) / (1 - phi**2) / n)
    rng = np.random.default_rng(3)
    widths = {1: [], 20: []}
    for _ in range(60):
        x = np.empty(n)
        x[0] = rng.normal(0.0, 1.0 / math.sqrt(1 - phi**2))
        for t in range(1, n):
            x[t] = phi * x[t - 1] + rng.normal()
        for block in widths:
            iv = BlockBootstrap(n, block=block, resamples=1000, seed=4).interval(x)
            widths[block].append(iv.high - iv.low)
    analytic = 2 * 1.96 * se
    assert abs(np.mean(widths[20]) / analytic - 1) < 0.25
    assert np.mean(widths[1]) < 0.6 * analytic


def test_paired_test_finds_a_real_difference_and_not_a_spurious_one() -> None:
    """Two forecasts' scores share the day-to-day variation (sd 1) and differ by 0.2 plus
    noise of sd 0.1: the difference is significant (p < 0.01, interval excludes 0, contains
    0.2). With the same noise and no offset: not significant (p > 0.05)."""
    rng = np.random.default_rng(5)
    common = rng.normal(0.0, 1.0, 200)
    a = common + 0.2 + rng.normal(0.0, 0.1, 200)
    b = common + rng.normal(0.0, 0.1, 200)
    boot = BlockBootstrap(200, seed=6)
    res = boot.paired(a, b)
    assert res.significant and res.p_value < 0.01
    assert res.difference.low < 0.2 < res.difference.high
    same = boot.paired(common + rng.normal(0.0, 0.1, 200), common + rng.normal(0.0, 0.1, 200))
    assert not same.significant and same.p_value > 0.05


def test_crps_estimators_equal_scoringrules() -> None:
    """Gaussian closed form = ``sr.crps_normal``; the standard ensemble CRPS = ``sr.crps_ensemble``
    with the energy-form estimator ('nrg'); the fair CRPS = its 'fair' estimator; to 1e-12."""
    rng = np.random.default_rng(7)
    mu, sigma, y = rng.normal(size=500), rng.uniform(0.2, 3.0, 500), rng.normal(size=500)
    np.testing.assert_allclose(crps_gaussian(mu, sigma, y), sr.crps_normal(y, mu, sigma),
                               rtol=1e-12, atol=1e-12)  # fmt: skip
    members = rng.normal(size=(10, 500))
    for fair, estimator in ((False, "nrg"), (True, "fair")):
        ours = crps_ensemble(members, y, axis=0, fair=fair)
        theirs = sr.crps_ensemble(y, members, m_axis=0, estimator=estimator)
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)

"""Threshold-weighted CRPS of Gaussian forecasts (ens10.metrics.threshold) against numerical
quadrature of its definition (scipy.integrate.quad), against ``scoringrules``' ensemble
twCRPS of a large quantile ensemble, and against the closed-form CRPS as the threshold goes
to minus infinity."""

from __future__ import annotations

import numpy as np
import pytest
import scoringrules as sr
from scipy.integrate import quad
from scipy.stats import norm

from ens10.metrics.crps import crps_gaussian
from ens10.metrics.threshold import ThresholdWeightedCRPS

CASES = [(0.0, 1.0, 0.3, 1.0), (2.0, 0.5, 1.0, 2.5), (-1.0, 2.0, -4.0, -1.5), (0.0, 1.0, 3.0, 0.0),
         (5.0, 3.0, 4.0, 12.0)]  # (mu, sigma, y, threshold)  # fmt: skip


def _quadrature(mu: float, sigma: float, y: float, t: float, tail: str) -> float:
    sq = lambda z: (norm.cdf(z, mu, sigma) - float(y <= z)) ** 2  # noqa: E731
    if tail == "upper":
        lo, hi = t, mu + 40 * sigma
    else:
        lo, hi = mu - 40 * sigma, t
    cuts = sorted({lo, hi, min(max(y, lo), hi)})
    return sum(quad(sq, a, b, epsabs=1e-13, epsrel=1e-12, limit=200)[0] for a, b in zip(cuts, cuts[1:]))


@pytest.mark.parametrize("tail", ["upper", "lower"])
@pytest.mark.parametrize("case", CASES)
def test_closed_form_equals_quadrature(case, tail) -> None:
    mu, sigma, y, t = case
    got = ThresholdWeightedCRPS(tail)(mu, sigma, y, t)
    assert got == pytest.approx(_quadrature(mu, sigma, y, t, tail), rel=1e-9, abs=1e-12)


def test_matches_scoringrules_ensemble_of_normal_quantiles() -> None:
    """200000 members at the normal quantiles (i - 1/2) / M: scoringrules' twCRPS with the
    weight 1{z >= t} agrees within 1e-4 (the ensemble's discretisation error)."""
    m = 200_000
    for mu, sigma, y, t in CASES:
        members = norm.ppf((np.arange(m) + 0.5) / m, mu, sigma)
        ref = sr.twcrps_ensemble(np.array(y), members, a=t, estimator="qd", backend="numpy")
        assert ThresholdWeightedCRPS()(mu, sigma, y, t) == pytest.approx(float(ref), abs=1e-4)


def test_tends_to_the_crps_and_broadcasts() -> None:
    rng = np.random.default_rng(0)
    mu, sigma, y = rng.normal(size=(3, 50)), rng.uniform(0.5, 2, 50), rng.normal(size=50)
    np.testing.assert_allclose(ThresholdWeightedCRPS()(mu, sigma, y, -1e3),
                               crps_gaussian(mu, sigma, y), rtol=1e-12)  # fmt: skip
    np.testing.assert_allclose(ThresholdWeightedCRPS("lower")(mu, sigma, y, 1e3),
                               crps_gaussian(mu, sigma, y), rtol=1e-12)  # fmt: skip
    far = ThresholdWeightedCRPS()(mu, sigma, y, 1e3)
    assert far.shape == (3, 50) and np.all(np.abs(far) < 1e-12)
    with pytest.raises(ValueError, match="tail 'both'"):
        ThresholdWeightedCRPS("both")

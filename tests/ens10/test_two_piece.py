"""The two-piece normal (the sample generator's skewed oracle): moments, CDF, quantiles, CRPS
and threshold-weighted CRPS against independent references."""

from __future__ import annotations

import numpy as np
import pytest
import scoringrules as sr
from scipy import integrate

from ens10.metrics import ThresholdWeightedCRPS, crps_gaussian
from ens10.metrics.two_piece import TwoPieceNormal

RNG = np.random.default_rng(7)
N = 200
Y = 3.0 * RNG.standard_normal(N)
LOC = RNG.standard_normal(N)
S1 = RNG.uniform(0.3, 2.0, N)
S2 = RNG.uniform(0.3, 2.0, N)


def _density(x: float, loc: float, s1: float, s2: float) -> float:
    """The two-piece normal density written from its definition (John 1982)."""
    s = s1 if x < loc else s2
    return np.sqrt(2.0 / np.pi) / (s1 + s2) * np.exp(-0.5 * ((x - loc) / s) ** 2)


def _cdf(x: float, loc: float, s1: float, s2: float) -> float:
    left = integrate.quad(_density, -np.inf, min(x, loc), args=(loc, s1, s2))[0]
    return left + (integrate.quad(_density, loc, x, args=(loc, s1, s2))[0] if x > loc else 0.0)


def test_crps_equals_scoringrules():
    """Closed-form CRPS vs scoringrules 0.10.0 ``crps_2pnormal`` (an independent implementation
    of Gneiting & Thorarinsdottir's formula): 1e-12 absolute."""
    got = TwoPieceNormal(LOC, S1, S2).crps(Y)
    np.testing.assert_allclose(got, sr.crps_2pnormal(Y, S1, S2, LOC), rtol=0, atol=1e-12)


def test_equal_scales_are_the_gaussian():
    """scale_left = scale_right: CRPS equals the Gaussian closed form (1e-13), CDF the normal
    CDF, quantiles the normal quantiles."""
    dist = TwoPieceNormal(LOC, S1, S1)
    np.testing.assert_allclose(dist.crps(Y), crps_gaussian(LOC, S1, Y), rtol=0, atol=1e-13)
    np.testing.assert_allclose(dist.mean, LOC, rtol=0, atol=1e-15)
    np.testing.assert_allclose(dist.std, S1, rtol=1e-15)


@pytest.mark.parametrize("k", [0, 1, 2])
def test_crps_and_cdf_against_quadrature(k):
    """CDF and CRPS = integral (F - 1{x >= y})^2 dx by scipy quadrature of the density (1e-9)."""
    loc, s1, s2, y = LOC[k], S1[k], S2[k], Y[k]
    dist = TwoPieceNormal(loc, s1, s2)
    for x in (loc - 1.3 * s1, loc, loc + 0.7 * s2):
        assert float(dist.cdf(x)) == pytest.approx(_cdf(x, loc, s1, s2), abs=1e-10)
    lo, hi = loc - 12 * s1, loc + 12 * s2
    below = integrate.quad(lambda x: _cdf(x, loc, s1, s2) ** 2, lo, y, limit=200)[0] if y > lo else 0.0
    above = integrate.quad(lambda x: (1.0 - _cdf(x, loc, s1, s2)) ** 2, max(y, lo), hi, limit=200)[0]
    assert float(dist.crps(y)) == pytest.approx(below + above, abs=1e-8)


def test_from_moments_and_quantiles():
    """from_moments: mean and std by quadrature of the density equal the requested ones
    (1e-9); ppf inverts cdf (1e-14)."""
    dist = TwoPieceNormal.from_moments(1.0, 2.0, 1.7)
    loc, s1, s2 = float(dist.loc), float(dist.scale_left), float(dist.scale_right)
    args = (loc, s1, s2)
    mean = integrate.quad(lambda x: x * _density(x, *args), -np.inf, loc)[0] + integrate.quad(
        lambda x: x * _density(x, *args), loc, np.inf)[0]
    var = integrate.quad(lambda x: (x - mean) ** 2 * _density(x, *args), -np.inf, loc)[0] + integrate.quad(
        lambda x: (x - mean) ** 2 * _density(x, *args), loc, np.inf)[0]
    assert mean == pytest.approx(1.0, abs=1e-9) and np.sqrt(var) == pytest.approx(2.0, abs=1e-9)
    assert s2 / s1 == pytest.approx(1.7)
    p = RNG.uniform(size=1000)
    np.testing.assert_allclose(dist.cdf(dist.ppf(p)), p, rtol=0, atol=1e-14)


def test_threshold_weighted_crps():
    """Gaussian case against the closed form of ThresholdWeightedCRPS (1e-6 relative: the
    Simpson rule on 401 nodes); a skewed case against scipy quadrature (1e-6 relative); a
    threshold far below the distribution gives the CRPS (1e-6 relative)."""
    t = RNG.standard_normal(N)
    gauss = TwoPieceNormal(LOC, S1, S1).twcrps_upper(Y, t)
    np.testing.assert_allclose(gauss, ThresholdWeightedCRPS("upper")(LOC, S1, Y, t), rtol=1e-6, atol=1e-9)
    loc, s1, s2, y, thr = LOC[3], S1[3], 1.8, Y[3], t[3]

    def integrand(x: float) -> float:
        return (_cdf(x, loc, s1, s2) - (x >= y)) ** 2

    ref = integrate.quad(integrand, thr, loc + 14 * s2, points=[max(y, thr)], limit=200)[0]
    got = float(TwoPieceNormal(loc, s1, s2).twcrps_upper(y, thr))
    assert got == pytest.approx(ref, rel=1e-6)
    dist = TwoPieceNormal(LOC, S1, S2)
    np.testing.assert_allclose(dist.twcrps_upper(Y, LOC - 50.0 * S1), dist.crps(Y), rtol=1e-6)

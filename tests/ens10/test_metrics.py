"""CRPS, EFI and diagnostics against independent formulas, quadrature and Monte Carlo."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy import integrate, stats

from ens10.metrics import (
    ExtremeForecastIndex,
    crps_ensemble,
    crps_gaussian,
    latitude_weights,
    rank_histogram,
    spread_skill_ratio,
)
from ens10.metrics import torch as tmetrics


def _crps_by_quadrature(cdf, y, lo, hi):
    left = integrate.quad(lambda x: cdf(x) ** 2, lo, y, limit=200)[0]
    right = integrate.quad(lambda x: (1.0 - cdf(x)) ** 2, y, hi, limit=200)[0]
    return left + right


@pytest.mark.parametrize("mu,sigma,y", [(0.0, 1.0, 0.3), (5.0, 2.5, -1.0), (280.0, 0.7, 281.9)])
def test_crps_gaussian_matches_quadrature_of_definition(mu, sigma, y):
    """Closed form vs numerical integral of (F(x) - 1{x >= y})^2; tolerance 1e-8 relative."""
    ref = _crps_by_quadrature(stats.norm(mu, sigma).cdf, y, mu - 12 * sigma, mu + 12 * sigma)
    assert crps_gaussian(mu, sigma, y) == pytest.approx(ref, rel=1e-8)


def test_crps_gaussian_matches_monte_carlo():
    """E|X - y| - E|X - X'|/2 with 4e6 draws; tolerance 4 Monte Carlo standard errors (~0.3%)."""
    rng = np.random.default_rng(1)
    x, x2 = rng.normal(1.0, 2.0, (2, 4_000_000))
    y = 2.2
    samples = np.abs(x - y) - 0.5 * np.abs(x - x2)
    se = samples.std() / np.sqrt(samples.size)
    assert abs(crps_gaussian(1.0, 2.0, y) - samples.mean()) < 4 * se


def test_expected_crps_of_calibrated_gaussian_is_analytic():
    """E[CRPS(N(0, s), Y)], Y ~ N(0, s) equals E|X - Y| - E|X - X'|/2 = 2s/sqrt(pi) - s/sqrt(pi)
    = s/sqrt(pi); tolerance 4 Monte Carlo standard errors."""
    rng = np.random.default_rng(2)
    y = rng.normal(0.0, 3.0, 2_000_000)
    c = crps_gaussian(0.0, 3.0, y)
    assert c.mean() == pytest.approx(3.0 / np.sqrt(np.pi), abs=4 * c.std() / np.sqrt(y.size))


def test_crps_ensemble_matches_pairwise_formula_and_step_cdf_integral():
    """Sorted formula vs the O(M^2) pairwise definition and the exact integral of the empirical
    CDF (piecewise constant); tolerance 1e-12."""
    rng = np.random.default_rng(3)
    members = rng.normal(size=(10, 50))
    y = rng.normal(size=50)
    pair = np.abs(members[:, None] - members[None]).sum(axis=(0, 1))
    skill = np.abs(members - y).mean(axis=0)
    np.testing.assert_allclose(crps_ensemble(members, y), skill - pair / 200, atol=1e-12)
    np.testing.assert_allclose(crps_ensemble(members, y, fair=True), skill - pair / 180, atol=1e-12)
    for j in range(5):
        pts = np.sort(np.append(members[:, j], y[j]))
        total = 0.0
        for a, b in zip(pts[:-1], pts[1:]):
            f = (members[:, j] <= a).mean()
            h = 1.0 if a >= y[j] else 0.0
            total += (f - h) ** 2 * (b - a)
        assert crps_ensemble(members[:, j], y[j]) == pytest.approx(total, abs=1e-12)


def test_fair_crps_is_unbiased_for_the_parent_distribution():
    """Mean fair CRPS of 10-member ensembles drawn from N(0,1) equals the Gaussian CRPS
    (Ferro 2014); the standard score is biased high. Tolerance 4 standard errors."""
    rng = np.random.default_rng(4)
    n = 200_000
    members = rng.normal(size=(10, n))
    y = 0.7
    fair = crps_ensemble(members, np.full(n, y), fair=True)
    std = crps_ensemble(members, np.full(n, y))
    exact = crps_gaussian(0.0, 1.0, y)
    assert abs(fair.mean() - exact) < 4 * fair.std() / np.sqrt(n)
    assert std.mean() - exact > 10 * std.std() / np.sqrt(n)


def test_torch_crps_matches_numpy_and_has_gradients():
    """Torch versions vs numpy versions; tolerance 1e-10 (float64)."""
    rng = np.random.default_rng(5)
    mu, sig, y = rng.normal(size=100), rng.uniform(0.5, 2, 100), rng.normal(size=100)
    mu_t = torch.tensor(mu, requires_grad=True)
    c = tmetrics.crps_gaussian(mu_t, torch.tensor(sig), torch.tensor(y))
    np.testing.assert_allclose(c.detach().numpy(), crps_gaussian(mu, sig, y), atol=1e-10)
    c.sum().backward()
    # dCRPS/dmu = 2 Phi(z) - 1 with z = (mu - y)/sigma ... = -(2 Phi((y-mu)/sigma) - 1)
    np.testing.assert_allclose(mu_t.grad.numpy(), 1 - 2 * stats.norm.cdf((y - mu) / sig), atol=1e-10)
    members = rng.normal(size=(10, 100))
    for fair in (False, True):
        np.testing.assert_allclose(
            tmetrics.crps_ensemble(torch.tensor(members), torch.tensor(y), fair=fair).numpy(),
            crps_ensemble(members, y, fair=fair), atol=1e-10)


def test_weighted_loss_skips_nan_and_weights_latitudes():
    """GaussianCRPSLoss vs a hand-weighted numpy mean; tolerance 1e-6."""
    rng = np.random.default_rng(6)
    mu, sig, y = rng.normal(size=(3, 2, 4, 5))
    sig = np.abs(sig) + 0.5
    y[0, 1, 2] = np.nan
    w = latitude_weights(np.array([-60.0, -10.0, 20.0, 80.0]))
    loss = tmetrics.GaussianCRPSLoss(torch.tensor(w))(torch.tensor(mu), torch.tensor(sig), torch.tensor(y))
    c = crps_gaussian(mu, sig, y)
    ww = np.broadcast_to(w[None, :, None], c.shape) * np.isfinite(c)
    assert float(loss) == pytest.approx(np.nansum(c * ww) / ww.sum(), rel=1e-6)


def test_latitude_weights_mean_one_and_cosine_shape():
    """Weights are proportional to cos(lat) and average to 1 (exact up to 1e-12)."""
    lat = np.linspace(-90, 90, 19)
    w = latitude_weights(lat)
    assert w.mean() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(w / w.max(), np.cos(np.deg2rad(lat)), atol=1e-12)


def test_efi_limits_and_analytic_shift():
    """EFI = 0 for an ensemble with the climate's distribution, +-1 beyond its range (exact),
    and matches scipy quadrature of the continuous definition for a shifted normal
    (2/pi int (p - Phi(Phi^-1(p) - d)) / sqrt(p(1-p)) dp), tolerance 0.02."""
    efi = ExtremeForecastIndex(200)
    rng = np.random.default_rng(7)
    clim = rng.normal(size=(20_000, 1))
    q = efi.climate_quantiles(clim)
    assert efi(np.full((10, 1), 10.0), q)[0] == pytest.approx(1.0, abs=1e-12)
    assert efi(np.full((10, 1), -10.0), q)[0] == pytest.approx(-1.0, abs=1e-12)
    same = rng.normal(size=(20_000, 1))
    assert abs(efi(same, q)[0]) < 0.02
    for d in (0.5, 1.5):
        fc = stats.norm.ppf((np.arange(20_000) + 0.5) / 20_000)[:, None] + d
        ref = 2 / np.pi * integrate.quad(
            lambda p, d=d: (p - stats.norm.cdf(stats.norm.ppf(p) - d)) / np.sqrt(p * (1 - p)), 0, 1)[0]
        assert efi(fc, q)[0] == pytest.approx(ref, abs=0.02)


def test_rank_histogram_and_spread_skill_of_calibrated_ensemble():
    """Truth drawn like the members: flat rank histogram (each bin within 5% of 1/11) and
    spread-skill ratio 1 (within 2%)."""
    rng = np.random.default_rng(8)
    n = 200_000
    centre = rng.normal(size=n)
    members = centre + rng.normal(size=(10, n))
    y = centre + rng.normal(size=n)
    h = rank_histogram(members, y)
    assert h.size == 11 and h.sum() == n
    np.testing.assert_allclose(h / n, 1 / 11, rtol=0.05)
    ssr = spread_skill_ratio(members.var(axis=0, ddof=1), (members.mean(axis=0) - y) ** 2, members=10)
    assert ssr == pytest.approx(1.0, rel=0.02)


def test_reliability_curve_counts_by_hand_and_is_diagonal_when_calibrated():
    """Reference 1, by hand: probabilities 0.05, 0.05, 0.15, 1.0 (1 falls in the last bin) and
    events 1, 0, 1, 1 give bins 0, 1, 9 with means 0.05, 0.15, 1.0 and frequencies 0.5, 1, 1;
    a NaN pair is skipped. Reference 2, binomial: events drawn with the forecast probability
    have observed frequencies within 4 binomial standard errors of the mean probability."""
    from ens10.metrics import reliability_curve

    c = reliability_curve([0.05, 0.05, 0.15, 1.0, np.nan], [1, 0, 1, 1, 1], bins=10)
    assert c.counts.tolist() == [2, 1, 0, 0, 0, 0, 0, 0, 0, 1]
    np.testing.assert_allclose(c.forecast[[0, 1, 9]], [0.05, 0.15, 1.0], rtol=1e-15)
    np.testing.assert_array_equal(c.observed[[0, 1, 9]], [0.5, 1.0, 1.0])
    assert np.isnan(c.forecast[2]) and np.isnan(c.observed[2])
    rng = np.random.default_rng(3)
    p = rng.random(200_000)
    c = reliability_curve(p, rng.random(p.size) < p)
    se = np.sqrt(c.forecast * (1 - c.forecast) / c.counts)
    assert np.all(np.abs(c.observed - c.forecast) < 4 * se)

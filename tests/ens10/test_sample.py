"""The sample generator's known truth, checked on the written netCDF layout."""

from __future__ import annotations

import numpy as np
import pytest
import scoringrules as sr
import xarray as xr
from scipy.special import erf
from scipy.stats import skew

import ens10
from ens10 import schema
from ens10.io.preprocessed import target_fields


def _oracle(root, target):
    ds = xr.open_dataset(root / schema.oracle_file_name(target))
    return ds.isel(lat=slice(None, None, -1))  # files are north -> south, loaders south -> north


def test_local_emos_truth_is_biased_and_underdispersive_by_the_known_amount(sample_local_emos):
    """Truth 'local-emos': mean - bias = oracle mu and std / r = oracle sigma (float32 round-off:
    rtol 1e-5), for every target; the raw ensemble is under-dispersive (r in [0.5, 0.8]); the
    oracle is Gaussian (equal scales)."""
    for target in schema.TARGETS:
        f = target_fields(sample_local_emos, target).load()
        o = _oracle(sample_local_emos, target)
        np.testing.assert_allclose(f["mean"] - o["bias"], o["mu"], rtol=1e-5, atol=1e-5 * float(abs(o["mu"]).max()))
        np.testing.assert_allclose(f["std"] / o["dispersion_ratio"], o["sigma"], rtol=1e-5)
        np.testing.assert_array_equal(o["scale_left"], o["scale_right"])
        r = o["dispersion_ratio"].values
        assert 0.5 <= r.min() and r.max() <= 0.8


def _expected_crps(loc, s1, s2, points: int = 2001, block_bytes: int = 32 << 20):
    """E_{Y~F} CRPS(F, Y) = integral F (1 - F) dx, with F the two-piece normal CDF written from
    its definition, by the trapezoidal rule over loc - 9 s1 .. loc + 9 s2. Computed on blocks of
    values whose quadrature arrays take ``block_bytes`` each (every value's integral is its own,
    so the result does not depend on the blocks; whole arrays of 164,160 x 2001 took ~20 GB)."""
    loc, s1, s2 = np.broadcast_arrays(loc, s1, s2)
    out = np.empty(loc.shape)
    flat = out.reshape(-1)
    rows = max(1, block_bytes // (8 * points))
    parts = [a.reshape(-1) for a in (loc, s1, s2)]
    for i in range(0, flat.size, rows):
        flat[i : i + rows] = _expected_crps_block(*(a[i : i + rows] for a in parts), points)
    return out


def _expected_crps_block(loc, s1, s2, points: int):
    """:func:`_expected_crps` of 1-D arrays, all at once."""
    u = np.linspace(0.0, 1.0, points)
    x = (loc - 9 * s1)[..., None] + ((9 * s1 + 9 * s2)[..., None]) * u
    z = np.where(x < loc[..., None], (x - loc[..., None]) / s1[..., None], (x - loc[..., None]) / s2[..., None])
    scale = np.where(x < loc[..., None], s1[..., None], s2[..., None])
    cdf = np.where(x < loc[..., None], 0.0, (s1 - s2)[..., None] / (s1 + s2)[..., None]) + (
        2 * scale / (s1 + s2)[..., None] * 0.5 * (1 + erf(z / np.sqrt(2))))
    return np.trapezoid(cdf * (1 - cdf), x, axis=-1)


@pytest.mark.parametrize(("fixture", "target"), [("sample_nc", "t850"), ("sample_nc", "t2m"),
                                                 ("sample_local_emos", "t850")])
def test_the_truth_is_drawn_from_the_oracle(request, fixture, target):
    """Mean CRPS of the oracle at the truth (scoringrules crps_2pnormal) equals the mean of its
    expected CRPS integral F (1 - F) (quadrature), as it must when the truth is drawn from the
    oracle; tolerance 4 standard errors (flow truth: spatially correlated draws, so the standard
    error is taken over initialisation means)."""
    root = request.getfixturevalue(fixture)
    f = target_fields(root, target).load()
    o = _oracle(root, target)
    loc, s1, s2 = (o[n].values.astype(np.float64) for n in ("loc", "scale_left", "scale_right"))
    c = sr.crps_2pnormal(f["obs"].values.astype(np.float64), s1, s2, loc)
    diff = (c - _expected_crps(loc, s1, s2)).mean(axis=(1, 2))
    assert abs(diff.mean()) < 4 * diff.std() / np.sqrt(diff.size)


def test_expected_crps_does_not_depend_on_its_blocks():
    """The blocked quadrature equals the whole-array one bit for bit (and a Gaussian's closed
    form sigma / sqrt(pi) to the quadrature's accuracy)."""
    rng = np.random.default_rng(0)
    loc = rng.normal(size=(3, 4, 5))
    s1, s2 = rng.uniform(0.5, 2.0, size=(2, 3, 4, 5))
    whole = _expected_crps_block(loc.ravel(), s1.ravel(), s2.ravel(), 2001).reshape(loc.shape)
    np.testing.assert_array_equal(_expected_crps(loc, s1, s2, block_bytes=7 * 8 * 2001), whole)
    np.testing.assert_allclose(_expected_crps(loc, s1, s1), s1 / np.sqrt(np.pi), rtol=1e-6)


def test_flow_truth_is_skewed_per_target(sample_nc):
    """Flow truth: the standardised truth (obs - mu) / sigma has the skewness sign of each
    target's two-piece ratio (t2m cold tail: negative; t850, z500: positive), |skewness| > 0.1,
    and mean 0 / std 1 within 0.02."""
    for target, sign in (("t2m", -1), ("t850", 1), ("z500", 1)):
        e = ((target_fields(sample_nc, target)["obs"] - _oracle(sample_nc, target)["mu"])
             / _oracle(sample_nc, target)["sigma"]).values.ravel()
        assert abs(e.mean()) < 0.02 and abs(e.std() - 1) < 0.02
        assert sign * skew(e) > 0.1


def test_flow_truth_is_outside_the_local_emos_family(sample_nc):
    """Flow truth: at every grid point, the best affine correction of the ensemble mean (least
    squares over all initialisations, the best any per-point EMOS mean can do) leaves an error
    variance at least 10% above the oracle's sigma^2 on average; the ensemble std / oracle sigma
    is not a fixed per-point ratio (its time variation at a point exceeds 5%)."""
    f = target_fields(sample_nc, "t850").load()
    o = _oracle(sample_nc, "t850")
    mean, obs, std = (f[n].values.astype(np.float64) for n in ("mean", "obs", "std"))
    xm, ym = mean - mean.mean(0), obs - obs.mean(0)
    slope = (xm * ym).sum(0) / (xm * xm).sum(0)
    residual = ((ym - slope * xm) ** 2).mean(0)
    assert residual.mean() > 1.1 * (o["sigma"].values.astype(np.float64) ** 2).mean()
    ratio = std / o["sigma"].values
    assert (ratio.std(0) / ratio.mean(0)).mean() > 0.05


def test_members_file_matches_mean_and_std(sample_nc):
    """ENS10_{target}_members.nc has the preprocessed mean and population std (rtol 1e-5)."""
    m = ens10.open_members(sample_nc, "z500", years=(2016, 2017)).values
    f = target_fields(sample_nc, "z500", years=(2016, 2017)).load()
    np.testing.assert_allclose(m.mean(axis=0), f["mean"].values, rtol=1e-5)
    np.testing.assert_allclose(m.std(axis=0), f["std"].values, rtol=1e-4)

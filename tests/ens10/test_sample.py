"""The sample generator's known truth, checked on the written netCDF layout."""

from __future__ import annotations

import numpy as np
import xarray as xr

import ens10
from ens10 import schema
from ens10.io.preprocessed import target_fields
from ens10.metrics import crps_gaussian


def _oracle(root, target):
    ds = xr.open_dataset(root / schema.oracle_file_name(target))
    return ds.isel(lat=slice(None, None, -1))  # files are north -> south, loaders south -> north


def test_ensemble_is_biased_and_underdispersive_by_the_known_amount(sample_grib):
    """mean - bias = oracle mu and std / r = oracle sigma (float32 round-off: rtol 1e-5), for
    every target; the raw ensemble is under-dispersive (r in [0.5, 0.8])."""
    root = sample_grib / "netcdf"
    for target in schema.TARGETS:
        f = target_fields(root, target).load()
        o = _oracle(root, target)
        np.testing.assert_allclose(f["mean"] - o["bias"], o["mu"], rtol=1e-5, atol=1e-5 * float(abs(o["mu"]).max()))
        np.testing.assert_allclose(f["std"] / o["dispersion_ratio"], o["sigma"], rtol=1e-5)
        r = o["dispersion_ratio"].values
        assert 0.5 <= r.min() and r.max() <= 0.8


def test_oracle_crps_is_the_analytic_expectation(sample_nc):
    """The truth is drawn from the oracle: mean CRPS(oracle) equals mean(sigma)/sqrt(pi), the
    expected CRPS of a calibrated Gaussian; tolerance 4 standard errors."""
    f = target_fields(sample_nc, "t850").load()
    o = _oracle(sample_nc, "t850")
    c = crps_gaussian(o["mu"].values, o["sigma"].values, f["obs"].values)
    expected = o["sigma"].values / np.sqrt(np.pi)
    diff = c - expected
    assert abs(diff.mean()) < 4 * diff.std() / np.sqrt(diff.size)


def test_members_file_matches_mean_and_std(sample_nc):
    """ENS10_{target}_members.nc has the preprocessed mean and population std (rtol 1e-5)."""
    m = ens10.open_members(sample_nc, "z500", years=(2016, 2017)).values
    f = target_fields(sample_nc, "z500", years=(2016, 2017)).load()
    np.testing.assert_allclose(m.mean(axis=0), f["mean"].values, rtol=1e-5)
    np.testing.assert_allclose(m.std(axis=0), f["std"].values, rtol=1e-4)

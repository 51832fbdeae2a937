"""Shared ENS-10 sample data for the tests (generated once per session, small grids)."""

from __future__ import annotations

import pytest
import torch

from ens10.sample import SampleConfig, SampleGenerator, make_sample

# The test machine is small and shared: one intra-op thread avoids oversubscription.
torch.set_num_threads(1)

# 10 degree grid (19 x 72/2 points), all 20 years so that train/validation/test splits exist,
# 12 calendar dates a year: 192 training initialisations per grid point.
TRAIN_GRID = 10.0
TRAIN_DATES = 12


@pytest.fixture(scope="session")
def sample_nc(tmp_path_factory):
    """Preprocessed layout of a full-period sample (netCDF only)."""
    out = tmp_path_factory.mktemp("ens10_nc")
    make_sample(out, grid=TRAIN_GRID, years=(1998, 2017), n_dates=TRAIN_DATES, layouts=("netcdf",))
    return out / "netcdf"


@pytest.fixture(scope="session")
def sample_local_emos(tmp_path_factory):
    """Preprocessed layout of a full-period sample whose truth lies in the local-EMOS family
    (6 dates a year: 96 training initialisations per grid point)."""
    out = tmp_path_factory.mktemp("ens10_local_emos")
    make_sample(out, grid=TRAIN_GRID, years=(1998, 2017), n_dates=6, layouts=("netcdf",),
                truth="local-emos")
    return out / "netcdf"


GRIB_SAMPLE = {"grid": TRAIN_GRID, "years": (2016, 2017), "n_dates": 2, "grib_dates": 1,
               "grib_levels": (500, 850)}


@pytest.fixture(scope="session")
def grib_generator():
    """The generator behind ``sample_grib`` (to compare files against exact values)."""
    return SampleGenerator(SampleConfig(**GRIB_SAMPLE))


@pytest.fixture(scope="session")
def sample_grib(tmp_path_factory):
    """Both layouts of a tiny sample: 2 years, 2 dates (GRIB for 1 date, levels 500/850)."""
    out = tmp_path_factory.mktemp("ens10_grib")
    make_sample(out, **GRIB_SAMPLE)
    return out

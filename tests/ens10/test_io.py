"""Raw GRIB and preprocessed loaders on generated files with the real schema, the GRIB ->
netCDF converter, and the errors for missing or corrupt data."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import ens10
from ens10 import ENS10DataError, schema
from ens10.io.convert import preprocess


@pytest.fixture
def generator(grib_generator):
    return grib_generator


def test_raw_layout_dims_order_and_values(sample_grib, generator):
    """cfgrib view of the generated GRIB1 files: real dims/names, increasing latitude, and the
    generator's members to 16-bit packing precision (range / 2^15)."""
    grib = sample_grib / "grib"
    mmdd = generator.config.dates[0]
    assert sorted(p.name for p in grib.iterdir()) == [f"output.pl.2018{mmdd}", f"output.sfc.2018{mmdd}"]
    ds = ens10.open_dataset(grib, "pl", variables=["z", "t"], levels=[500, 850])
    assert ds["t"].dims == ("number", "time", "step", "isobaricInhPa", "latitude", "longitude")
    assert ds["t"].chunks is not None  # lazy (dask)
    assert ds["number"].values.tolist() == list(range(1, 11))
    assert (ds["step"].values // np.timedelta64(1, "h")).tolist() == [0, 24, 48]
    assert np.all(np.diff(ds["latitude"].values) > 0)
    assert ds["time"].dt.year.values.tolist() == [2016, 2017]
    x = ds["t"].sel(time="2017", step=np.timedelta64(48, "h"), isobaricInhPa=850).values[:, 0]
    ref = generator.members("t", 850, 48, 2017, mmdd)[:, ::-1]
    tol = (ref.max() - ref.min()) / 2**15
    np.testing.assert_allclose(x, ref, atol=tol)


def test_sst_is_nan_exactly_over_land(sample_grib, generator):
    """SST bitmap: NaN exactly on the generator's land mask in both layouts."""
    sfc = ens10.open_dataset(sample_grib / "grib", "sfc", variables=["sst", "t2m"], steps=[48])
    land = generator.land[::-1]
    sst = sfc["sst"].isel(number=0, time=0, step=0).values
    np.testing.assert_array_equal(np.isnan(sst), land)
    assert np.isfinite(sfc["t2m"].values).all()
    nc = ens10.open_dataset(sample_grib / "netcdf", "sfc_mean", variables=["sst"])
    np.testing.assert_array_equal(np.isnan(nc["SSTK"].isel(time=0).values), land)


def test_preprocess_reproduces_the_netcdf_layout(sample_grib, tmp_path):
    """GRIB -> mean/std netCDF equals the generator's netCDF layout to GRIB packing precision:
    each member is packed with step (field max - field min) / 2^16, so mean and std are off by at
    most half a step; tolerance one step, with the field range bounded by mean range + 12 std."""
    out = tmp_path / "pre"
    # the sample has no 1998-2015 model climate; use the other sample year as climate
    preprocess(sample_grib / "grib", out, era5_dir=sample_grib / "netcdf", climate_years=(2016, 2017))
    for kind in ("pl", "sfc"):
        ref_mean = ens10.open_dataset(sample_grib / "netcdf", f"{kind}_mean")
        ref_std = ens10.open_dataset(sample_grib / "netcdf", f"{kind}_std")
        for stat, ref_ds in (("mean", ref_mean), ("std", ref_std)):
            got = ens10.open_dataset(out, f"{kind}_{stat}")
            assert set(got.data_vars) == {schema.NETCDF_NAME[v] for v in schema.VARIABLES[kind]}
            for v in got.data_vars:
                m = ref_mean[v].sel(time=got["time"]).values
                sd = ref_std[v].sel(time=got["time"]).values
                a, b = got[v].values, ref_ds[v].sel(time=got["time"]).values
                np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
                span = np.nanmax(m) - np.nanmin(m) + 12 * np.nanmax(sd)
                np.testing.assert_allclose(a, b, atol=span / 2**16, equal_nan=True, err_msg=v)
    efi = ens10.open_efi(out, "t850")
    assert efi.sizes["time"] == 2 and np.isfinite(efi.values).all()
    assert np.abs(efi.values).max() <= 1.0
    assert ens10.open_target(out, "t850").sizes["time"] == 4


def test_preprocessed_years_are_initialisation_years(sample_grib):
    """years= selects initialisation years although the files are on valid time."""
    ds = ens10.open_dataset(sample_grib / "netcdf", "pl_mean", variables=["T"], levels=[850], years=(2017, 2017))
    init = ds["time"].values - np.timedelta64(48, "h")
    assert (init.astype("datetime64[Y]").astype(int) + 1970 == 2017).all()
    assert ds["lat"].values[0] < ds["lat"].values[-1]


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"kind": "pl", "variables": ["zz"]}, ["zz", "z, t, q"]),
        ({"kind": "pl", "levels": [300]}, ["300", "lacks pressure levels"]),
        ({"kind": "sfc", "dates": ["0230"]}, ["0230", "missing raw files"]),
        ({"kind": "pl", "years": (2010, 2017)}, ["2010", "years"]),
        ({"kind": "pl_mean", "variables": ["SST"]}, ["SST"]),
        ({"kind": "tl"}, ["tl", "pl_mean"]),
    ],
)
def test_missing_things_raise_ens10_error_naming_them(sample_grib, kwargs, words):
    """Each missing variable/level/date/year names itself in the ENS10DataError."""
    root = sample_grib / ("netcdf" if "_" in kwargs["kind"] else "grib")
    with pytest.raises(ENS10DataError) as err:
        ens10.open_dataset(root, **kwargs)
    for w in words:
        assert w in str(err.value)


def test_missing_files_and_corrupt_grib(sample_grib, tmp_path):
    """An empty directory, a missing netCDF file and a truncated GRIB file are ENS10DataErrors
    naming the directory/file."""
    with pytest.raises(ENS10DataError, match="no raw ENS-10 pl files"):
        ens10.open_dataset(tmp_path, "pl")
    with pytest.raises(ENS10DataError, match="ENS10_sfc_std.nc"):
        ens10.open_dataset(tmp_path, "sfc_std")
    src = next((sample_grib / "grib").glob("output.sfc.*"))
    bad = tmp_path / src.name
    data = src.read_bytes()
    bad.write_bytes(data[: len(data) // 3] + b"\x00garbage" * 50)
    with pytest.raises(ENS10DataError, match=src.name):
        ens10.open_dataset(tmp_path, "sfc").load()


def test_layout_copy_is_self_contained(sample_grib, tmp_path):
    """The raw files carry all metadata: a copied directory opens identically."""
    dst = tmp_path / "copy"
    shutil.copytree(sample_grib / "grib", dst)
    a = ens10.open_dataset(dst, "sfc", variables=["t2m"])
    b = ens10.open_dataset(sample_grib / "grib", "sfc", variables=["t2m"])
    np.testing.assert_array_equal(a["t2m"].values, b["t2m"].values)


def test_atomic_output_replaces_only_after_a_complete_write(tmp_path):
    """Reference: the contract of ens10.io.atomic (as stencils.atomic, which ens10's core may
    not import): the target appears world-readable after the block; a failing writer leaves
    the older version and no temporary file."""
    from ens10.io.atomic import atomic_output, write_text

    target = tmp_path / "scores.csv"
    write_text(target, "old\n")
    assert target.stat().st_mode & 0o777 == 0o644
    with pytest.raises(OSError, match="disk full"):
        with atomic_output(target) as tmp:
            tmp.write_text("half")
            raise OSError("disk full")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["scores.csv"]

"""Writers of the preprocessed (netCDF) ENS-10 layout shared by the sample generator and the
GRIB converter: a target's 48 h members, its extreme forecast index, and their coordinates."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from ens10 import schema
from ens10.io.atomic import write_netcdf
from ens10.metrics.efi import ExtremeForecastIndex


def time_coord(times: Sequence[dt.datetime]) -> tuple:
    return ("time", pd.DatetimeIndex(times).values,
            {"standard_name": "time", "long_name": "valid time (initialisation + 48 h)"})


def variable_attrs(var: str) -> dict:
    units, long_name = schema.UNITS[var]
    return {"units": units, "long_name": long_name}


def write_members(values: np.ndarray, valid, lat, lon, target: str, out_dir: Path, cfg=None) -> Path:
    """48 h members of a target: (number, time, lat, lon), time = valid time."""
    t = schema.TARGETS[target]
    ds = xr.Dataset(
        {t.netcdf_variable: (("number", "time", "lat", "lon"), values.astype(np.float32),
                             variable_attrs(t.variable) | {"level_hPa": t.level or 0})},
        coords={
            "number": ("number", np.arange(1, schema.MEMBERS + 1)),
            "time": time_coord(valid),
            "lat": ("lat", lat, {"units": "degrees_north", "standard_name": "latitude"}),
            "lon": ("lon", lon, {"units": "degrees_east", "standard_name": "longitude"}),
        },
    )
    ds.attrs = {"title": f"ENS-10 48 h members of {target}", "Conventions": "CF-1.8"}
    return write_netcdf(ds, out_dir / schema.members_file_name(target))


def compute_efi(members: np.ndarray, years: Sequence[int], dates: Sequence[str],
                climate_years: tuple[int, int], n_bins: int = 100) -> np.ndarray:
    """EFI (time, lat, lon) of 48 h members (M, time, lat, lon) against the model climate of the
    same calendar date: members of all ``climate_years`` except the forecast's own year."""
    efi_fn = ExtremeForecastIndex(n_bins)
    years = np.asarray(years)
    dates = np.asarray(dates)
    out = np.full(members.shape[1:], np.nan, np.float32)
    for d in np.unique(dates):
        idx = np.flatnonzero(dates == d)
        for i in idx:
            pool = idx[(years[idx] != years[i]) & (years[idx] >= climate_years[0]) & (years[idx] <= climate_years[1])]
            if pool.size == 0:
                continue
            clim = members[:, pool].reshape(-1, *members.shape[2:])
            out[i] = efi_fn(members[:, i], efi_fn.climate_quantiles(clim))
    return out


def write_efi(efi: np.ndarray, valid, lat, lon, target: str, out_dir: Path, cfg=None) -> Path:
    ds = xr.Dataset(
        {"efi": (("time", "lat", "lon"), efi, {"long_name": "extreme forecast index", "units": "1"})},
        coords={"time": time_coord(valid), "lat": ("lat", lat, {"units": "degrees_north"}),
                "lon": ("lon", lon, {"units": "degrees_east"})},
    )
    ds.attrs = {"title": f"EFI of the 48 h {target} ensemble against the model climate",
                "Conventions": "CF-1.8"}
    return write_netcdf(ds, out_dir / schema.efi_file_name(target))

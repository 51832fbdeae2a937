"""The forecast fields an exported program needs, read lazily by the ens10 loaders.

Raw GRIB layout (``output.{pl,sfc}.2018MMDD``): the 48 h members of every predictor variable at
the target's level, one program field per member (``T_m0`` ...); the program computes the
ensemble mean and std. Preprocessed layout (``ENS10_{pl,sfc}_{mean,std}.nc``): the ensemble
mean and std are read (program fields ``T_mean``, ``T_std``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import xarray as xr

from ens10 import schema
from ens10.inference.errors import ExportError
from ens10.io.preprocessed import open_preprocessed
from ens10.io.raw import open_raw

log = logging.getLogger(__name__)


def detect_layout(data_dir: Path, kind: str) -> str:
    """'raw' if ``data_dir`` holds raw GRIB files of ``kind``, 'preprocessed' if it holds
    ``ENS10_{kind}_mean.nc``; an :class:`ExportError` otherwise."""
    if not data_dir.is_dir():
        raise ExportError(f"--data {data_dir} is not a directory: point to ENS-10 data "
                          "(raw GRIB or preprocessed netCDF, see 'stratoflow ens10 make-sample')")
    if any(data_dir.glob(f"output.{kind}.2018????")):
        return "raw"
    if (data_dir / schema.preprocessed_file_name(kind, "mean")).is_file():
        return "preprocessed"
    raise ExportError(
        f"--data {data_dir} holds neither raw ENS-10 {kind} GRIB files (output.{kind}.2018MMDD) "
        f"nor the preprocessed {schema.preprocessed_file_name(kind, 'mean')}: point to one of them"
    )


@dataclass
class Forecasts:
    """Lazy forecast fields stacked as (time, field, lat, lon) with the program field names."""

    data: xr.DataArray
    names: list[str]
    valid_time: np.ndarray
    lat: np.ndarray
    lon: np.ndarray
    layout: str
    members: int

    @property
    def stats(self) -> str:
        return "members" if self.layout == "raw" else "given"

    def read(self, t0: int, t1: int, lat: slice = slice(None), lon: slice = slice(None)) -> np.ndarray:
        """Float64 values of times [t0, t1) in the given lat/lon ranges (computed now)."""
        block = self.data.isel(time=slice(t0, t1), lat=lat, lon=lon)
        return np.asarray(block.values, dtype=np.float64)


def open_forecasts(data_dir: Path | str, target: str, variables: Sequence[str],
                   dates: Sequence[str] | None = None, years=None) -> Forecasts:
    """The forecast fields of ``variables`` (netCDF names) for ``target``, lazily."""
    data_dir = Path(data_dir)
    t = schema.target(target)
    layout = detect_layout(data_dir, t.kind)
    levels = [t.level] if t.level is not None else None
    parts, names = [], []
    if layout == "raw":
        canon = [schema.CANONICAL_NAME[v] for v in variables]
        ds = open_raw(data_dir, t.kind, variables=canon, levels=levels, years=years, dates=dates,
                      steps=[schema.LEAD_TIME_H])
        ds = ds.isel(step=0, drop=True).rename({"latitude": "lat", "longitude": "lon"})
        if t.level is not None:
            ds = ds.sel(isobaricInhPa=t.level, drop=True)
        members = int(ds.sizes["number"])
        for v, c in zip(variables, canon):
            for k in range(members):
                parts.append(ds[c].isel(number=k, drop=True))
                names.append(f"{v}_m{k}")
        valid = (ds["time"] + np.timedelta64(schema.LEAD_TIME_H, "h")).values
    else:
        if dates is not None:
            raise ExportError("--dates selects raw GRIB files; with the preprocessed layout use --years")
        members = schema.MEMBERS
        for stat in ("mean", "std"):
            ds = open_preprocessed(data_dir, t.kind, stat, variables=list(variables),
                                   levels=levels, years=years)
            if t.level is not None:
                ds = ds.isel(plev=0, drop=True)
            for v in variables:
                parts.append(ds[v])
                names.append(f"{v}_{stat}")
        valid = ds["time"].values
    drop = [c for c in parts[0].coords if c not in ("time", "lat", "lon")]
    parts = [p.drop_vars([c for c in drop if c in p.coords]) for p in parts]
    stacked = xr.concat(parts, dim="field", coords="minimal", compat="override", join="exact")
    stacked = stacked.transpose("time", "field", "lat", "lon")
    log.info("%s layout in %s: %d times, %d fields", layout, data_dir, stacked.sizes["time"], len(names))
    return Forecasts(stacked, names, valid, stacked["lat"].values, stacked["lon"].values, layout, members)

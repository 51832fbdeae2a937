"""Raw GRIB -> preprocessed netCDF (``stratoflow ens10 preprocess RAW_DIR OUT_DIR``).

Per calendar-date file: select the 48 h step (and 500/850 hPa), take the ensemble mean and
population std over the 10 members (as ``cdo daymean/daystd`` did for the reference), keep the
members of the targets, and compute the targets' EFI against the model climate of that calendar
date (all other years in ``climate_years``). Parts are written per date, then concatenated along
valid time into ``ENS10_{pl,sfc}_{mean,std}.nc``, ``ENS10_{target}_members.nc`` and
``ENS10_{target}_efi.nc``; memory stays bounded by one date. ERA5 target files are copied from
``era5_dir`` when given.
"""

from __future__ import annotations

import logging
import shutil
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import xarray as xr
from tqdm import tqdm

from ens10 import schema
from ens10.errors import ENS10DataError
from ens10.io.atomic import atomic_output, check_output_dir, write_netcdf
from ens10.io.layout import compute_efi, write_efi, write_members
from ens10.io.raw import open_raw, raw_files

log = logging.getLogger(__name__)


def _stats(ds: xr.Dataset, kind: str) -> dict[str, xr.Dataset]:
    ds = ds.isel(step=0, drop=True)
    valid = (ds["time"] + np.timedelta64(schema.LEAD_TIME_H, "h")).values
    rename = {v: schema.NETCDF_NAME[v] for v in ds.data_vars}
    out = {}
    for stat in ("mean", "std"):
        s = ds.mean("number") if stat == "mean" else ds.std("number", ddof=0)
        s = s.rename(rename).rename({"latitude": "lat", "longitude": "lon"})
        s = s.drop_vars([c for c in s.coords if c not in s.dims])
        s = s.assign_coords(time=("time", valid, {"long_name": "valid time (initialisation + 48 h)"}))
        if kind == "pl":
            s = s.rename({"isobaricInhPa": "plev"})
            s = s.assign_coords(plev=("plev", s["plev"].values * 100.0,
                                      {"units": "Pa", "standard_name": "air_pressure"}))
            s = s.transpose("time", "plev", "lat", "lon")
        for v in s.data_vars:
            units, long_name = schema.UNITS[schema.CANONICAL_NAME[v]]
            s[v].attrs = {"units": units, "long_name": long_name, "cell_methods": f"number: {stat}"}
        s.attrs = {"title": f"ENS-10 48 h ensemble {stat} ({kind})", "Conventions": "CF-1.8",
                   "source": "stratoflow ens10 preprocess"}
        with warnings.catch_warnings():  # std over all-NaN members (SST over land) stays NaN
            warnings.simplefilter("ignore", RuntimeWarning)
            out[stat] = s.compute()
    return out


def preprocess(
    raw_dir: Path | str,
    out_dir: Path | str,
    era5_dir: Path | str | None = None,
    targets: Sequence[str] = tuple(schema.TARGETS),
    dates: Sequence[str] | None = None,
    climate_years: tuple[int, int] = schema.SPLITS["train"],
) -> list[Path]:
    """Convert the raw layout in ``raw_dir`` into the preprocessed layout in ``out_dir``."""
    raw_dir, out_dir = Path(raw_dir), Path(out_dir)
    pl_dates, sfc_dates = raw_files(raw_dir, "pl"), raw_files(raw_dir, "sfc")
    if set(pl_dates) != set(sfc_dates):
        lack = sorted(set(pl_dates) ^ set(sfc_dates))
        raise ENS10DataError(f"{raw_dir}: pl and sfc files differ for dates {lack}: both are needed")
    all_dates = sorted(pl_dates) if dates is None else [str(d)[-4:] for d in dates]
    tgt = [schema.target(t) for t in targets]
    if era5_dir is not None:
        lack = [str(Path(era5_dir) / t.era5_file) for t in tgt
                if not (Path(era5_dir) / t.era5_file).is_file()]
        if lack:
            raise ENS10DataError(
                f"--era5-dir {era5_dir} lacks the ERA5 target files {', '.join(lack)}: give the "
                "folder holding ERA5_z500.nc, ERA5_t850.nc and ERA5_sfc_t2m.nc"
            )
    check_output_dir(out_dir, "preprocess output folder")
    out_dir.mkdir(parents=True, exist_ok=True)
    parts_dir = out_dir / ".parts"
    parts_dir.mkdir(exist_ok=True)
    parts: dict[str, list[Path]] = {}
    for mmdd in tqdm(all_dates, desc="preprocess", unit="date"):
        inits = {}
        for kind in ("pl", "sfc"):
            levels = list(schema.PREPROCESSED_LEVELS) if kind == "pl" else None
            raw = open_raw(raw_dir, kind, levels=levels, dates=[mmdd], steps=[schema.LEAD_TIME_H])
            inits[kind] = raw["time"].values
            if kind == "sfc" and not np.array_equal(inits["pl"], inits["sfc"]):
                years = {k: sorted({int(y) + 1970 for y in v.astype("datetime64[Y]").astype(int)})
                         for k, v in inits.items()}
                raise ENS10DataError(
                    f"{pl_dates[mmdd].name} holds the initialisations of years {years['pl']} but "
                    f"{sfc_dates[mmdd].name} those of {years['sfc']} (in {raw_dir}): a file is "
                    "incomplete; download it again"
                )
            for stat, ds in _stats(raw, kind).items():
                p = parts_dir / f"{kind}_{stat}_{mmdd}.nc"
                parts.setdefault(f"{kind}_{stat}", []).append(write_netcdf(ds, p))
            for t in (t for t in tgt if t.kind == kind):
                da = raw[t.variable].isel(step=0, drop=True)
                if t.level is not None:
                    da = da.sel(isobaricInhPa=t.level, drop=True)
                values = da.transpose("number", "time", "latitude", "longitude").values
                years = raw["time"].dt.year.values
                valid = raw["time"].values + np.timedelta64(schema.LEAD_TIME_H, "h")
                lat, lon = raw["latitude"].values, raw["longitude"].values
                sub = parts_dir / f"{t.name}_{mmdd}"
                sub.mkdir(exist_ok=True)
                parts.setdefault(f"{t.name}_members", []).append(
                    write_members(values, valid, lat, lon, t.name, sub))
                efi = compute_efi(values, years, [mmdd] * len(years), climate_years)
                parts.setdefault(f"{t.name}_efi", []).append(write_efi(efi, valid, lat, lon, t.name, sub))
    written = []
    for key, files in tqdm(sorted(parts.items()), desc="concatenate", unit="file", leave=False):
        with xr.open_mfdataset(files, combine="nested", concat_dim="time", data_vars="minimal",
                               coords="minimal", compat="override") as ds:
            ds = ds.sortby("time")
            if key.endswith("_members"):
                name = schema.members_file_name(key[: -len("_members")])
            elif key.endswith("_efi"):
                name = schema.efi_file_name(key[: -len("_efi")])
            else:
                kind, stat = key.split("_")
                name = schema.preprocessed_file_name(kind, stat)
            written.append(write_netcdf(ds, out_dir / name))
    shutil.rmtree(parts_dir, ignore_errors=True)
    if era5_dir is not None:
        for t in tgt:
            src = Path(era5_dir) / t.era5_file
            if not src.is_file():
                raise ENS10DataError(f"missing ERA5 target file {src} for {t.name}")
            dst = out_dir / t.era5_file
            with atomic_output(dst) as tmp:
                shutil.copyfile(src, tmp)
            written.append(dst)
    else:
        log.info("no --era5-dir given: put %s into %s before training",
                 ", ".join(t.era5_file for t in tgt), out_dir)
    return written

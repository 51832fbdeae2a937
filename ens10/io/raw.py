"""Reader of the raw ENS-10 GRIB layout (``output.{pl,sfc}.2018MMDD``) via cfgrib.

Each file holds one calendar date of all years; ``open_raw`` merges the requested dates into one
time axis of initialisations, flips latitude to increasing order and returns lazy (dask) arrays
with dims (number, time, step[, isobaricInhPa], latitude, longitude).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import xarray as xr

from ens10 import schema
from ens10.errors import ENS10DataError
from ens10.io.grib_scan import scan_grib

log = logging.getLogger(__name__)

_NAME = re.compile(r"^output\.(pl|sfc)\.(\d{8})$")
# one dask chunk per initialisation and step: 10 members x 11 levels x 361 x 720 float32 is
# ~110 MB on the real grid (a whole-variable chunk of one real file would be ~7 GB)
DEFAULT_CHUNKS = {"time": 1, "step": 1}


def raw_files(root: Path | str, kind: str) -> dict[str, Path]:
    """{'MMDD': path} of the raw files of ``kind`` ('pl' or 'sfc') in ``root``."""
    root = Path(root)
    if kind not in schema.VARIABLES:
        raise ENS10DataError(f"unknown level type {kind!r}: use 'pl' or 'sfc'")
    if not root.is_dir():
        what = "is a file, not a folder" if root.exists() else "does not exist"
        raise ENS10DataError(
            f"ENS-10 raw directory {root} {what}: give the folder holding the GRIB files "
            "output.{pl,sfc}.2018MMDD"
        )
    out = {}
    for p in sorted(root.iterdir()):
        m = _NAME.match(p.name)
        if m and m.group(1) == kind:
            out[m.group(2)[4:]] = p
    if not out:
        raise ENS10DataError(
            f"no raw ENS-10 {kind} files (output.{kind}.2018MMDD) in {root}: point to the "
            "directory holding the downloaded GRIB files (or run 'stratoflow ens10 make-sample')"
        )
    return out


def _normalise_dates(dates: Iterable[str] | None, available: Sequence[str]) -> list[str]:
    if dates is None:
        return list(available)
    wanted = []
    for d in dates:
        s = str(d)
        if len(s) == 8:
            s = s[4:]
        if len(s) != 4 or not s.isdigit():
            raise ENS10DataError(f"date {d!r}: give 'MMDD' or '2018MMDD'")
        wanted.append(s)
    missing = [d for d in wanted if d not in available]
    if missing:
        raise ENS10DataError(
            f"missing raw files for dates {', '.join(missing)} (have {len(available)} dates: "
            f"{', '.join(list(available)[:6])}{' ...' if len(available) > 6 else ''})"
        )
    return wanted


def _open_one(path: Path, kind: str, chunks: dict | None) -> xr.Dataset:
    scan_grib(path)
    try:
        ds = xr.open_dataset(
            path, engine="cfgrib", chunks=chunks if chunks is not None else DEFAULT_CHUNKS,
            backend_kwargs={"indexpath": "", "read_keys": ["dataDate"]},
        )
    except Exception as exc:  # cfgrib/eccodes raise many types for damaged files
        raise ENS10DataError(
            f"cannot read GRIB file {path}: {type(exc).__name__}: {exc}. The file is corrupt or "
            "truncated: download it again"
        ) from exc
    _check_conventions(ds, path, kind)
    for dim in ("number", "time", "step"):
        if dim not in ds.dims:
            ds = ds.expand_dims(dim)
    ds = ds.transpose("number", "time", "step", ...)
    return ds.drop_vars([c for c in ("surface", "valid_time") if c in ds.coords])


def _check_conventions(ds: xr.Dataset, path: Path, kind: str) -> None:
    """ENS10DataError naming ``path`` and the GRIB key unless the file follows the ECMWF
    conventions the loader relies on: variables by ``shortName``, members by ``number``,
    initialisations by ``dataDate``/``dataTime``, lead times by ``step``, and levels by
    ``typeOfLevel`` (``isobaricInhPa`` in pl files, ``surface`` in sfc files). The member count
    (``number``) is checked by :func:`open_raw`."""
    if not ds.data_vars:
        raise ENS10DataError(f"GRIB file {path} holds no field cfgrib can decode (check its shortName keys)")
    levels = sorted({str(v.attrs.get("GRIB_typeOfLevel", "?")) for v in ds.data_vars.values()})
    wanted = "isobaricInhPa" if kind == "pl" else "surface"
    if kind == "pl" and levels != [wanted] or kind == "sfc" and wanted not in levels:
        raise ENS10DataError(
            f"GRIB file {path} holds fields on typeOfLevel {', '.join(levels)}: an ENS-10 {kind} "
            f"file holds {wanted} fields"
        )


def open_raw(
    root: Path | str,
    kind: str = "pl",
    variables: Sequence[str] | None = None,
    levels: Sequence[int] | None = None,
    years: tuple[int, int] | Sequence[int] | None = None,
    dates: Iterable[str] | None = None,
    steps: Sequence[int] | None = None,
    chunks: dict | None = None,
) -> xr.Dataset:
    """Lazily open raw ENS-10 GRIB files as one dataset.

    kind: 'pl' or 'sfc'. variables: cfgrib names (z, t, ..., sst, u10, t2m, ...). levels: hPa.
    years: (first, last) inclusive or a list. dates: 'MMDD' calendar dates (default: all files).
    steps: lead times in hours (0, 24, 48). Latitude is returned increasing (-90 -> 90).
    """
    files = raw_files(root, kind)
    wanted_dates = _normalise_dates(dates, list(files))
    want_vars = list(variables) if variables is not None else list(schema.VARIABLES[kind])
    unknown = [v for v in want_vars if v not in schema.VARIABLES[kind]]
    if unknown:
        raise ENS10DataError(
            f"unknown {kind} variables {unknown}: ENS-10 {kind} variables are "
            f"{', '.join(schema.VARIABLES[kind])}"
        )
    parts = []
    first_years: tuple[Path, set[int]] | None = None
    for mmdd in wanted_dates:
        path = files[mmdd]
        ds = _open_one(path, kind, chunks)
        missing = [v for v in want_vars if v not in ds.data_vars]
        if missing:
            raise ENS10DataError(
                f"GRIB file {path} lacks variables {missing} (has {sorted(ds.data_vars)})"
            )
        ds = ds[want_vars]
        if kind == "pl":
            if "isobaricInhPa" not in ds.dims:
                ds = ds.expand_dims("isobaricInhPa")
            if levels is not None:
                have = set(np.asarray(ds["isobaricInhPa"].values).astype(int).tolist())
                lack = [lv for lv in levels if lv not in have]
                if lack:
                    raise ENS10DataError(
                        f"GRIB file {path} lacks pressure levels {lack} hPa (has {sorted(have)})"
                    )
                ds = ds.sel(isobaricInhPa=list(levels))
            else:
                ds = ds.sortby("isobaricInhPa")
        elif levels is not None:
            raise ENS10DataError("levels= applies to kind='pl' only; surface fields have none")
        if steps is not None:
            have = (ds["step"].values // np.timedelta64(1, "h")).astype(int).tolist()
            lack = [s for s in steps if s not in have]
            if lack:
                raise ENS10DataError(f"GRIB file {path} lacks steps {lack} h (has {have})")
            ds = ds.sel(step=[np.timedelta64(int(s), "h") for s in steps])
        if ds.sizes.get("number", 0) != schema.MEMBERS:
            raise ENS10DataError(
                f"GRIB file {path} has {ds.sizes.get('number', 0)} ensemble members (GRIB key "
                f"'number'), ENS-10 has {schema.MEMBERS}: give the ensemble forecast files"
            )
        file_years = set(ds["time"].dt.year.values.tolist())
        if years is None:
            if first_years is None:
                first_years = (path, file_years)
            elif file_years != first_years[1]:
                raise ENS10DataError(
                    f"GRIB file {path} holds years {sorted(file_years)} but {first_years[0].name} "
                    f"holds {sorted(first_years[1])}: a file is incomplete; download it again or "
                    "pass years= to select common years"
                )
        if years is not None:
            wanted_years = _year_list(years)
            have_years = ds["time"].dt.year.values
            lack = sorted(set(wanted_years) - set(have_years.tolist()))
            if lack:
                raise ENS10DataError(f"GRIB file {path} lacks initialisation years {lack}")
            ds = ds.isel(time=np.isin(have_years, wanted_years))
        parts.append(ds)
    ds = xr.concat(parts, dim="time", join="exact", data_vars="all", coords="minimal",
                   compat="override") if len(parts) > 1 else parts[0]
    ds = ds.sortby("time")
    if ds["latitude"].size > 1 and ds["latitude"].values[0] > ds["latitude"].values[-1]:
        ds = ds.isel(latitude=slice(None, None, -1))
    ds = ds.assign_coords(valid_time=ds["time"] + ds["step"])
    ds.attrs["ens10_layout"] = "raw"
    ds.attrs["ens10_kind"] = kind
    return ds


def _year_list(years) -> list[int]:
    if isinstance(years, tuple) and len(years) == 2:
        return list(range(int(years[0]), int(years[1]) + 1))
    return [int(y) for y in years]

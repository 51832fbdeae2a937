"""Reader of the preprocessed ENS-10 layout used by the reference baselines.

``ENS10_{pl,sfc}_{mean,std}.nc``: 48 h ensemble mean / population std at valid time, dims
(time, plev[Pa], lat, lon) or (time, lat, lon), variables Z T Q W D U V / SSTK TCW TCWV CP MSL
TCC U10M V10M T2M TP SKT. ERA5 targets ``ERA5_z500.nc`` (Z), ``ERA5_t850.nc`` (T),
``ERA5_sfc_t2m.nc`` (T2M) at the same valid times. Extra files of this project:
``ENS10_{target}_members.nc`` (48 h members) and ``ENS10_{target}_efi.nc`` (EFI).
Every reader returns lazy dask-backed objects with latitude increasing and the dims in the order
above; ``latitude``/``longitude`` dimensions (as in some of the real files) are read as
``lat``/``lon``, any other dimension names are an ENS10DataError naming file and variable.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import xarray as xr

from ens10 import schema
from ens10.errors import ENS10DataError

DEFAULT_CHUNKS = {"time": 16}


#: dimension names of the real ENS-10 netCDF files besides ``lat``/``lon`` (both occur)
DIM_ALIASES = {"latitude": "lat", "longitude": "lon"}


def check_data_dir(root: Path | str, looked_for: str | None = None) -> Path:
    """``root`` as a Path; an ENS10DataError naming it when it is not a folder."""
    root = Path(root)
    if not root.is_dir():
        what = "is a file" if root.exists() else "does not exist"
        wanted = f" (looked for {looked_for})" if looked_for else ""
        raise ENS10DataError(
            f"ENS-10 data folder {root} {what}{wanted}: give the folder of the preprocessed "
            "layout, e.g. SAMPLE/netcdf of 'stratoflow ens10 make-sample SAMPLE'"
        )
    return root


def _open(path: Path, what: str, chunks: dict | None) -> xr.Dataset:
    if not path.is_file():
        check_data_dir(path.parent, looked_for=path.name)
        hint = ""
        if any(path.parent.glob("output.*.2018*")):
            hint = f" ({path.parent} holds the raw GRIB layout: convert it first)"
        raise ENS10DataError(
            f"missing {what} file {path}{hint}: run 'stratoflow ens10 preprocess RAW_DIR "
            f"{path.parent}' (or 'stratoflow ens10 make-sample') to create it"
        )
    try:
        ds = xr.open_dataset(path, chunks=chunks if chunks is not None else DEFAULT_CHUNKS)
    except Exception as exc:  # netCDF4/HDF5 and xarray raise many types for damaged files
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if "did not find a match" in reason:
            reason = "not a netCDF file"
        raise ENS10DataError(
            f"cannot read netCDF file {path} ({reason}): the file is truncated or not netCDF; "
            "write it again ('stratoflow ens10 preprocess' or 'make-sample') or download it again"
        ) from exc
    return canonical_dims(ds, path)


def canonical_dims(ds: xr.Dataset, path: Path) -> xr.Dataset:
    """``ds`` with ``latitude``/``longitude`` dimensions renamed ``lat``/``lon``."""
    rename = {}
    for alias, name in DIM_ALIASES.items():
        if alias in ds.dims:
            if name in ds.dims:
                raise ENS10DataError(
                    f"{path} has both {alias!r} and {name!r} dimensions: keep one of them"
                )
            rename[alias] = name
    return ds.rename(rename) if rename else ds


def _variable(ds: xr.Dataset, name: str, dims: tuple[str, ...], path: Path) -> xr.DataArray:
    """``ds[name]`` with its dims in the order ``dims`` (after ``canonical_dims``); an
    ENS10DataError names the file, the variable and the expected dims otherwise."""
    if name not in ds.data_vars:
        raise ENS10DataError(f"{path} lacks variable {name} (has {sorted(ds.data_vars)})")
    da = ds[name]
    if set(da.dims) != set(dims):
        raise ENS10DataError(
            f"{path}: variable {name} has dims ({', '.join(map(str, da.dims))}); ENS-10 expects "
            f"({', '.join(dims)}) (lat/lon may also be named latitude/longitude)"
        )
    return da.transpose(*dims)


def _increasing_lat(ds):
    if ds["lat"].size > 1 and ds["lat"].values[0] > ds["lat"].values[-1]:
        ds = ds.isel(lat=slice(None, None, -1))
    return ds


def _select_years(ds, years, path: Path):
    if years is None:
        return ds
    if isinstance(years, tuple) and len(years) == 2:
        wanted = list(range(int(years[0]), int(years[1]) + 1))
    else:
        wanted = [int(y) for y in years]
    # the files are on valid time; splits and years= mean initialisation years
    init = ds["time"] - np.timedelta64(schema.LEAD_TIME_H, "h")
    have = init.dt.year.values
    lack = sorted(set(wanted) - set(have.tolist()))
    if lack:
        raise ENS10DataError(
            f"{path} has no initialisations in years {lack} (it covers "
            f"{int(have.min())}-{int(have.max())}): make or download data for those years"
        )
    return ds.isel(time=np.isin(have, wanted))


def netcdf_variable(name: str, kind: str) -> str:
    """Accept a cfgrib name ('t2m') or a netCDF name ('T2M'); return the netCDF name."""
    if name in schema.CANONICAL_NAME:
        canon = name
        name = schema.CANONICAL_NAME[name]
    else:
        canon = schema.NETCDF_NAME.get(name)
    if name not in schema.VARIABLES[kind] or canon is None:
        raise ENS10DataError(
            f"unknown {kind} variable {name!r}: ENS-10 {kind} variables are "
            f"{', '.join(schema.VARIABLES[kind])} (netCDF names "
            f"{', '.join(schema.NETCDF_NAME[v] for v in schema.VARIABLES[kind])})"
        )
    return canon


def open_preprocessed(
    root: Path | str,
    kind: str = "pl",
    stat: str = "mean",
    variables: Sequence[str] | None = None,
    levels: Sequence[int] | None = None,
    years=None,
    chunks: dict | None = None,
) -> xr.Dataset:
    """One of ``ENS10_{kind}_{stat}.nc`` (kind 'pl'/'sfc', stat 'mean'/'std'), lazily.

    variables: cfgrib or netCDF names; levels: hPa (the preprocessed files hold 500 and 850);
    years: initialisation years (the files' time axis is the valid time, initialisation + 48 h).
    """
    if kind not in schema.VARIABLES or stat not in ("mean", "std"):
        raise ENS10DataError(f"kind={kind!r}, stat={stat!r}: use kind pl/sfc and stat mean/std")
    path = Path(root) / schema.preprocessed_file_name(kind, stat)
    ds = _open(path, f"preprocessed {kind} {stat}", chunks)
    dims = ("time", "plev", "lat", "lon") if kind == "pl" else ("time", "lat", "lon")
    if variables is not None:
        names = [netcdf_variable(v, kind) for v in variables]
        missing = [n for n in names if n not in ds.data_vars]
        if missing:
            raise ENS10DataError(f"{path} lacks variables {missing} (has {sorted(ds.data_vars)})")
    else:
        names = [n for n in ds.data_vars if schema.CANONICAL_NAME.get(n) in schema.VARIABLES[kind]]
        if not names:
            raise ENS10DataError(
                f"{path} holds none of the ENS-10 {kind} variables "
                f"{', '.join(schema.NETCDF_NAME[v] for v in schema.VARIABLES[kind])} "
                f"(has {sorted(ds.data_vars)})"
            )
    ds = xr.Dataset({n: _variable(ds, n, dims, path) for n in names}, attrs=ds.attrs)
    if kind == "pl" and levels is not None:
        have = (ds["plev"].values / 100).round().astype(int).tolist()
        lack = [lv for lv in levels if lv not in have]
        if lack:
            raise ENS10DataError(f"{path} lacks pressure levels {lack} hPa (has {have})")
        ds = ds.sel(plev=[lv * 100.0 for lv in levels])
    elif kind == "sfc" and levels is not None:
        raise ENS10DataError("levels= applies to kind='pl' only; surface fields have none")
    return _increasing_lat(_select_years(ds, years, path))


def open_target(root: Path | str, target: str, years=None, chunks: dict | None = None) -> xr.DataArray:
    """The ERA5 target (time, lat, lon) of ``target`` ('z500', 't850', 't2m') at valid time."""
    t = schema.target(target)
    path = Path(root) / t.era5_file
    ds = _open(path, f"ERA5 {target} target", chunks)
    pl = t.era5_variable in ds.data_vars and "plev" in ds[t.era5_variable].dims
    dims = ("time", "plev", "lat", "lon") if pl else ("time", "lat", "lon")
    da = _variable(ds, t.era5_variable, dims, path)
    if pl:
        da = da.isel(plev=0, drop=True)
    return _increasing_lat(_select_years(da, years, path))


def open_members(root: Path | str, target: str, years=None, chunks: dict | None = None) -> xr.DataArray:
    """48 h members (number, time, lat, lon) of ``target`` (``ENS10_{target}_members.nc``)."""
    t = schema.target(target)
    path = Path(root) / schema.members_file_name(target)
    ds = _open(path, f"{target} members", chunks)
    da = _variable(ds, t.netcdf_variable, ("number", "time", "lat", "lon"), path)
    return _increasing_lat(_select_years(da, years, path))


def open_efi(root: Path | str, target: str, years=None, chunks: dict | None = None) -> xr.DataArray:
    """EFI (time, lat, lon) of the 48 h ``target`` ensemble (``ENS10_{target}_efi.nc``)."""
    path = Path(root) / schema.efi_file_name(target)
    ds = _open(path, f"{target} EFI", chunks)
    da = _variable(ds, "efi", ("time", "lat", "lon"), path)
    return _increasing_lat(_select_years(da, years, path))


def open_oracle(root: Path | str, target: str) -> xr.Dataset | None:
    """The sample generator's optimal forecast of ``target`` (``SAMPLE_{target}_oracle.nc``):
    ``mu``, ``sigma`` (mean and std) and the two-piece normal ``loc``, ``scale_left``,
    ``scale_right`` (time, lat, lon; Gaussian ``loc = mu``, scales ``sigma`` for files that hold
    only ``mu`` and ``sigma``), or None when ``root`` is not a sample."""
    path = Path(root) / schema.oracle_file_name(target)
    if not path.is_file():
        return None
    ds = _open(path, f"{target} oracle", None)
    dims = ("time", "lat", "lon")
    out = xr.Dataset({n: _variable(ds, n, dims, path) for n in ("mu", "sigma")})
    if "loc" in ds:
        out = out.assign({n: _variable(ds, n, dims, path) for n in ("loc", "scale_left", "scale_right")})
    else:
        out = out.assign(loc=out["mu"], scale_left=out["sigma"], scale_right=out["sigma"])
    return _increasing_lat(out)


def target_fields(root: Path | str, target: str, years=None) -> xr.Dataset:
    """Ensemble mean/std of the target and the ERA5 truth, aligned on time (lazy)."""
    t = schema.target(target)
    mean = open_preprocessed(root, t.kind, "mean", [t.variable], years=years)[t.netcdf_variable]
    std = open_preprocessed(root, t.kind, "std", [t.variable], years=years)[t.netcdf_variable]
    if t.level is not None:
        mean = mean.sel(plev=t.level * 100.0, drop=True)
        std = std.sel(plev=t.level * 100.0, drop=True)
    obs = open_target(root, target, years=years)
    try:
        mean, std, obs = xr.align(mean, std, obs, join="exact")
    except ValueError as exc:
        raise ENS10DataError(
            f"ENS-10 {target} mean/std and ERA5 {t.era5_file} in {root} are not on the same "
            f"valid times and grid: {exc}"
        ) from exc
    return xr.Dataset({"mean": mean, "std": std, "obs": obs})

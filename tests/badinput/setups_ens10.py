"""Set-ups of the ``ens10-*`` and ``fv3plot-*`` bad-input cases: small ENS-10 samples,
checkpoints of the wrong kind or grid, damaged files, netCDF files that are not FV3 outputs.

The samples are generated once per test session into a cache beside the pytest folders
(``<basetemp>/ens10-badinput-cache``) and copied into each case folder; without a pytest
base folder above the case folder they are generated in the case folder itself.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import torch
import xarray as xr

from ens10.sample import make_sample
from tests.badinput.setups_runs import readonly_dir
from tests.ens10.inference.models import random_checkpoint

GRID = 30.0  # 7 x 12 points: the coarsest grid that keeps every sample feature
NETCDF = {"grid": GRID, "years": (2016, 2017), "n_dates": 1, "layouts": ("netcdf",)}
GRIB = {"grid": GRID, "years": (2016, 2017), "n_dates": 1, "grib_dates": 1,
        "grib_levels": (500, 850), "layouts": ("grib",)}  # fmt: skip


def _cache_root(case_dir: Path) -> Path | None:
    """``<basetemp>/ens10-badinput-cache`` when the case folder lies in a pytest base folder."""
    for parent in case_dir.parents:
        if parent.name.startswith("pytest-") and parent.parent.name.startswith("pytest-of-"):
            return parent / "ens10-badinput-cache"
    return None


def _sample(case_dir: Path, name: str, **kwargs) -> Path:
    """The folder of a generated sample ``name`` (cached per session when possible)."""
    root = _cache_root(case_dir)
    if root is None:
        out = case_dir / f".sample-{name}"
        make_sample(out, **kwargs)
        return out
    final = root / name
    if not final.is_dir():
        root.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=root))
        make_sample(tmp, **kwargs)
        try:
            os.rename(tmp, final)
        except OSError:  # another worker was first
            shutil.rmtree(tmp, ignore_errors=True)
    return final


def _data(case_dir: Path) -> Path:
    """``data/``: the preprocessed layout of a 2-year, 30-degree sample."""
    dst = case_dir / "data"
    shutil.copytree(_sample(case_dir, "netcdf", **NETCDF) / "netcdf", dst)
    return dst


def _checkpoint(path: Path, step: float = GRID, **changes) -> Path:
    """An EMOS t850 checkpoint in the training format (random weights) for a ``step`` grid."""
    _, ckpt = random_checkpoint("emos", step=step)
    ckpt.update(changes)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(ckpt, path)
    return path


# -- ens10 evaluate / train ---------------------------------------------------------------
def training_state(case_dir: Path) -> None:
    """``data/`` and ``ck/emos_t850.last.pt``, a training state (what `train` resumes from)."""
    _data(case_dir)
    _, ckpt = random_checkpoint("emos", step=GRID)
    (case_dir / "ck").mkdir()
    torch.save({"config": ckpt["config"], "state_dict": ckpt["state_dict"], "optimizer": {},
                "state": {"epoch": 1}}, case_dir / "ck" / "emos_t850.last.pt")  # fmt: skip


def other_grid_checkpoint(case_dir: Path) -> None:
    """``data/`` (30-degree grid, 7 x 12) and ``ck/emos_t850.pt`` trained on 10 degrees."""
    _data(case_dir)
    _checkpoint(case_dir / "ck" / "emos_t850.pt", step=10.0)


def other_inputs_checkpoint(case_dir: Path) -> None:
    """``data/`` and ``ck/emos_t850.pt`` whose predictor list names Q_mean R_mean."""
    _data(case_dir)
    _, ckpt = random_checkpoint("emos", step=GRID)
    inputs = [n if n != "Q_mean" else "R_mean" for n in ckpt["inputs"]]
    _checkpoint(case_dir / "ck" / "emos_t850.pt", inputs=inputs)


def truncated_checkpoint(case_dir: Path) -> None:
    """``data/`` and ``ck/emos_t850.pt`` cut to its first 2000 bytes."""
    _data(case_dir)
    path = _checkpoint(case_dir / "ck" / "emos_t850.pt")
    path.write_bytes(path.read_bytes()[:2000])


def data_only(case_dir: Path) -> None:
    """``data/`` without a checkpoints folder."""
    _data(case_dir)


def data_and_checkpoint(case_dir: Path) -> None:
    """``data/`` and a matching ``ck/emos_t850.pt``."""
    _data(case_dir)
    _checkpoint(case_dir / "ck" / "emos_t850.pt")


def truncated_netcdf(case_dir: Path) -> None:
    """``data/`` whose ENS10_pl_mean.nc is cut in half, and a matching checkpoint."""
    data_and_checkpoint(case_dir)
    path = case_dir / "data" / "ENS10_pl_mean.nc"
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) // 2])


def garbage_netcdf(case_dir: Path) -> None:
    """``data/`` whose ENS10_pl_mean.nc is text, and a matching checkpoint."""
    data_and_checkpoint(case_dir)
    (case_dir / "data" / "ENS10_pl_mean.nc").write_text("not a netCDF file\n" * 50)


def xy_dims_netcdf(case_dir: Path) -> None:
    """``data/`` whose ENS10_pl_mean.nc has dims y/x instead of lat/lon, and a checkpoint."""
    data_and_checkpoint(case_dir)
    path = case_dir / "data" / "ENS10_pl_mean.nc"
    with xr.open_dataset(path) as ds:
        ds = ds.load().rename({"lat": "y", "lon": "x"})
    ds.to_netcdf(path)


# -- ens10 preprocess ---------------------------------------------------------------------
def _raw(case_dir: Path) -> Path:
    dst = case_dir / "raw"
    shutil.copytree(_sample(case_dir, "grib", **GRIB) / "grib", dst)
    return dst


def truncated_grib(case_dir: Path) -> None:
    """``raw/``: the GRIB layout of a 2-year sample whose output.pl.20180101 ends inside a
    message."""
    path = _raw(case_dir) / "output.pl.20180101"
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) // 2 + 100])


def grib_missing_year(case_dir: Path) -> None:
    """``raw/``: the GRIB layout of a 2-year sample whose output.pl.20180101 holds only its
    first year's messages (cut at a message boundary: each file is written year by year)."""
    path = _raw(case_dir) / "output.pl.20180101"
    raw = path.read_bytes()
    cut = raw.index(b"GRIB", len(raw) // 2)
    assert raw[cut - 4 : cut] == b"7777", "the cut is not at a message boundary"
    path.write_bytes(raw[:cut])


def garbage_grib(case_dir: Path) -> None:
    """``raw/``: the GRIB layout of a 2-year sample whose output.sfc.20180101 is garbage."""
    path = _raw(case_dir) / "output.sfc.20180101"
    path.write_bytes(bytes((i * 31 + 7) % 256 for i in range(4096)))


# -- fv3 plot -----------------------------------------------------------------------------
def _fv3_like(path: Path, lonlat: bool = True) -> None:
    """A netCDF file shaped like `fv3 run --output` (C4: h on (time, tile, y, x), lon/lat on
    (tile, y, x)) plus ``ps_ll`` on a lon-lat grid."""
    n = 4
    rng = np.random.default_rng(0)
    coords = {"time": ("time", [1.0], {"units": "days since 2000-01-01 00:00:00"})}
    if lonlat:
        lon = np.linspace(0, 359, 6 * n * n).reshape(6, n, n)
        lat = np.linspace(-89, 89, 6 * n * n).reshape(6, n, n)
        area = np.full((6, n, n), 5.1e14 / (6 * n * n))
        coords |= {"lon": (("tile", "y", "x"), lon), "lat": (("tile", "y", "x"), lat),
                   "area": (("tile", "y", "x"), area, {"standard_name": "cell_area"})}  # fmt: skip
    ds = xr.Dataset(
        {"h": (("time", "tile", "y", "x"), rng.uniform(1000, 3000, (1, 6, n, n))),
         "ps_ll": (("time", "lat_ll", "lon_ll"), rng.uniform(9e4, 1e5, (1, 3, 6)))},
        coords=coords,
    )  # fmt: skip
    ds.to_netcdf(path)


def fv3_output(case_dir: Path) -> None:
    """``tc.nc``: a small file in the layout of `fv3 run --output`."""
    _fv3_like(case_dir / "tc.nc")


def fv3_output_without_lonlat(case_dir: Path) -> None:
    """``tc.nc``: an fv3-like file without its lon/lat coordinates."""
    _fv3_like(case_dir / "tc.nc", lonlat=False)


def ens10_netcdf(case_dir: Path) -> None:
    """``ens10.nc``: an ENS-10 file (lat/lon are 1-D axes, no tiles): not an FV3 output."""
    xr.Dataset(
        {"T2M": (("time", "lat", "lon"), np.zeros((1, 7, 12)))},
        coords={"lat": np.linspace(-90, 90, 7), "lon": np.arange(12) * 30.0},
    ).to_netcdf(case_dir / "ens10.nc")


def data_and_checkpoint_readonly(case_dir: Path) -> None:
    """``data/``, a matching ``ck/emos_t850.pt`` and the unwritable folder ``ro``."""
    data_and_checkpoint(case_dir)
    readonly_dir(case_dir)


def fv3_output_readonly(case_dir: Path) -> None:
    """``tc.nc`` (fv3 run layout) and the unwritable folder ``ro``."""
    fv3_output(case_dir)
    readonly_dir(case_dir)

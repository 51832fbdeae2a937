"""Atomic writers: a temporary name beside the target, then a rename (nothing half-written)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import xarray as xr


def temp_path(path: Path) -> Path:
    """A fresh temporary file beside ``path`` (world-readable like a normal output)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    os.chmod(tmp, 0o644)
    return Path(tmp)


def write_netcdf(ds: xr.Dataset, path: Path | str, encoding: dict | None = None) -> Path:
    """Write ``ds`` as netCDF4 to ``path`` atomically; float variables stored as float32."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    enc = {
        name: {"dtype": "float32", "zlib": False}
        for name, var in ds.data_vars.items()
        if var.dtype.kind == "f"
    }
    enc.update(encoding or {})
    tmp = temp_path(path)
    try:
        ds.to_netcdf(tmp, encoding=enc, engine="netcdf4")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def write_text(path: Path | str, text: str) -> Path:
    """Write ``text`` to ``path`` atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_path(path)
    try:
        tmp.write_text(text)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path

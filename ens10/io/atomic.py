"""Atomic writers: a temporary name beside the target, then a rename (nothing half-written)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import xarray as xr

from ens10.errors import ENS10DataError

# ens10's core does not import ``stencils`` (GT4Py); this is the ENS-10 side of
# ``stencils.atomic.atomic_output``.


@contextmanager
def atomic_output(path: Path | str) -> Iterator[Path]:
    """``with atomic_output(path) as tmp:`` -- write ``tmp``, a fresh world-readable file
    beside ``path``; it replaces ``path`` when the block ends without an error and is deleted
    when the block raises (an older ``path`` survives)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        tmp.chmod(0o644)
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def check_output_dir(path: Path | str, what: str = "output folder") -> None:
    """An ENS10DataError naming ``path`` unless it is a folder that can be written, or can be
    created (probed with a temporary file in the nearest existing folder, which is removed)."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ENS10DataError(
            f"{what} {path} is a file: give a folder (it is created if missing)"
        )
    probe = path
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir():
        raise ENS10DataError(f"{what} {path} cannot be created: {probe} is a file, not a folder")
    try:
        fd, name = tempfile.mkstemp(prefix=".stratoflow-write-check.", dir=probe)
    except OSError as exc:
        raise ENS10DataError(
            f"{what} {path} cannot be written ({probe}: {exc.strerror or exc}): choose a "
            "writable folder"
        ) from exc
    os.close(fd)
    os.unlink(name)


def write_text(path: Path | str, text: str) -> Path:
    """Write ``text`` to ``path`` atomically."""
    with atomic_output(path) as tmp:
        tmp.write_text(text)
    return Path(path)


def write_netcdf(ds: xr.Dataset, path: Path | str, encoding: dict | None = None) -> Path:
    """Write ``ds`` as netCDF4 to ``path`` atomically; float variables stored as float32."""
    path = Path(path)
    enc = {
        name: {"dtype": "float32", "zlib": False}
        for name, var in ds.data_vars.items()
        if var.dtype.kind == "f"
    }
    enc.update(encoding or {})
    with atomic_output(path) as tmp:
        ds.to_netcdf(tmp, encoding=enc, engine="netcdf4")
    return path

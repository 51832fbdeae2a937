"""Regular latitude-longitude grids as stored in ENS-10 (latitude north to south in the files)."""

from __future__ import annotations

import math

import numpy as np

from ens10.errors import ENS10DataError


def grid_axes(grid: float) -> tuple[np.ndarray, np.ndarray]:
    """File-order axes of a global regular grid of spacing ``grid`` degrees: latitude 90 -> -90,
    longitude 0 -> 360 - grid (ENS-10 uses 0.5: 361 x 720)."""
    check_grid(grid)
    nlat = 180.0 / grid
    nlon = 360.0 / grid
    lat = np.linspace(90.0, -90.0, int(round(nlat)) + 1)
    lon = np.arange(int(round(nlon))) * grid
    return lat, lon


#: the finest grid spacing of ENS-10 data (and of the sample generator), in degrees
FINEST_GRID = 0.5


def check_grid(grid: float, finest: float | None = None) -> float:
    """``grid`` as a float if it is a positive spacing in degrees (not below ``finest``) that
    divides 180 and 360; an ENS10DataError saying which values to use otherwise."""
    use = "use e.g. 0.5, 1, 2, 2.5, 5, 10 or 30"
    try:
        value = float(grid)
    except (TypeError, ValueError):
        raise ENS10DataError(f"grid spacing {grid!r} is not a number of degrees: {use}") from None
    if not math.isfinite(value) or value <= 0:
        raise ENS10DataError(f"grid spacing {grid} must be a positive number of degrees: {use}")
    if finest is not None and value < finest:
        raise ENS10DataError(f"grid spacing {grid} is finer than ENS-10's {finest} degrees: {use}")
    nlat, nlon = 180.0 / value, 360.0 / value
    if abs(nlat - round(nlat)) > 1e-9 or abs(nlon - round(nlon)) > 1e-9:
        raise ENS10DataError(f"grid spacing {grid} does not divide 180 and 360 degrees: {use}")
    return value


def location_features(lat: np.ndarray, lon: np.ndarray) -> np.ndarray:
    """Smooth location embedding of the reference MLP: sin(lat), cos(lat)sin(lon), cos(lat)cos(lon).

    Returns shape (3, nlat, nlon) for 1-D ``lat``/``lon``.
    """
    la = np.deg2rad(np.asarray(lat, dtype=np.float64))[:, None]
    lo = np.deg2rad(np.asarray(lon, dtype=np.float64))[None, :]
    return np.stack(
        np.broadcast_arrays(np.sin(la), np.cos(la) * np.sin(lo), np.cos(la) * np.cos(lo))
    )

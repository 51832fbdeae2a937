"""Regular latitude-longitude grids as stored in ENS-10 (latitude north to south in the files)."""

from __future__ import annotations

import numpy as np

from ens10.errors import ENS10DataError


def grid_axes(grid: float) -> tuple[np.ndarray, np.ndarray]:
    """File-order axes of a global regular grid of spacing ``grid`` degrees: latitude 90 -> -90,
    longitude 0 -> 360 - grid (ENS-10 uses 0.5: 361 x 720)."""
    nlat = 180.0 / grid
    nlon = 360.0 / grid
    if grid <= 0 or abs(nlat - round(nlat)) > 1e-9 or abs(nlon - round(nlon)) > 1e-9:
        raise ENS10DataError(
            f"grid spacing {grid} does not divide 180 and 360 degrees: use e.g. 0.5, 1, 2, 2.5, 5"
        )
    lat = np.linspace(90.0, -90.0, int(round(nlat)) + 1)
    lon = np.arange(int(round(nlon))) * grid
    return lat, lon


def location_features(lat: np.ndarray, lon: np.ndarray) -> np.ndarray:
    """Smooth location embedding of the reference MLP: sin(lat), cos(lat)sin(lon), cos(lat)cos(lon).

    Returns shape (3, nlat, nlon) for 1-D ``lat``/``lon``.
    """
    la = np.deg2rad(np.asarray(lat, dtype=np.float64))[:, None]
    lo = np.deg2rad(np.asarray(lon, dtype=np.float64))[None, :]
    return np.stack(
        np.broadcast_arrays(np.sin(la), np.cos(la) * np.sin(lo), np.cos(la) * np.cos(lo))
    )

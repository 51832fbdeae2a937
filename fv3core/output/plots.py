"""Lat-lon maps of cubed-sphere fields from an fv3core netCDF file (PNG, Agg backend)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from fv3core.errors import FV3ConfigError
from stencils.atomic import atomic_output


def plot_field(path: str | Path, var: str = "h", output: str | Path | None = None,
               time_index: int = -1) -> Path:  # fmt: skip
    """Draw ``var`` of an fv3core output file on a lon-lat map; returns the PNG path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.tri as mtri
    import xarray as xr

    path = Path(path)
    if not path.exists():
        raise FV3ConfigError(f"output file {path} does not exist: run `stratoflow fv3 run` first")
    with xr.open_dataset(path) as ds:
        if var not in ds.data_vars:
            raise FV3ConfigError(
                f"{path}: no variable {var!r}; variables are {sorted(ds.data_vars)}"
            )
        da = ds[var].isel(time=time_index)
        values = da.values.ravel()
        lon = ds["lon"].values.ravel()
        lat = ds["lat"].values.ravel()
        units = da.attrs.get("units", "")
        title = f"{ds.attrs.get('title', path.stem)}: {var} at {ds['time'].values[time_index]}"
    lon = np.where(lon > 180.0, lon - 360.0, lon)
    # duplicate points near the date line so the triangulation wraps around
    wrap = np.abs(lon) > 150.0
    lon = np.concatenate([lon, lon[wrap] - 360.0 * np.sign(lon[wrap])])
    lat = np.concatenate([lat, lat[wrap]])
    values = np.concatenate([values, values[wrap]])
    tri = mtri.Triangulation(lon, lat)
    fig, ax = plt.subplots(figsize=(10, 5), dpi=100)
    pc = ax.tripcolor(tri, values, shading="gouraud", cmap="viridis")
    fig.colorbar(pc, ax=ax, label=f"{var} ({units})" if units else var)
    ax.set_xlim(-180, 180)
    ax.set_ylim(-90, 90)
    ax.set_xlabel("longitude (degrees east)")
    ax.set_ylabel("latitude (degrees north)")
    ax.set_title(title)
    out = Path(output) if output else path.with_name(f"{path.stem}_{var}.png")
    try:
        with atomic_output(out) as tmp:
            fig.savefig(tmp, format="png", bbox_inches="tight")
    finally:
        plt.close(fig)
    return out

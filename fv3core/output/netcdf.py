"""The result of a run as CF-style netCDF (:func:`write_netcdf`), written atomically."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from fv3core.experiments.driver import RunResult
from stencils.atomic import atomic_output

#: units and long names of the output fields
FIELD_ATTRS: dict[str, tuple[str, str]] = {
    "h": ("m", "fluid depth / transported height (TC1); free-surface height h + h_s (TC2, 5, 6)"),
    "h_exact": ("m", "analytic solution"),
    "h_initial": ("m", "free-surface height at t = 0"),
    "depth": ("m", "fluid depth"),
    "surface": ("m", "bottom topography h_s"),
    "u": ("m s-1", "eastward wind (A-grid, from the D-grid winds)"),
    "v": ("m s-1", "northward wind (A-grid, from the D-grid winds)"),
    "vorticity": ("s-1", "absolute vorticity (D-grid circulation / area + f)"),
    "ps": ("Pa", "surface pressure"),
    "ps_initial": ("Pa", "surface pressure at t = 0"),
    "t850": ("K", "temperature at 850 hPa (FV3's cs3_interpolator in ln p)"),
    "u850": ("m s-1", "eastward wind at 850 hPa (FV3's cs3_interpolator in p)"),
    "v850": ("m s-1", "northward wind at 850 hPa (FV3's cs3_interpolator in p)"),
    "vort850": ("s-1", "relative vorticity at 850 hPa (D-grid circulation, in ln p)"),
    "sphum_column": ("kg m-2", "column burden of the tracer sphum"),
    "checker_column": ("kg m-2", "column burden of FV3's checkerboard tracer"),
    "w": ("m s-1", "vertical velocity (non-hydrostatic core)"),
    "delz": ("m", "layer thickness (FV3's diagnostic delz, minus its state's; non-hydrostatic core)"),
}
#: output fields on the regular lon-lat grid carry this suffix (dims lat, lon)
LATLON_SUFFIX = "_latlon"



def write_netcdf(result: RunResult, path: str | Path) -> Path:
    """CF-style netCDF (dims time, tile, y, x; lon/lat of cell centres), written atomically."""
    import xarray as xr

    path = Path(path)
    cfg = result.config
    t_end = result.steps * result.dt
    dims = ("time", "tile", "y", "x")

    def var(a: np.ndarray, units: str, long_name: str, **extra: str) -> xr.Variable:
        # global arrays are [tile, i, j] = [tile, x, y] or, on the model layers, [tile, i, j, k];
        # CF order is (tile, y, x) and (layer, tile, y, x)
        attrs = {"units": units, "long_name": long_name, **extra}
        if a.ndim == 4:
            return xr.Variable(("time", "layer", *dims[1:]), a.transpose(3, 0, 2, 1)[None], attrs)
        return xr.Variable(dims, a.transpose(0, 2, 1)[None], attrs)

    tiles = {n: a for n, a in result.fields.items() if not n.endswith(LATLON_SUFFIX)}
    data = {name: var(a, *FIELD_ATTRS.get(name, ("1", name))) for name, a in tiles.items()}
    latlon = {n: a for n, a in result.fields.items() if n.endswith(LATLON_SUFFIX)}
    coords_ll: dict[str, tuple] = {}
    if latlon:
        from fv3core.grid.latlon_regrid import regular_lonlat

        nlat, nlon = next(iter(latlon.values())).shape
        lon_ll, lat_ll = regular_lonlat(nlon, nlat)
        coords_ll = {"lon_ll": ("lon_ll", lon_ll, {"units": "degrees_east",
                                                  "standard_name": "longitude"}),
                     "lat_ll": ("lat_ll", lat_ll, {"units": "degrees_north",
                                                  "standard_name": "latitude"})}  # fmt: skip
        for name, a in latlon.items():
            units, long_name = FIELD_ATTRS.get(name[: -len(LATLON_SUFFIX)], ("1", name))
            data[name] = xr.Variable(("time", "lat_ll", "lon_ll"), a[None], {
                "units": units, "long_name": f"{long_name}, linearly interpolated to a regular "
                "lon-lat grid"})  # fmt: skip
    layers = {a.shape[3] for a in tiles.values() if a.ndim == 4}
    layer_coords = ({"layer": ("layer", np.arange(1, layers.pop() + 1),
                               {"long_name": "model layer, 1 = the top (FV3's k)", "positive": "down"})}
                    if layers else {})  # fmt: skip
    ds = xr.Dataset(
        data,
        coords={
            "time": ("time", [t_end / 86400.0], {"units": "days since 2000-01-01 00:00:00",
                                                  "standard_name": "time", "calendar": "standard"}),
            "tile": ("tile", np.arange(6), {"long_name": "cubed-sphere tile (FV3 tile - 1)"}),
            "lon": (("tile", "y", "x"), result.lon.transpose(0, 2, 1),
                    {"units": "degrees_east", "standard_name": "longitude"}),
            "lat": (("tile", "y", "x"), result.lat.transpose(0, 2, 1),
                    {"units": "degrees_north", "standard_name": "latitude"}),
            "area": (("tile", "y", "x"), result.area.transpose(0, 2, 1),
                     {"units": "m2", "standard_name": "cell_area"}),
            **coords_ll,
            **layer_coords,
        },  # fmt: skip
        attrs={
            "Conventions": "CF-1.8",
            "title": f"stratoflow fv3core {cfg.case} C{cfg.resolution}",
            "source": "stratoflow fv3core (FV3's "
            + ("hydrostatic 3-D core" if cfg.is_3d else "shallow-water core") + ", GT4Py)",
            "config": repr(cfg.to_dict()),
            **{f"diag_{k}": v for k, v in result.diagnostics.items()},
        },
    )
    for name in tiles:
        ds[name].attrs["coordinates"] = "lon lat"
        ds[name].attrs["cell_measures"] = "area: area"
    with atomic_output(path) as tmp:
        ds.to_netcdf(tmp)
    return path

"""PNG plots of the Jablonowski-Williamson baroclinic wave (matplotlib, Agg backend), in the
layout of JW06's surface-pressure and vorticity maps (Jablonowski & Williamson 2006, QJRMS
132): Northern Hemisphere maps, longitude 0..360 E on the x axis, latitude 20..90 N on the y
axis (equal degrees), of

* the surface pressure ``ps`` in hPa, filled contours every 4 hPa by default (a coarser "nice"
  step, 5, 10, 20... hPa, when the range needs more than 24 intervals), and
* the 850 hPa relative vorticity in 1e-5 s^-1, filled contours every 5e-5 s^-1 by default
  (coarser steps likewise);

the colour bands are centred on multiples of the interval (edges at ``(m +- 1/2) step``), so a
flat field at a multiple (1000 hPa, zero vorticity) lies mid-band and round-off cannot stripe
it; black lines mark the band edges.  The intervals are chosen to resemble JW06's maps, not
copied from them: pass ``ps_levels`` / ``vort_levels`` (band edges) for exact ones;

one column per day, one row per field (:func:`plot_baroclinic_days`), and of a time series such
as the steady-state ``l2`` norm of the zonal-mean wind change against day, log scale, with an
optional published reference band (:func:`plot_time_series`).

Inputs are lat-lon fields ``(nlat, nlon)`` ``[lat, lon]`` (1-D ``lon``, ``lat`` in degrees) or,
with a :class:`~fv3core.grid.latlon_regrid.LatLonRegridder`, cubed-sphere fields ``(6, N, N)``
that are regridded first.  Figures have a fixed size (``width_in x height_in`` at ``dpi``, no
tight bounding box), so the PNG's pixel size is known; files are written atomically
(:func:`stencils.atomic.atomic_output`).  Bad input raises :class:`FV3ConfigError` naming it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from fv3core.errors import FV3ConfigError
from stencils.atomic import atomic_output

#: inches per map panel (width, height) and the figure resolution
PANEL_SIZE_IN = (4.5, 2.4)
DPI = 100
#: the time-series figure (inches)
SERIES_SIZE_IN = (8.0, 5.0)
#: JW06's default contour intervals: ps in hPa, vorticity in 1e-5 s^-1
PS_INTERVAL_HPA = 4.0
VORT_INTERVAL = 5.0
_NICE = (1.0, 2.0, 2.5, 4.0, 5.0, 10.0, 20.0, 25.0, 50.0, 100.0)


def panel_figure_size(ndays: int, dpi: int = DPI) -> tuple[int, int]:
    """Pixel size (width, height) of :func:`plot_baroclinic_days` with ``ndays`` columns."""
    return (round(PANEL_SIZE_IN[0] * ndays * dpi), round(PANEL_SIZE_IN[1] * 2 * dpi))


def contour_levels(values: Sequence[np.ndarray], interval: float, max_intervals: int = 24
                   ) -> np.ndarray:  # fmt: skip
    """Band edges ``(m + 1/2) step`` spanning all ``values``, ``step`` = ``interval`` or the
    next coarser "nice" step, so that there are at most ``max_intervals`` bands: each band is
    centred on a multiple of ``step``."""
    lo = min(float(np.nanmin(v)) for v in values)
    hi = max(float(np.nanmax(v)) for v in values)
    step = interval
    for nice in sorted({round(n * 10.0**e, 9) for e in range(-3, 6) for n in _NICE}):
        if nice >= interval * (1.0 - 1e-12) and (hi - lo) / nice <= max_intervals:
            step = nice
            break
    first, last = math.floor(lo / step + 0.5), math.floor(hi / step + 0.5)  # nearest multiples
    return (np.arange(first, last + 2) - 0.5) * step


def _latlon(name: str, a: np.ndarray, lon: np.ndarray, lat: np.ndarray, regridder) -> np.ndarray:
    a = np.asarray(a, dtype=np.float64)
    if regridder is not None and a.ndim == 3:
        if a.shape != tuple(regridder.source_shape):
            raise FV3ConfigError(f"{name} has shape {a.shape}; the regridder takes cell fields "
                                 f"{tuple(regridder.source_shape)}")  # fmt: skip
        a = regridder(a)
    if a.shape != (len(lat), len(lon)):
        raise FV3ConfigError(f"{name} has shape {a.shape}; expected (nlat, nlon) = "
                             f"{(len(lat), len(lon))} (lat-lon) or (6, N, N) with a regridder")  # fmt: skip
    if not np.all(np.isfinite(a)):
        raise FV3ConfigError(f"{name} holds {int(np.sum(~np.isfinite(a)))} NaN/inf values")
    return a


def _grid(lon, lat, regridder) -> tuple[np.ndarray, np.ndarray]:
    if regridder is not None:
        if lon is not None or lat is not None:
            raise FV3ConfigError("pass either a regridder or lon/lat, not both")
        return (np.asarray(regridder.lon, dtype=np.float64),
                np.asarray(regridder.lat, dtype=np.float64))
    if lon is None or lat is None:
        raise FV3ConfigError("pass lon and lat (1-D, degrees) of the lat-lon fields, or a "
                             "LatLonRegridder for cubed-sphere fields")  # fmt: skip
    lon, lat = np.asarray(lon, dtype=np.float64), np.asarray(lat, dtype=np.float64)
    if lon.ndim != 1 or lat.ndim != 1 or lon.size < 2 or lat.size < 2:
        raise FV3ConfigError(f"lon {lon.shape} and lat {lat.shape} must be 1-D with >= 2 points")
    if np.any(np.diff(lon) <= 0) or np.any(np.diff(lat) <= 0):
        raise FV3ConfigError("lon and lat must increase (lon 0..360 E, lat south to north)")
    return lon, lat


def _wrap(lon: np.ndarray, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Longitudes in [0, 360) sorted, the first column repeated at +360 (cyclic contours)."""
    lon = np.mod(lon, 360.0)
    order = np.argsort(lon, kind="stable")
    lon, a = lon[order], a[:, order]
    return np.append(lon, lon[0] + 360.0), np.concatenate([a, a[:, :1]], axis=1)


def select_days(panels: Sequence[tuple[float, np.ndarray, np.ndarray]],
                days: Sequence[float] | None) -> list[tuple[float, np.ndarray, np.ndarray]]:  # fmt: skip
    """The panels of ``days`` (matched to 1e-6 day), in that order; all when ``days`` is None."""
    panels = list(panels)
    if not panels:
        raise FV3ConfigError("no panels: pass a list of (day, ps, vort850)")
    for i, p in enumerate(panels):
        if len(p) != 3:
            raise FV3ConfigError(f"panel {i} has {len(p)} items; expected (day, ps, vort850)")
        if not math.isfinite(float(p[0])):
            raise FV3ConfigError(f"panel {i}: day {p[0]!r} is not a finite number")
    if days is None:
        return panels
    chosen = []
    have = [float(p[0]) for p in panels]
    for d in days:
        hits = [p for p in panels if abs(float(p[0]) - float(d)) <= 1e-6]
        if not hits:
            raise FV3ConfigError(f"no panel for day {d}; the panels have days {have}")
        chosen.append(hits[0])
    return chosen


def plot_baroclinic_days(output: str | Path,
                         panels: Sequence[tuple[float, np.ndarray, np.ndarray]], *,
                         days: Sequence[float] | None = (7, 9, 10),
                         lon: np.ndarray | None = None, lat: np.ndarray | None = None,
                         regridder=None, lat_min: float = 20.0,
                         ps_levels: np.ndarray | None = None,
                         vort_levels: np.ndarray | None = None, title: str | None = None,
                         dpi: int = DPI) -> Path:  # fmt: skip
    """JW06-style maps of ``ps`` (hPa, top row) and the 850 hPa relative vorticity
    (1e-5 s^-1, bottom row) for ``days`` (one column each) of ``panels`` = ``[(day, ps in Pa,
    vort850 in 1/s), ...]``; written to ``output`` (PNG, :func:`panel_figure_size` pixels).

    ``ps_levels`` (hPa), ``vort_levels`` (1e-5 s^-1) override the shared default levels
    (:func:`contour_levels` every :data:`PS_INTERVAL_HPA`, :data:`VORT_INTERVAL`)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    _png(output)
    chosen = select_days(panels, days)
    lon, lat = _grid(lon, lat, regridder)
    if not -90.0 <= lat_min < 90.0 or lat.max() <= lat_min:
        raise FV3ConfigError(f"lat_min={lat_min}: must lie in [-90, 90) below the grid's "
                             f"northernmost latitude {lat.max()}")  # fmt: skip
    rows = lat >= lat_min - (lat[1] - lat[0])  # one row of margin below the view
    ps_maps, vort_maps = [], []
    for day, ps, vort in chosen:
        ps = _latlon(f"ps of day {day}", ps, lon, lat, regridder)
        vort = _latlon(f"vort850 of day {day}", vort, lon, lat, regridder)
        if np.any(ps <= 0.0) or float(np.max(ps)) < 2.0e3:
            raise FV3ConfigError(f"ps of day {day} ranges {ps.min()}..{ps.max()}: expected Pa "
                                 f"(about 1e5), positive")  # fmt: skip
        if float(np.max(np.abs(vort))) > 1.0:
            raise FV3ConfigError(f"vort850 of day {day} reaches {np.max(np.abs(vort))}: expected "
                                 f"1/s (about 1e-4), not 1e-5 s^-1 units")  # fmt: skip
        ps_maps.append(_wrap(lon, ps[rows] / 100.0))
        vort_maps.append(_wrap(lon, vort[rows] / 1e-5))
    lat_v = lat[rows]
    ps_lv = (np.asarray(ps_levels, dtype=np.float64) if ps_levels is not None
             else contour_levels([m[1] for m in ps_maps], PS_INTERVAL_HPA))  # fmt: skip
    vo_lv = (np.asarray(vort_levels, dtype=np.float64) if vort_levels is not None
             else contour_levels([m[1] for m in vort_maps], VORT_INTERVAL))  # fmt: skip
    for name, lv in (("ps_levels", ps_lv), ("vort_levels", vo_lv)):
        if lv.ndim != 1 or lv.size < 2 or np.any(np.diff(lv) <= 0):
            raise FV3ConfigError(f"{name} must be >= 2 increasing values, got {lv}")
    ncol = len(chosen)
    fig, axes = plt.subplots(2, ncol, figsize=(PANEL_SIZE_IN[0] * ncol, PANEL_SIZE_IN[1] * 2),
                             dpi=dpi, squeeze=False, layout="constrained")  # fmt: skip
    try:
        for col, (day, _, _) in enumerate(chosen):
            for row, (maps, lv, cmap, label) in enumerate((
                    (ps_maps, ps_lv, "viridis", "surface pressure (hPa)"),
                    (vort_maps, vo_lv, "RdBu_r", "850 hPa rel. vorticity (1e-5 s-1)"))):  # fmt: skip
                ax = axes[row, col]
                x, z = maps[col]
                cf = ax.contourf(x, lat_v, z, levels=lv, cmap=cmap, extend="both")
                ax.contour(x, lat_v, z, levels=lv, colors="k", linewidths=0.3)
                ax.set_xlim(0.0, 360.0)
                ax.set_ylim(lat_min, 90.0)
                ax.set_xticks(np.arange(0, 361, 60))
                ax.set_yticks(np.arange(math.ceil(lat_min / 20.0) * 20, 91, 20))
                ax.set_title(f"day {day:g}: {label}", fontsize=8)
                ax.tick_params(labelsize=7)
                if col == ncol - 1:
                    fig.colorbar(cf, ax=axes[row, :].tolist(), shrink=0.9)
            axes[1, col].set_xlabel("longitude (degrees east)", fontsize=7)
        for row in range(2):
            axes[row, 0].set_ylabel("latitude (degrees north)", fontsize=7)
        if title:
            fig.suptitle(title, fontsize=9)
        return _save(fig, output)
    finally:
        plt.close(fig)


def plot_time_series(output: str | Path, days: Sequence[float], values: Sequence[float], *,
                     label: str = "fv3core", ylabel: str = "l2(ubar - ubar0) (m s-1)",
                     title: str | None = None, log: bool = True,
                     reference: tuple[Sequence[float], Sequence[float], Sequence[float]]
                     | None = None,
                     reference_label: str = "published range",
                     others: Sequence[tuple[str, Sequence[float], Sequence[float]]] = (),
                     dpi: int = DPI) -> Path:  # fmt: skip
    """``values`` against ``days`` (log y axis unless ``log=False``), with an optional shaded
    ``reference`` band ``(days, lower, upper)`` and further lines ``others`` ``(label, days,
    values)`` drawn broad and light beneath it; a :data:`SERIES_SIZE_IN` figure at ``dpi``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    _png(output)
    d, v = np.asarray(days, dtype=np.float64), np.asarray(values, dtype=np.float64)
    if d.ndim != 1 or d.shape != v.shape or d.size == 0:
        raise FV3ConfigError(f"days {d.shape} and values {v.shape} must be 1-D of one length > 0")
    if not (np.all(np.isfinite(d)) and np.all(np.isfinite(v))):
        raise FV3ConfigError("days and values must be finite (no NaN/inf)")
    extra = [(name, np.asarray(od, dtype=np.float64), np.asarray(ov, dtype=np.float64))
             for name, od, ov in others]  # fmt: skip
    for name, od, ov in extra:
        if od.ndim != 1 or od.shape != ov.shape or od.size == 0 or not np.all(np.isfinite(ov)):
            raise FV3ConfigError(f"line {name!r}: days {od.shape} and values {ov.shape} must be "
                                 f"finite, 1-D and of one length > 0")  # fmt: skip
    if log and any(np.any(lv <= 0.0) for lv in (v, *(ov for _, _, ov in extra))):
        raise FV3ConfigError(f"values must be > 0 on a log axis (minimum {v.min()}): pass "
                             f"log=False")  # fmt: skip
    band = None
    if reference is not None:
        if len(reference) != 3:
            raise FV3ConfigError("reference must be (days, lower, upper)")
        band = [np.asarray(r, dtype=np.float64) for r in reference]
        if any(b.ndim != 1 or b.shape != band[0].shape for b in band) or band[0].size == 0:
            raise FV3ConfigError(f"reference (days, lower, upper) must be 1-D of one length, "
                                 f"got {[b.shape for b in band]}")  # fmt: skip
        if np.any(band[1] > band[2]) or (log and np.any(band[1] <= 0.0)):
            raise FV3ConfigError("reference: lower must be <= upper (and > 0 on a log axis)")
    fig, ax = plt.subplots(figsize=SERIES_SIZE_IN, dpi=dpi, layout="constrained")
    try:
        if band is not None:
            ax.fill_between(band[0], band[1], band[2], color="0.8", label=reference_label)
        for name, ld, lv in extra:  # under the main line: broad and light
            ax.plot(ld, lv, "-", lw=4, alpha=0.45, label=name)
        ax.plot(d, v, "o-", ms=3, label=label)
        if log:
            ax.set_yscale("log")
        ax.set_xlabel("day")
        ax.set_ylabel(ylabel)
        ax.grid(True, which="both", lw=0.3)
        ax.legend()
        if title:
            ax.set_title(title)
        return _save(fig, output)
    finally:
        plt.close(fig)


def _png(output: str | Path) -> Path:
    out = Path(output)
    if out.suffix.lower() != ".png":
        raise FV3ConfigError(f"output {out}: the plots are PNG files, name it *.png")
    return out


def _save(fig, output: str | Path) -> Path:
    out = _png(output)
    with atomic_output(out) as tmp:
        fig.savefig(tmp, format="png")
    return out

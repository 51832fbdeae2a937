"""fv3core.output.baroclinic_plots: the JW06-style maps and the time-series plot are written as PNG files
of the expected pixel size, from lat-lon fields and from cubed-sphere fields with a regridder;
bad input raises FV3ConfigError naming the problem."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from fv3core.errors import FV3ConfigError
from fv3core.grid.latlon_regrid import LatLonRegridder, regular_lonlat
from fv3core.output.baroclinic_plots import (
    DPI,
    SERIES_SIZE_IN,
    contour_levels,
    panel_figure_size,
    plot_baroclinic_days,
    plot_time_series,
)

LON, LAT = regular_lonlat(90, 45)


def _png_size(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def _wave(day, lon=LON, lat=LAT):
    lon2, lat2 = np.meshgrid(lon, lat) if np.ndim(lon) == 1 else (lon, lat)
    shape = np.exp(-(((lat2 - 50.0) / 12.0) ** 2)) * np.cos(np.deg2rad(8 * (lon2 - 10 * day)))
    return 1.0e5 - 1.0e3 * day * shape, 1.0e-5 * day * shape


def test_days_7_9_10_from_latlon_fields(tmp_path):
    panels = [(d, *_wave(d)) for d in (6, 7, 8, 9, 10)]
    out = plot_baroclinic_days(tmp_path / "jw" / "days.png", panels, lon=LON, lat=LAT,
                               title="JW06 baroclinic wave", dpi=60)  # fmt: skip
    assert out.stat().st_size > 10_000
    assert _png_size(out) == panel_figure_size(3, dpi=60) == (810, 288)
    assert panel_figure_size(3) == (1350, 480)
    assert not list(out.parent.glob(".*.tmp"))  # written atomically, nothing left over


def test_from_cubed_sphere_fields_with_a_regridder(tmp_path):
    from fv3core.grid.metric_terms import CubedSphere

    cube = CubedSphere.build(12, radius=6.3712e6, omega=7.2921e-5)
    regrid = LatLonRegridder.from_cube(cube, nlon=72, nlat=36)
    h = cube.n_halo
    agrid = np.rad2deg(cube.fields["agrid"][:, h : h + 12, h : h + 12])
    ps, vort = _wave(9, agrid[..., 0], agrid[..., 1])
    out = plot_baroclinic_days(tmp_path / "c12.png", [(9.0, ps, vort)], days=[9],
                               regridder=regrid, ps_levels=np.arange(988, 1013, 4))  # fmt: skip
    assert _png_size(out) == panel_figure_size(1) and out.stat().st_size > 5_000


def test_time_series_with_reference_band(tmp_path):
    days = np.arange(0, 31, 1.0)
    l2 = 1e-3 * (1 + days)
    out = plot_time_series(tmp_path / "l2.png", days, l2,
                           reference=(days, 0.5 * l2, 2.0 * l2), title="steady state")  # fmt: skip
    assert _png_size(out) == (round(SERIES_SIZE_IN[0] * DPI), round(SERIES_SIZE_IN[1] * DPI))
    assert out.stat().st_size > 10_000
    lone = plot_time_series(tmp_path / "one.png", days, l2)
    both = plot_time_series(tmp_path / "two.png", days, l2, others=[("other", days, 2.0 * l2)])
    assert _png_size(both) == _png_size(lone) and both.read_bytes() != lone.read_bytes()


def test_contour_levels():
    # bands centred on multiples of 4 hPa: edges 990, 994, ..., 1010
    lv = contour_levels([np.array([991.3, 1008.2])], 4.0)
    np.testing.assert_array_equal(lv, np.arange(990.0, 1010.1, 4.0))
    coarse = contour_levels([np.array([900.0, 1030.0])], 4.0)  # 130 hPa: 10 hPa steps
    assert np.all(np.diff(coarse) == 10.0) and coarse[0] == 895.0 and coarse[-1] == 1035.0
    flat = contour_levels([np.zeros(5)], 5.0)  # a flat zero field sits mid-band
    np.testing.assert_array_equal(flat, [-2.5, 2.5])


@pytest.mark.parametrize("kwargs, match", [
    ({"days": (7, 11)}, r"no panel for day 11; the panels have days \[7.0, 9.0, 10.0\]"),
    ({"lon": LON[:-1]}, r"vort850|ps of day 7 has shape"),
    ({"lon": None}, "pass lon and lat"),
    ({"lat_min": 95.0}, "lat_min"),
    ({"ps_levels": [1000.0]}, "ps_levels"),
])
def test_map_refusals(tmp_path, kwargs, match):
    panels = [(d, *_wave(d)) for d in (7, 9, 10)]
    args = {"lon": LON, "lat": LAT, **kwargs}
    with pytest.raises(FV3ConfigError, match=match):
        plot_baroclinic_days(tmp_path / "bad.png", panels, **args)
    assert not (tmp_path / "bad.png").exists()


def test_field_refusals(tmp_path):
    ps, vort = _wave(7)
    cases = [
        ([], "no panels"),
        ([(7, ps)], "expected \\(day, ps, vort850\\)"),
        ([(7, ps / 100.0, vort)], "expected Pa"),
        ([(7, ps, vort * 1e5)], "expected 1/s"),
        ([(7, np.where(ps > 99_900, np.nan, ps), vort)], "NaN"),
    ]
    for panels, match in cases:
        with pytest.raises(FV3ConfigError, match=match):
            plot_baroclinic_days(tmp_path / "bad.png", panels, days=None, lon=LON, lat=LAT)
    with pytest.raises(FV3ConfigError, match=r"\*.png"):
        plot_baroclinic_days(tmp_path / "bad.pdf", [(7, ps, vort)], days=None, lon=LON, lat=LAT)
    with pytest.raises(FV3ConfigError, match="log axis"):
        plot_time_series(tmp_path / "s.png", [0, 1], [0.0, 1.0])
    with pytest.raises(FV3ConfigError, match="one length"):
        plot_time_series(tmp_path / "s.png", [0, 1], [1.0])
    with pytest.raises(FV3ConfigError, match="line 'x'.*finite"):
        plot_time_series(tmp_path / "s.png", [0, 1], [1.0, 2.0], others=[("x", [0, 1], [1.0, np.nan])])
    with pytest.raises(FV3ConfigError, match="log axis"):
        plot_time_series(tmp_path / "s.png", [0, 1], [1.0, 2.0], others=[("x", [0, 1], [1.0, -1.0])])
    with pytest.raises(FV3ConfigError, match="lower must be <= upper"):
        plot_time_series(tmp_path / "s.png", [0, 1], [1.0, 2.0], reference=([0, 1], [2, 2], [1, 1]))

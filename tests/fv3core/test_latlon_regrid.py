"""fv3core.grid.latlon_regrid: linear interpolation from FV3's C24/C48 cell centres to 1x1
degree: second-order errors for smooth fields (also a bump on the North Pole and one on a cube
corner), constants bit for bit, no NaN at the poles or the date line, refusals."""

from __future__ import annotations

import numpy as np
import pytest

from fv3core.errors import FV3ConfigError
from fv3core.grid.latlon_regrid import LatLonRegridder, regular_lonlat, unit_vectors
from fv3core.grid.metric_terms import CubedSphere


@pytest.fixture(scope="module")
def grids():
    out = {}
    for n in (24, 48):
        cube = CubedSphere.build(n, radius=6.3712e6, omega=7.2921e-5)
        h = cube.n_halo
        agrid = np.rad2deg(cube.fields["agrid"][:, h : h + n, h : h + n])
        corner = np.rad2deg(cube.fields["grid"][0, h, h])  # tile 1's (1, 1) corner, lon/lat
        out[n] = (agrid[..., 0], agrid[..., 1], LatLonRegridder.from_cube(cube), corner)
    return out


def _cos_cos(lon, lat):
    return np.cos(np.deg2rad(lat)) * np.cos(np.deg2rad(lon))


def _bump(lon, lat, centre, width_deg=15.0):
    d = np.arccos(np.clip(unit_vectors(lon, lat) @ unit_vectors(*centre), -1.0, 1.0))
    return np.exp(-((d / np.deg2rad(width_deg)) ** 2))


def _max_error(grids, n, f):
    lon, lat, regrid, _ = grids[n]
    tlon, tlat = np.meshgrid(regrid.lon, regrid.lat)
    got = regrid(f(lon, lat))
    assert got.shape == (180, 360) and not np.any(np.isnan(got))
    return float(np.max(np.abs(got - f(tlon, tlat))))


def test_second_order_for_smooth_fields(grids):
    corner = grids[24][3]
    errors = {}
    for name, f, bound24 in (
        ("cos(lat) cos(lon)", _cos_cos, 1.5e-3),
        ("bump on the North Pole", lambda lo, la: _bump(lo, la, (0.0, 90.0)), 4.5e-2),
        ("bump on a cube corner", lambda lo, la: _bump(lo, la, tuple(corner)), 4.5e-2),
    ):
        e24, e48 = _max_error(grids, 24, f), _max_error(grids, 48, f)
        errors[name] = (e24, e48)
        assert e24 < bound24, (name, e24)
        assert e48 < bound24 / 3.5, (name, e48)
        assert e24 / e48 > 3.5, (name, e24, e48)  # second order: 4 when h halves
    print(errors)


def test_constants_bit_for_bit_and_trailing_axes(grids):
    lon, lat, regrid, _ = grids[24]
    assert np.all(regrid(np.full(lon.shape, 101325.0)) == 101325.0)
    levels = np.stack([_cos_cos(lon, lat), lat, np.full(lon.shape, -2.5)], axis=-1)
    got = regrid(levels)
    assert got.shape == (180, 360, 3)
    for k in range(3):
        np.testing.assert_array_equal(got[..., k], regrid(levels[..., k]))
    assert np.all(got[..., 2] == -2.5)
    w = regrid.weights
    assert np.all(w >= 0.0) and np.all(w.sum(axis=-1) <= 1.0)


def test_poles_and_date_line(grids):
    lon, lat, _, _ = grids[48]
    tlon = np.array([-180.0, 0.0, 179.999, 180.0, 359.999, 360.0])
    tlat = np.array([-90.0, -89.999, 0.0, 89.999, 90.0])
    regrid = LatLonRegridder.build(lon, lat, target_lon=tlon, target_lat=tlat)
    got = regrid(_cos_cos(lon, lat))
    assert not np.any(np.isnan(got))
    want = _cos_cos(*np.meshgrid(tlon, tlat))
    assert np.max(np.abs(got - want)) < 3.5e-4
    # a field smooth through the poles: z = sin(lat), its pole values
    z = regrid(np.sin(np.deg2rad(lat)))
    np.testing.assert_allclose(z[[0, -1]], [[-1.0] * 6, [1.0] * 6], atol=5e-4)  # chordal O(h^2)
    # the same value on both sides of the date line
    np.testing.assert_allclose(got[:, 0], got[:, 3], atol=1e-15)
    np.testing.assert_allclose(got[:, 1], got[:, 5], atol=1e-15)


def test_regular_grid_and_refusals(grids):
    lon, lat, regrid, _ = grids[24]
    tlon, tlat = regular_lonlat(360, 180)
    assert tlon[0] == 0.5 and tlon[-1] == 359.5 and tlat[0] == -89.5 and tlat[-1] == 89.5
    np.testing.assert_array_equal(regrid.lon, tlon)
    with pytest.raises(FV3ConfigError, match=r"\(6, N, N\)"):
        LatLonRegridder.build(lon[:5], lat[:5])
    with pytest.raises(FV3ConfigError, match="radians"):
        LatLonRegridder.build(lon, lat * 3.0)
    with pytest.raises(FV3ConfigError, match="both"):
        LatLonRegridder.build(lon, lat, target_lon=tlon)
    with pytest.raises(FV3ConfigError, match="built for cells"):
        regrid(np.zeros((6, 48, 48)))

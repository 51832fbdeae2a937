"""fv3core.validation.baroclinic_norms against analytic values: JW06's zonal-mean wind l2 norm,
ps extrema and their places, dry air and tracer mass, FV3's hydrostatic total energy of an
isothermal column (and its D-grid kinetic energy on a skewed grid), FV3's printed extrema
(prt_mxm) of hand-built fields."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fv3core.constants import UFS
from fv3core.errors import FV3ConfigError
from fv3core.grid.latlon_regrid import regular_lonlat
from fv3core.validation import baroclinic_norms as bn

LON, LAT = regular_lonlat(72, 180)


def _u0(npz=4):
    lat = np.deg2rad(LAT)[:, None, None]
    return 35.0 * np.sin(2 * lat) ** 2 * np.ones((1, LON.size, npz)) * np.arange(1, npz + 1)


def test_zonal_mean_wind_l2():
    u0, dp = _u0(), np.array([1.0, 2.0, 3.0, 4.0])
    assert bn.zonal_mean_wind_l2(u0, u0, LAT, dp) == 0.0
    assert bn.zonal_mean_wind_l2(u0 + 0.7, u0, LAT, dp) == pytest.approx(0.7, rel=1e-14)
    # a wave with zero zonal mean does not count
    wave = 5.0 * np.cos(np.deg2rad(3 * LON))[None, :, None]
    assert bn.zonal_mean_wind_l2(u0 + wave, u0, LAT, dp) < 1e-13
    # sin(lat): sqrt(int sin^2 cos / int cos) = 1/sqrt(3) (midpoint rule on 1-degree rows)
    s = np.sin(np.deg2rad(LAT))[:, None, None] * np.ones(u0.shape)
    assert bn.zonal_mean_wind_l2(u0 + s, u0, LAT, dp) == pytest.approx(3**-0.5, rel=2e-5)
    # level weights: a change on the bottom level only, dp or full (nlat, nlon, npz) thickness
    d = np.zeros(u0.shape)
    d[..., 3] = 2.0
    want = 2.0 * math.sqrt(4.0 / 10.0)
    assert bn.zonal_mean_wind_l2(u0 + d, u0, LAT, dp) == pytest.approx(want, rel=1e-14)
    full = np.broadcast_to(dp, u0.shape) * 1e3
    assert bn.zonal_mean_wind_l2(u0 + d, u0, LAT, full) == pytest.approx(want, rel=1e-14)
    with pytest.raises(FV3ConfigError, match="lat has shape"):
        bn.zonal_mean_wind_l2(u0, u0, LAT[:-1], dp)
    with pytest.raises(FV3ConfigError, match="dp has shape"):
        bn.zonal_mean_wind_l2(u0, u0, LAT, dp[:2])
    with pytest.raises(FV3ConfigError, match="nlat, nlon, npz"):
        bn.zonal_mean_wind_l2(u0[..., 0], u0[..., 0], LAT, dp)


def test_extrema_and_their_places():
    lon2, lat2 = np.meshgrid(LON, LAT)
    ps = 1.0e5 - 3.0e3 * np.exp(-(((lon2 - 92.5) / 10) ** 2 + ((lat2 - 50.5) / 5) ** 2))
    ps = ps + 1.0e3 * np.exp(-(((lon2 - 202.5) / 10) ** 2 + ((lat2 - 30.5) / 5) ** 2))
    e = bn.extrema(ps, LON[None, :], LAT[:, None])
    assert (e["min_lon"], e["min_lat"], e["max_lon"], e["max_lat"]) == (92.5, 50.5, 202.5, 30.5)
    assert e["min"] == pytest.approx(0.97e5) and e["max"] == pytest.approx(1.01e5)
    with pytest.raises(FV3ConfigError, match="broadcast"):
        bn.extrema(ps, LON, LAT)
    with pytest.raises(FV3ConfigError, match="not finite"):
        bn.extrema(np.full(3, np.nan), 0.0, 0.0)


def test_printed_extrema_are_fv3s_prt_mxm():
    """Max/min over every cell and layer; the mean of the lowest layer only, area-weighted
    (prt_mxm's g_sum of q(:, :, km)); ps printed in hPa.  Reference: hand-computed values."""
    area = np.ones((6, 2, 2))
    area[0, 0, 0] = 3.0  # weights 3 + 23 = 26
    ua = np.zeros((6, 2, 2, 3))
    ua[..., -1] = 2.0
    ua[0, 0, 0, -1] = 15.0  # the lowest layer: mean (3 * 15 + 23 * 2) / 26 = 3.5
    ua[1, 1, 0, 0] = 40.0  # the top layer holds the max, not counted in the mean
    ua[2, 0, 1, 1] = -7.0
    fields = {"ps": np.full((6, 2, 2), 1.0e5), "ua": ua, "va": -ua, "temperature": ua + 250.0}
    fields["ps"][3, 1, 1] = 9.5e4
    p = bn.printed_extrema(fields, area)
    assert (p["UA_max"], p["UA_min"], p["UA_mean"]) == (40.0, -7.0, 3.5)
    assert (p["VA_max"], p["VA_min"], p["VA_mean"]) == (7.0, -40.0, -3.5)
    assert (p["TA_max"], p["TA_min"], p["TA_mean"]) == (290.0, 243.0, 253.5)
    assert (p["PS_max"], p["PS_min"]) == (1000.0, 950.0)
    assert p["PS_mean"] == pytest.approx(1000.0 - 50.0 / 26)
    with pytest.raises(FV3ConfigError, match="area"):
        bn.printed_extrema(fields, np.ones((6, 3, 3)))


def _columns(npz=5, ps=1.0e5, ptop=300.0):
    area = np.full((6, 3, 3), 4 * math.pi * UFS.radius**2 / 54)
    delp = np.full(area.shape + (npz,), (ps - ptop) / npz)
    pe = ptop + np.concatenate([np.zeros(area.shape + (1,)), np.cumsum(delp, axis=-1)], axis=-1)
    return area, delp, pe, np.log(pe)


def test_dry_air_and_tracer_mass():
    area, delp, _, _ = _columns()
    want = (1.0e5 - 300.0) * 4 * math.pi * UFS.radius**2 / UFS.grav
    assert bn.dry_air_mass(delp, area) == pytest.approx(want, rel=1e-14)
    assert bn.dry_air_mass(delp, area, q_water=np.full(delp.shape, 0.01)) == pytest.approx(
        0.99 * want, rel=1e-14)
    assert bn.tracer_mass(np.full(delp.shape, 2e-3), delp, area) == pytest.approx(2e-3 * want,
                                                                                  rel=1e-14)
    with pytest.raises(FV3ConfigError, match="area"):
        bn.dry_air_mass(delp, area[:5])
    with pytest.raises(FV3ConfigError, match="delp"):
        bn.tracer_mass(delp[..., :2], delp, area)


def test_total_energy_of_an_isothermal_column_with_uniform_wind():
    area, delp, pe, peln = _columns(npz=7)
    t0, phis, ps, ptop = 260.0, 2.0e3, 1.0e5, 300.0
    pt = np.full(delp.shape, t0)
    # D-grid winds uniform on a skewed grid (angle 80 degrees between the grid lines)
    sin, cos = math.sin(math.radians(80.0)), math.cos(math.radians(80.0))
    uu, vv = 12.0, -5.0
    u = np.full((6, 3, 4, 7), uu)
    v = np.full((6, 4, 3, 7), vv)
    ke = bn.dgrid_kinetic_energy(u, v, np.full((6, 3, 3), 1 / sin**2), np.full((6, 3, 3), cos))
    np.testing.assert_allclose(ke, 0.5 * (uu**2 + vv**2 - 2 * uu * vv * cos) / sin**2, rtol=1e-14)
    te = bn.column_total_energy(pt, delp, pe, peln, np.full(area.shape, phis), ke)
    # integral over p of (cv T + Phi + K), Phi = phis + R T ln(ps/p)
    r, cv = UFS.rdgas, UFS.cp_air - UFS.rdgas
    want = ((cv * t0 + phis + ke[0, 0, 0, 0]) * (ps - ptop)
            + r * t0 * (ps - ptop - ptop * math.log(ps / ptop)))
    np.testing.assert_allclose(te, want, rtol=1e-12)
    total = bn.total_energy(pt, delp, pe, peln, np.full(area.shape, phis), ke, area)
    assert total == pytest.approx(want * 4 * math.pi * UFS.radius**2 / UFS.grav, rel=1e-12)
    # moist: tv = T (1 + zvir q) everywhere
    q = np.full(delp.shape, 0.01)
    moist = bn.column_total_energy(pt, delp, pe, peln, np.full(area.shape, phis), 0 * ke, q=q)
    dry = bn.column_total_energy(pt * (1 + UFS.zvir * 0.01), delp, pe, peln,
                                 np.full(area.shape, phis), 0 * ke)
    np.testing.assert_allclose(moist, dry, rtol=1e-14)
    with pytest.raises(FV3ConfigError, match="pe has shape"):
        bn.column_total_energy(pt, delp, pe[..., 1:], peln, np.full(area.shape, phis), ke)
    with pytest.raises(FV3ConfigError, match="u "):
        bn.dgrid_kinetic_energy(v, u, np.ones((6, 3, 3)), np.zeros((6, 3, 3)))

"""The diagnostics chain on FV3's JW steady state (test_case 12: init_jw without the
perturbation) at C24 L26: u850, v850, t850, vort850 (FV3's cs3 rules, the D-grid relative
vorticity) against JW06's analytic fields, ps, slp, dry mass, the l2 norm of the state against
itself on a lat-lon grid, the total energy's D-grid kinetic energy against the A-grid winds.

The bounds are the measured errors of the C24 state itself (its model-level A-grid winds are
1.12 m/s off JW06's at the jet; the vertical interpolation adds nothing measurable: the same
error with L64), rounded up."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fv3core.constants import UFS
from fv3core.grid.latlon_regrid import LatLonRegridder
from fv3core.grid.metric_terms import CubedSphere
from fv3core.testcases.jablonowski_williamson import init_jw, jw_temperature, jw_zonal_wind
from fv3core.validation import baroclinic_norms as bn
from fv3core.validation import pressure_levels as pl
from fv3core.validation.norms import dgrid_vorticity
from fv3core.vertical.eta import set_eta

N, NPZ = 24, 26


@pytest.fixture(scope="module")
def jw():
    cube = CubedSphere.build(N, radius=UFS.radius, omega=UFS.omega)
    state = init_jw(cube, set_eta(NPZ), perturbation=False)
    h = cube.n_halo
    i, e = slice(h, h + N), slice(h, h + N + 1)
    out = {name: getattr(state, name)[:, i, i] for name in
           ("ua", "va", "pt", "pe", "peln", "phis", "delp")}
    out["u_d"], out["v_d"] = state.u[:, i, e], state.v[:, e, i]
    f = cube.fields
    out["vort"] = np.stack([dgrid_vorticity(out["u_d"][..., k], out["v_d"][..., k],
                                            f["dx"][:, i, e], f["dy"][:, e, i], f["rarea"][:, i, i])
                            for k in range(NPZ)], axis=-1)  # fmt: skip
    for name in ("area", "rsin2", "cosa_s"):
        out[name] = f[name][:, i, i]
    out["lon"], out["lat"] = f["agrid"][:, i, i, 0], f["agrid"][:, i, i, 1]
    return cube, state, out


def test_fields_at_850_against_jw06(jw):
    _, state, s = jw
    f = pl.fields_at_850(s["ua"], s["va"], s["pt"], s["vort"], s["pe"], s["peln"], s["phis"])
    lon, lat = s["lon"], s["lat"]
    # ps = 1000 hPa, so 850 hPa is eta = 0.85
    assert np.max(np.abs(f["u850"] - jw_zonal_wind(lon, lat, 0.85))) < 1.2
    assert np.max(np.abs(f["v850"])) < 0.01
    assert np.max(np.abs(f["t850"] - jw_temperature(lon, lat, 0.85))) < 0.15
    # analytic relative vorticity of u(lat): -d(u cos lat)/dlat / (a cos lat)
    eps = 1e-6
    ucos = [jw_zonal_wind(lon, la, 0.85) * np.cos(la) for la in (lat + eps, lat - eps)]
    zeta = -(ucos[0] - ucos[1]) / (2 * eps) / (UFS.radius * np.cos(lat))
    assert np.max(np.abs(zeta)) > 7e-6
    assert np.max(np.abs(f["vort850"] - zeta)) < 1.5e-6
    np.testing.assert_array_equal(pl.surface_pressure(s["pe"]), state.ps[:, 3:-3, 3:-3])
    assert np.all(np.abs(pl.surface_pressure(s["pe"]) - 1e5) < 1e-9)
    slp = pl.sea_level_pressure(s["pt"], s["peln"], s["phis"])
    assert 9.0e4 < slp.min() < slp.max() < 1.05e5  # the balanced state's phis ranges +-3 km


def test_invariants_and_norms(jw):
    cube, state, s = jw
    mass = bn.dry_air_mass(s["delp"], s["area"])
    want = (1e5 - state.levels.ptop) * float(np.sum(s["area"])) / UFS.grav
    assert mass == pytest.approx(want, rel=1e-13)
    assert bn.tracer_mass(np.ones_like(s["delp"]), s["delp"], s["area"]) == pytest.approx(mass,
                                                                                         rel=1e-14)
    ke = bn.dgrid_kinetic_energy(s["u_d"], s["v_d"], s["rsin2"], s["cosa_s"])
    ke_a = 0.5 * (s["ua"] ** 2 + s["va"] ** 2)
    assert np.max(np.abs(ke - ke_a)) < 0.01 * np.max(ke_a)  # D-grid vs c2l_ord4 winds, C24
    te = bn.total_energy(s["pt"], s["delp"], s["pe"], s["peln"], s["phis"], ke, s["area"])
    # integral (cp T + K) dp + ps phis - ptop phi_top, phi_top from get_height_field
    wz = pl.height_field(s["pt"], s["peln"], s["phis"])
    column = (np.sum((UFS.cp_air * s["pt"] + ke) * s["delp"], axis=-1) + 1e5 * s["phis"]
              - state.levels.ptop * UFS.grav * wz[..., 0])
    assert te == pytest.approx(float(np.sum(column * s["area"])) / UFS.grav, rel=1e-12)
    assert UFS.cp_air * 200 * mass < te < UFS.cp_air * 300 * mass  # mass-weighted T in 200..300 K
    regrid = LatLonRegridder.from_cube(cube, nlon=72, nlat=36)
    u_ll = regrid(s["ua"])
    assert bn.zonal_mean_wind_l2(u_ll, u_ll, regrid.lat, s["delp"].mean(axis=(0, 1, 2))) == 0.0
    # the regridded state's zonal mean against JW06's wind on the model levels
    eta = 0.5 * (s["pe"][0, 0, 0, :-1] + s["pe"][0, 0, 0, 1:]) / 1e5
    lat_r = np.deg2rad(regrid.lat)[:, None, None]
    exact = jw_zonal_wind(0.0 * lat_r, lat_r, eta[None, None, :]) * np.ones(u_ll.shape)
    l2 = bn.zonal_mean_wind_l2(u_ll, exact, regrid.lat, np.diff(s["pe"][0, 0, 0]))
    assert 0.0 < l2 < 0.5
    e = bn.extrema(pl.surface_pressure(s["pe"]), np.rad2deg(s["lon"]), np.rad2deg(s["lat"]))
    assert math.isclose(e["min"], 1e5) and math.isclose(e["max"], 1e5)

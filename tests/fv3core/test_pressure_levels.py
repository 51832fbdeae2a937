"""fv3core.validation.pressure_levels: FV3's interpolate_vertical and cs3_interpolator against
column-by-column loop transliterations of the Fortran, exactness for fields linear in the
coordinate, FV3's rules above the top and below the surface, ps and slp."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fv3core.constants import UFS
from fv3core.errors import FV3ConfigError
from fv3core.validation import pressure_levels as pl


def _columns(shape=(3, 4), npz=10, ps=1.0e5, ptop=200.0, seed=0):
    """Interfaces pe (Pa, top first) of random hybrid-like columns, their peln, and random
    (non-linear, with local extrema) layer fields."""
    rng = np.random.default_rng(seed)
    frac = np.sort(rng.uniform(0.02, 0.98, shape + (npz - 1,)), axis=-1)
    surf = ps * (1.0 + 0.05 * rng.uniform(-1, 1, shape))
    pe = np.concatenate([np.full(shape + (1,), ptop),
                         ptop + frac * (surf[..., None] - ptop), surf[..., None]], axis=-1)
    return pe, np.log(pe), rng.normal(size=shape + (npz,))


# ---------------------------------------------------------------- loop references (per column)
def _interpolate_vertical_ref(a3, peln, plev):
    km = len(a3)
    logp = math.log(plev)
    pm = [0.5 * (peln[k] + peln[k + 1]) for k in range(km)]
    if logp <= pm[0]:
        return a3[0]
    if logp >= pm[km - 1]:
        return a3[km - 1]
    for k in range(km - 1):
        if pm[k] <= logp <= pm[k + 1]:
            return a3[k] + (a3[k + 1] - a3[k]) * (logp - pm[k]) / (pm[k + 1] - pm[k])
    raise AssertionError


def _cs_prof_ref(q2, dp, iv):
    km = len(q2)
    q, gam = [0.0] * (km + 1), [0.0] * km
    grat = dp[1] / dp[0]
    bet = grat * (grat + 0.5)
    q[0] = ((grat + grat) * (grat + 1.0) * q2[0] + q2[1]) / bet
    gam[0] = (1.0 + grat * (grat + 1.5)) / bet
    for k in range(1, km):
        d4 = dp[k - 1] / dp[k]
        bet = 2.0 + d4 + d4 - gam[k - 1]
        q[k] = (3.0 * (q2[k - 1] + d4 * q2[k]) - q[k - 1]) / bet
        gam[k] = d4 / bet
    a_bot = 1.0 + d4 * (d4 + 1.5)
    q[km] = (2.0 * d4 * (d4 + 1.0) * q2[km - 1] + q2[km - 2] - a_bot * q[km - 1]) / (
        d4 * (d4 + 0.5) - a_bot * gam[km - 1])
    for k in range(km - 1, -1, -1):
        q[k] = q[k] - gam[k] * q[k + 1]
    q[1] = min(q[1], max(q2[0], q2[1]))
    q[1] = max(q[1], min(q2[0], q2[1]))
    g = [0.0] + [q2[k] - q2[k - 1] for k in range(1, km)]  # g[k] = Fortran gam(k+1)
    for k in range(2, km - 1):
        if g[k - 1] * g[k + 1] > 0.0:
            q[k] = min(q[k], max(q2[k - 1], q2[k]))
            q[k] = max(q[k], min(q2[k - 1], q2[k]))
        elif g[k - 1] > 0.0:
            q[k] = max(q[k], min(q2[k - 1], q2[k]))
        else:
            q[k] = min(q[k], max(q2[k - 1], q2[k]))
            if iv == 0:
                q[k] = max(0.0, q[k])
    q[km - 1] = min(q[km - 1], max(q2[km - 2], q2[km - 1]))
    q[km - 1] = max(q[km - 1], min(q2[km - 2], q2[km - 1]))
    return q


def _cs3_ref(q2, pe, plev, iv, zsurf=0.0):
    km = len(q2)
    dp = [pe[k + 1] - pe[k] for k in range(km)]
    qe = _cs_prof_ref(q2, dp, iv)
    if plev <= pe[0]:
        out = qe[0]
    elif plev >= pe[km]:
        if iv == 1:
            rdgas, grav = UFS.rdgas, UFS.grav
            alpha = 0.0065 * rdgas / grav
            pbot = (math.exp(pe[km]) - math.exp(pe[km - 1])) / (pe[km] - pe[km - 1])
            ts = q2[km - 1] + alpha * q2[km - 1] * (math.exp(pe[km]) / pbot - 1)
            t0 = ts + 0.0065 * zsurf
            tmp = min(t0, 298.0)
            if zsurf >= 2000.0:
                if zsurf <= 2500.0:
                    tmp = 0.002 * ((2500 - zsurf) * t0 + (zsurf - 2000) * tmp)
                alpha = 0.0 if tmp - ts < 0 else rdgas * (tmp - ts) / (zsurf * grav)
            out = ts * math.exp(alpha * (plev - pe[km]))
        else:
            out = qe[km]
    else:
        for k in range(km):
            if pe[k] <= plev <= pe[k + 1]:
                a6 = 3.0 * (2.0 * q2[k] - (qe[k] + qe[k + 1]))
                s0 = (plev - pe[k]) / dp[k]
                out = qe[k] + s0 * (qe[k + 1] - qe[k] + a6 * (1.0 - s0))
                break
    return max(0.0, out) if iv == 0 else out


# ------------------------------------------------------------------------ interpolate_vertical
@pytest.mark.parametrize("plev", [50.0, 3.0e4, 850.0e2, 9.6e4, 1.2e5])
def test_interpolate_vertical_equals_the_fortran_loop(plev):
    pe, peln, a3 = _columns()
    got = pl.interpolate_vertical(a3, peln, plev)
    ref = np.array([[_interpolate_vertical_ref(a3[i, j], peln[i, j], plev) for j in range(4)]
                    for i in range(3)])
    np.testing.assert_array_equal(got, ref)


def test_interpolate_vertical_is_exact_for_fields_linear_in_layer_mean_log_p():
    pe, peln, _ = _columns(npz=26)
    pm = 0.5 * (peln[..., :-1] + peln[..., 1:])
    field = 3.0 - 2.5 * pm
    got = pl.interpolate_vertical(field, peln, 850.0e2)
    np.testing.assert_allclose(got, 3.0 - 2.5 * math.log(850.0e2), rtol=1e-14)


def test_interpolate_vertical_boundaries_are_the_top_and_lowest_layers():
    pe, peln, a3 = _columns()
    pm = 0.5 * (peln[..., :-1] + peln[..., 1:])
    # just above the top layer's mean and just below the lowest layer's mean
    above, below = 0.999 * np.exp(pm[..., 0]).min(), 1.001 * np.exp(pm[..., -1]).max()
    np.testing.assert_array_equal(pl.interpolate_vertical(a3, peln, above), a3[..., 0])
    np.testing.assert_array_equal(pl.interpolate_vertical(a3, peln, below), a3[..., -1])


# --------------------------------------------------------------------------- cs3_interpolator
@pytest.mark.parametrize("iv", [-1, 0, 1])
def test_cs3_interpolator_equals_the_fortran_loop(iv):
    pe, peln, q = _columns(npz=12, seed=iv + 5)
    if iv == 0:
        q = np.abs(q) * 1e-3
    coord = peln if iv == 1 else pe
    phis = np.linspace(-500.0, 3.0e4, 12).reshape(3, 4)  # zsurf up to 3 km: all T branches
    for plev in (100.0, 5.0e4, 850.0e2, 1.0e5, 1.1e5):
        level = math.log(plev) if iv == 1 else plev
        got = pl.cs3_interpolator(q, coord, level, iv, phis=phis)
        ref = np.array([[_cs3_ref(q[i, j], coord[i, j], level, iv, phis[i, j] / UFS.grav)
                         for j in range(4)] for i in range(3)])
        np.testing.assert_array_equal(got, ref)


def test_cs_prof_is_exact_for_linear_profiles_on_uneven_layers():
    pe, _, _ = _columns(npz=20)
    mid = 0.5 * (pe[..., :-1] + pe[..., 1:])
    qe = pl.cs_prof(1.0 + 2e-4 * mid, np.diff(pe, axis=-1), -1)
    # random layers with thickness ratios up to ~100 cost a few digits in the tridiagonal solve
    np.testing.assert_allclose(qe, 1.0 + 2e-4 * pe, rtol=1e-10)


def test_cs3_winds_in_p_and_temperature_in_log_p_are_exact_for_linear_fields():
    pe, peln, _ = _columns(npz=26)
    # winds: layer means of a field linear in p
    u = 10.0 + 3e-4 * 0.5 * (pe[..., :-1] + pe[..., 1:])
    np.testing.assert_allclose(pl.at_pressure(u, 850e2, quantity="u", pe=pe),
                               10.0 + 3e-4 * 850e2, rtol=1e-13)
    # temperature (and vorticity): layer means of a field linear in ln p
    t = 200.0 + 8.0 * 0.5 * (peln[..., :-1] + peln[..., 1:])
    want = 200.0 + 8.0 * math.log(850e2)
    flat = np.zeros(pe.shape[:-1])
    np.testing.assert_allclose(pl.at_pressure(t, 850e2, quantity="t", peln=peln, phis=flat),
                               want, rtol=1e-13)
    np.testing.assert_allclose(pl.at_pressure(t, 850e2, quantity="vort", pe=pe), want, rtol=1e-13)
    # the documented alternative: linear between layer-mean log pressures
    pm = 0.5 * (peln[..., :-1] + peln[..., 1:])
    linear = pl.at_pressure(8.0 * pm, 850e2, quantity="t", pe=pe, method="linear")
    np.testing.assert_allclose(linear, 8.0 * math.log(850e2), rtol=1e-13)


def test_cs3_above_the_top_and_below_the_surface():
    pe, peln, q = _columns(npz=8)
    qe = pl.cs_prof(q, np.diff(pe, axis=-1), -1)
    np.testing.assert_array_equal(pl.cs3_interpolator(q, pe, 1.0, -1), qe[..., 0])
    np.testing.assert_array_equal(pl.cs3_interpolator(q, pe, 2.0e5, -1), qe[..., -1])
    # temperature below the surface, flat terrain: ts (p/ps)^(0.0065 rdgas/grav)
    t = np.full_like(q, 280.0)
    got = pl.at_pressure(t, 1.2e5, quantity="t", pe=pe, peln=peln, phis=np.zeros(q.shape[:-1]))
    pbot = (pe[..., -1] - pe[..., -2]) / (peln[..., -1] - peln[..., -2])
    alpha = 0.0065 * UFS.rdgas / UFS.grav
    ts = 280.0 * (1.0 + alpha * (pe[..., -1] / pbot - 1.0))
    np.testing.assert_allclose(got, ts * (1.2e5 / pe[..., -1]) ** alpha, rtol=1e-13)
    with pytest.raises(FV3ConfigError, match="phis"):
        pl.at_pressure(t, 1.2e5, quantity="t", pe=pe)


def test_fields_at_850_and_refusals():
    pe, peln, q = _columns(npz=10)
    out = pl.fields_at_850(q, 2 * q, 280 + q, 1e-5 * q, pe, peln, np.zeros(q.shape[:-1]))
    assert sorted(out) == ["t850", "u850", "v850", "vort850"]
    np.testing.assert_array_equal(out["v850"], pl.cs3_interpolator(2 * q, pe, 850e2, -1))
    np.testing.assert_array_equal(out["vort850"],
                                  pl.cs3_interpolator(1e-5 * q, peln, math.log(850e2), -1))
    with pytest.raises(FV3ConfigError, match="quantity"):
        pl.at_pressure(q, 850e2, quantity="omega", pe=pe)
    with pytest.raises(FV3ConfigError, match="pe"):
        pl.at_pressure(q, 850e2, quantity="u")
    with pytest.raises(FV3ConfigError, match="one level more"):
        pl.interpolate_vertical(q, peln[..., :-1], 850e2)
    with pytest.raises(FV3ConfigError, match="iv"):
        pl.cs3_interpolator(q, pe, 850e2, 2)


# ------------------------------------------------------------------------------- ps and slp
def test_surface_and_sea_level_pressure_of_an_isothermal_atmosphere():
    pe, peln, _ = _columns(npz=16)
    t = np.full(pe.shape[:-1] + (16,), 250.0)
    np.testing.assert_array_equal(pl.surface_pressure(pe), pe[..., -1])
    h = UFS.rdgas * 250.0 / UFS.grav  # scale height
    # surface below sea level (phis < 0): z = 0 lies inside the column, p = ps exp(zsurf / H)
    phis = np.full(pe.shape[:-1], -300.0 * UFS.grav)
    np.testing.assert_allclose(pl.sea_level_pressure(t, peln, phis),
                               pe[..., -1] * np.exp(-300.0 / h), rtol=1e-12)
    wz = pl.height_field(t, peln, phis)
    np.testing.assert_allclose(wz[..., 0] - wz[..., -1], h * (peln[..., -1] - peln[..., 0]),
                               rtol=1e-12)
    # above sea level: FV3's extrapolation with tm = rdgas/grav (ts + 3.25e-3 wz(npz))
    phis = np.full(pe.shape[:-1], 1000.0 * UFS.grav)
    wz = pl.height_field(t, peln, phis)
    tm = UFS.rdgas / UFS.grav * (250.0 + 3.25e-3 * wz[..., -2])
    np.testing.assert_allclose(pl.sea_level_pressure(t, peln, phis),
                               np.exp(peln[..., -1] + 1000.0 / tm), rtol=1e-13)

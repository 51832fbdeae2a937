"""FV3's Jablonowski-Williamson initial state (fv3core.testcases.jablonowski_williamson, FV3's
``test_case = 13``) on FV3's C24 grid with FV3's 26 levels (JW06's).

References:

* JW06 (Jablonowski & Williamson 2006, Q. J. R. Meteorol. Soc. 132, 2943-2975) eq. (2)-(10) and
  (12): the analytic zonal wind, temperature, geopotential and perturbation, checked first for
  their own hydrostatic balance dPhi/dln(eta) = -Rd T (exact for the analytic fields);
* the discretisation FV3 uses, with errors derived here: a 9-point average with the tensor
  weights (1/4, 1/2, 1/4) at offsets (-h/2, 0, h/2) equals the centre value plus
  ``(h_x^2 f_xx + h_y^2 f_yy)/16 + O(h^4)``, so for a field f(lat) of latitude only
  ``|avg - f(centre)| <= (h/a)^2/8 max(|f_latlat|, |tan(lat) f_lat|)`` (h the largest edge
  length: the Hessian's eigenvalues on the sphere are f_latlat/a^2 and -tan(lat) f_lat/a^2); the
  D-grid winds, a (1/4, 1/2, 1/4) average along an edge of the projected zonal wind, equal the
  analytic wind at the edge midpoint projected on the edge to the same second order (the
  projection adds the rotation of the east vector along the edge, of the order of |u| (h/a)^2);
* hydrostatic balance of the discrete state: integrating ``Rd pt dln(pe)`` up from ``phis`` gives
  JW06's geopotential at the interfaces up to the horizontal averaging above and the vertical
  midpoint rule, whose error per layer in s = ln(eta) is at most
  ``Rd (Delta |s_m - s_c| max|T_s| + Delta^3/24 max|T_ss|)`` (s_c the layer's centre in s, s_m
  the log of FV3's arithmetic-mean layer eta, Delta the layer's depth in s);
* GFDL's Fortran FV3 itself (hydrostatic core, test_case 13, C24 L26, benchmarks/fortran_fv3):
  its t = 0 extract ``tests/fv3core/data/fortran/jw_C24_L26`` (:func:`test_equals_fortran_t0`)
  and the ``fv_restart`` checksums it printed (:func:`test_equals_fortran_checksums`).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from fv3core.constants import UFS
from fv3core.errors import FV3ConfigError
from fv3core.grid.metric_terms import CubedSphere
from fv3core.grid.subdomain import SubdomainSpec
from fv3core.testcases import jablonowski_williamson as jw
from fv3core.validation.extract import load_3d_run_extract
from fv3core.validation.reference import read_namelist_values
from fv3core.vertical.eta import set_eta

N, H = 24, 3
CS = slice(H, H + N)
RD = UFS.rdgas


@pytest.fixture(scope="module")
def cube():
    return CubedSphere.build(N, radius=UFS.radius, omega=UFS.omega)


@pytest.fixture(scope="module")
def levels():
    return set_eta(26)


@pytest.fixture(scope="module")
def state(cube, levels):
    return jw.init_jw(cube, levels, tracer_names=("sphum", "cl", "cl2"))


@pytest.fixture(scope="module")
def steady(cube, levels):
    return jw.init_jw(cube, levels, perturbation=False)


def _centres(cube):
    a = cube.fields["agrid"][:, CS, CS]
    return a[..., 0], a[..., 1]


def _edge_length(cube) -> float:
    return float(max(np.nanmax(cube.fields["dx"]), np.nanmax(cube.fields["dy"])))


def _latitude_bound(f, cube) -> float:
    """(h/a)^2/8 max(|f_latlat|, |tan(lat) f_lat|) of f(lat) (array over (lat, ...))."""
    phi = np.linspace(-0.5 * math.pi, 0.5 * math.pi, 20001)
    d = phi[1] - phi[0]
    v = f(phi)
    f2 = np.abs(np.diff(v, 2, axis=0)) / d**2
    tan = np.abs(np.tan(phi)).reshape((-1,) + (1,) * (v.ndim - 1))
    f1 = (np.abs(np.gradient(v, d, axis=0)) * tan)[np.abs(phi) < 1.5]
    return (_edge_length(cube) / cube.radius) ** 2 / 8.0 * max(f2.max(), f1.max())


# --- JW06's analytic fields -------------------------------------------------------------------
def test_analytic_fields_are_hydrostatic():
    """Phi(eta) - Phi_s = Rd int_eta^1 T dln(eta') for JW06's T and Phi (Gauss-Legendre, 64
    points per decade of eta: quadrature error < 1e-9 relative), above and below the tropopause."""
    lat = np.linspace(-1.5, 1.5, 13)
    x, w = np.polynomial.legendre.leggauss(64)
    for eta in (0.9, 0.5, 0.252, 0.2, 0.1, 0.01):
        edges = np.unique(np.concatenate([np.geomspace(eta, 1.0, 8), [0.2] if eta < 0.2 else []]))
        integral = np.zeros_like(lat)
        for e0, e1 in zip(edges[:-1], edges[1:], strict=True):
            s0, s1 = math.log(e0), math.log(e1)
            s = 0.5 * (s1 - s0) * x + 0.5 * (s1 + s0)
            t = jw.jw_temperature(0.0, lat[:, None], np.exp(s)[None, :])
            integral += 0.5 * (s1 - s0) * (t * w).sum(axis=1)
        phi = jw.jw_geopotential(0.0, lat, eta) - jw.jw_surface_geopotential(0.0, lat)
        np.testing.assert_allclose(phi, RD * integral, rtol=1e-9)


def test_analytic_values():
    """JW06's fixed points: T_mean(1) = T0 = 288 K, Phi_mean(1) = 0, the mean fields continuous
    at the tropopause, u = u0 = 35 m/s at (45 N, eta0 = 0.252) without the perturbation and
    u_p = 1 m/s more at the perturbation's centre (20 E, 40 N) minus the jet there."""
    assert jw.jw_mean_temperature(1.0) == 288.0
    assert jw.jw_mean_geopotential(1.0) == 0.0
    for f in (jw.jw_mean_temperature, jw.jw_mean_geopotential):
        np.testing.assert_allclose(f(0.2 - 1e-12), f(0.2), rtol=1e-9)
    assert jw.jw_zonal_wind(0.3, math.pi / 4, 0.252, perturbation=False) == pytest.approx(35.0)
    lc, pc = jw.PERTURBATION_CENTRE
    bump = jw.jw_zonal_wind(lc, pc, 0.5) - jw.jw_zonal_wind(lc, pc, 0.5, perturbation=False)
    assert bump == pytest.approx(1.0, abs=1e-12)
    far = jw.jw_zonal_wind(lc + math.pi, pc, 0.5) - jw.jw_zonal_wind(lc + math.pi, pc, 0.5,
                                                                    perturbation=False)  # fmt: skip
    assert abs(far) < 1e-30


# --- FV3's discrete state ------------------------------------------------------------------------
def test_pressure(state, levels):
    """delp = ak(k+1) - ak(k) + 1e5 (bk(k+1) - bk(k)) exactly (FV3's formula), pe from ptop down
    by delp, ps = pe(npz+1) = 1000 hPa to round-off, peln = ln pe, pk = pe^kappa, and the
    hydrostatic pkz between pk(k) and pk(k+1)."""
    np.testing.assert_array_equal(state.delp[:, CS, CS], np.broadcast_to(levels.delp(1.0e5),
                                                                         (6, N, N, 26)))  # fmt: skip
    pe = state.pe[:, CS, CS]
    np.testing.assert_array_equal(pe[..., 0], levels.ptop)
    np.testing.assert_allclose(pe, levels.interface_pressure(np.full((6, N, N), 1e5)), rtol=1e-14)
    np.testing.assert_array_equal(state.ps[:, CS, CS], pe[..., -1])
    np.testing.assert_allclose(state.ps[:, CS, CS], 1.0e5, rtol=1e-15)
    np.testing.assert_allclose(state.peln[:, CS, CS], np.log(pe), rtol=1e-15)
    np.testing.assert_allclose(state.pk[:, CS, CS], pe**UFS.kappa, rtol=1e-14)
    pk = state.pk[:, CS, CS]
    assert np.all((state.pkz[:, CS, CS] > pk[..., :-1]) & (state.pkz[:, CS, CS] < pk[..., 1:]))


def test_temperature_and_surface_geopotential(steady, cube, levels):
    """pt is the temperature T (K): within the derived 9-point-average bound of JW06's T at the
    cell centres (C24: bound 0.18 K, error 0.13 K); phis likewise of JW06's Phi_s (bound 8.9,
    error 6.4 m^2/s^2)."""
    lon, lat = _centres(cube)
    eta = levels.eta_layer()
    t = jw.jw_temperature(lon[..., None], lat[..., None], eta)
    bound = _latitude_bound(lambda p: jw.jw_temperature(0.0, p[:, None], eta[None, :]), cube)
    err = np.abs(steady.pt[:, CS, CS] - t).max()
    assert 0.0 < err <= bound < 0.2
    phis = jw.jw_surface_geopotential(lon, lat)
    bound = _latitude_bound(lambda p: jw.jw_surface_geopotential(0.0, p), cube)
    err = np.abs(steady.phis[:, CS, CS] - phis).max()
    assert 0.0 < err <= bound < 10.0


def _edge_projection(cube, levels, perturbation: bool, which: str):
    """JW06's zonal wind at each compute edge's midpoint (the normalised mean of its corners)
    projected on the edge's unit tangent: y-faces (u, ``which = 'u'``) or x-faces (v)."""
    g = cube.fields["grid"]
    lon, lat = g[..., 0], g[..., 1]
    xyz = np.stack([np.cos(lat) * np.cos(lon), np.cos(lat) * np.sin(lon), np.sin(lat)], -1)
    if which == "u":  # from corner (i, j) to (i+1, j)
        a, b = xyz[:, H : H + N, H : H + N + 1], xyz[:, H + 1 : H + N + 1, H : H + N + 1]
    else:  # from corner (i, j) to (i, j+1)
        a, b = xyz[:, H : H + N + 1, H : H + N], xyz[:, H : H + N + 1, H + 1 : H + N + 1]
    m = (a + b) / np.linalg.norm(a + b, axis=-1, keepdims=True)
    e = (b - a) / np.linalg.norm(b - a, axis=-1, keepdims=True)
    mlon, mlat = np.arctan2(m[..., 1], m[..., 0]), np.arcsin(m[..., 2])
    east = np.stack([-np.sin(mlon), np.cos(mlon), np.zeros_like(mlon)], -1)
    wind = jw.jw_zonal_wind(mlon[..., None], mlat[..., None], levels.eta_layer(),
                            radius=cube.radius, perturbation=perturbation)  # fmt: skip
    return wind * np.sum(east * e, axis=-1)[..., None]


@pytest.mark.parametrize("perturbation", [False, True])
def test_dgrid_winds(cube, levels, state, steady, perturbation):
    """D-grid u (y-faces) and v (x-faces) equal JW06's zonal wind at the edge midpoint projected
    on the edge, to the derived second-order bound (h/a)^2/8 max(|u_latlat|, |tan u_lat|) = 0.18
    m/s at C24 (errors 0.04 m/s); the perturbation's 1 m/s Gaussian (R = a/10 = 1.5 cells at
    C24) is resolved more coarsely: its part of the error stays below 0.1 m/s."""
    s = state if perturbation else steady
    eta = levels.eta_layer()
    bound = _latitude_bound(
        lambda p: jw.jw_zonal_wind(0.0, p[:, None], eta[None, :], perturbation=False), cube
    )
    if perturbation:
        bound += 0.1
    for which, a, sl in (("u", s.u, np.s_[:, CS, H : H + N + 1]),
                         ("v", s.v, np.s_[:, H : H + N + 1, CS])):  # fmt: skip
        err = np.abs(a[sl] - _edge_projection(cube, levels, perturbation, which)).max()
        assert 0.0 < err <= bound, (which, err, bound)


def test_perturbation(state, steady, cube):
    """The perturbed minus the steady D-grid winds: the projected Gaussian, at most u_p = 1 m/s,
    largest on the tile that holds (20 E, 40 N) (FV3's tile 5 of 6 with its pi/18 shift ... the
    one nearest the centre), zero (< 1e-12 m/s) beyond 40 R where FV3 cuts it, and the same on
    every level to round-off (the bump has no vertical factor)."""
    du = state.u - steady.u
    assert np.abs(du).max() <= 1.0 and np.abs(du).max() > 0.5
    np.testing.assert_allclose(du[..., 0], du[..., -1], rtol=0, atol=1e-12)
    lc, pc = jw.PERTURBATION_CENTRE
    g = cube.fields["grid"]
    lon, lat = g[:, CS, H : H + N + 1, 0], g[:, CS, H : H + N + 1, 1]
    cosd = np.sin(pc) * np.sin(lat) + np.cos(pc) * np.cos(lat) * np.cos(lon - lc)
    far = np.arccos(np.clip(cosd, -1, 1)) > 0.7  # > 7 R of every corner of the edge
    assert np.abs(du[:, CS, H : H + N + 1, 0][far]).max() < 1e-12


def test_agrid_winds(steady, cube, levels):
    """ua, va (FV3's cubed_to_latlon, c2l_ord4 of the D-grid winds) are JW06's zonal wind at the
    centres within twice the D-grid winds' bound (C24: 0.36 m/s; error 0.13 m/s, mean 0.01:
    c2l's interpolation adds its own second-order error), va ~ 0, NaN in the halo."""
    lon, lat = _centres(cube)
    u = jw.jw_zonal_wind(lon[..., None], lat[..., None], levels.eta_layer(), perturbation=False)
    bound = 2.0 * _latitude_bound(
        lambda p: jw.jw_zonal_wind(0.0, p[:, None], levels.eta_layer()[None, :],
                                   perturbation=False), cube)  # fmt: skip
    assert np.abs(steady.ua[:, CS, CS] - u).max() <= bound
    assert np.abs(steady.va[:, CS, CS]).max() <= bound
    assert np.abs(steady.ua[:, CS, CS] - u).mean() < 0.02
    assert np.isnan(steady.ua[:, 0]).all()


def test_discrete_hydrostatic_balance(steady, cube, levels):
    """phis + Rd sum pt dln(pe) (from the surface up) equals JW06's Phi at the interfaces at the
    cell centres within the horizontal averaging errors of phis and pt plus the derived
    midpoint-rule bound of each column (module docstring); the vertical error dominates (up to
    ~300 m^2/s^2 at the model top, where the 219-489 Pa layer is 0.8 deep in ln p)."""
    lon, lat = _centres(cube)
    s = steady
    dl = s.peln[:, CS, CS, 1:] - s.peln[:, CS, CS, :-1]
    gz = s.phis[:, CS, CS, None] + np.cumsum((RD * s.pt[:, CS, CS] * dl)[..., ::-1],
                                             axis=-1)[..., ::-1]  # fmt: skip
    eta_i = s.pe[:, CS, CS] / 1.0e5
    phi = jw.jw_geopotential(lon[..., None], lat[..., None], eta_i[..., :-1])
    eta_c = levels.eta_layer()
    t_c = jw.jw_temperature(lon[..., None], lat[..., None], eta_c)
    horizontal = (
        np.abs(s.phis[:, CS, CS] - jw.jw_surface_geopotential(lon, lat))[..., None]
        + (np.cumsum((RD * np.abs(s.pt[:, CS, CS] - t_c) * dl)[..., ::-1], axis=-1)[..., ::-1])
    )
    # midpoint-rule bound per layer, from dense samples of T in s = ln(eta) on each column
    s0, s1 = np.log(eta_i[..., :-1]), np.log(eta_i[..., 1:])
    x = np.linspace(0.0, 1.0, 17)
    ss = s0[..., None] + (s1 - s0)[..., None] * x
    t = jw.jw_temperature(lon[..., None, None], lat[..., None, None], np.exp(ss))
    ds = (s1 - s0)[..., None] / 16.0
    t1 = np.abs(np.gradient(t, axis=-1) / ds).max(axis=-1)
    t2 = np.abs(np.diff(t, 2, axis=-1) / ds**2).max(axis=-1)
    delta = s1 - s0
    layer = RD * (delta * np.abs(np.log(eta_c) - 0.5 * (s0 + s1)) * t1 + delta**3 / 24.0 * t2)
    vertical = np.cumsum(layer[..., ::-1], axis=-1)[..., ::-1]
    err = np.abs(gz - phi)
    assert np.all(err <= 1.01 * (horizontal + vertical))
    assert err.max() > 0.2 * (horizontal + vertical).max()  # the bound is not loose (C24: 0.24)


def test_tracers(cube, levels, state):
    """FV3's tracers for test_case 13: sphum 0 when adiabatic; the terminator pair (cl, cl2)
    with cl + 2 cl2 = qcly = 4e-6 and 0 <= cl <= qcly, constant in the vertical; not adiabatic:
    the DCMIP-2016 humidity (at most 0.021 at the surface equator) and pt = T/(1 + zvir q);
    checker_tr: 0/1 checkerboard in every tracer."""
    assert np.all(state.q["sphum"] == 0.0)
    cl, cl2 = state.q["cl"][:, CS, CS], state.q["cl2"][:, CS, CS]
    np.testing.assert_allclose(cl + 2.0 * cl2, 4.0e-6, rtol=1e-12)
    assert cl.min() >= 0.0 and cl.max() <= 4.0e-6 and cl.max() > cl.min()
    np.testing.assert_array_equal(cl[..., 0], cl[..., -1])
    moist = jw.init_jw(cube, levels, adiabatic=False)
    qv = moist.q["sphum"][:, CS, CS]
    assert 0.0 < qv.max() <= 0.021 and qv[..., 0].max() < 1e-5  # exp(-(99700/34000)^2) at top
    zvir = UFS.rvgas / UFS.rdgas - 1.0
    np.testing.assert_allclose(moist.pt[:, CS, CS] * (1.0 + zvir * qv), state.pt[:, CS, CS],
                               rtol=1e-15)  # fmt: skip
    chk = jw.init_jw(cube, levels, checker_tr=True, tracer_names=("sphum", "tr1"))
    for name in ("sphum", "tr1"):
        assert set(np.unique(chk.q[name][:, CS, CS])) == {0.0, 1.0}


def test_for_rank(state):
    """2x2 ranks per tile (C24: 12x12 cells each): the documented halo-3 shapes, cut from the tile
    arrays; edge halos filled by the update, FV3's markers in the cube-corner regions."""
    spec = SubdomainSpec(N, 2, 12, 24, 0, 12, H)
    r = state.for_rank(spec)
    nx = ny = 12
    for name in ("delp", "pt", "ua", "va", "pkz"):
        assert getattr(r, name).shape == (nx + 6, ny + 6, 26), name
    assert r.u.shape == (nx + 6, ny + 7, 26) and r.v.shape == (nx + 7, ny + 6, 26)
    assert r.pe.shape == r.peln.shape == r.pk.shape == (nx + 6, ny + 6, 27)
    assert r.phis.shape == r.ps.shape == (nx + 6, ny + 6)
    assert r.q["cl"].shape == (nx + 6, ny + 6, 26) and r.npz == 26
    np.testing.assert_array_equal(r.pt, state.pt[2, 12 : 12 + nx + 6, 0 : ny + 6])
    np.testing.assert_array_equal(r.u, state.u[2, 12 : 12 + nx + 6, 0 : ny + 7])
    # tile edge halos hold the neighbours' values, the corner regions FV3's fill values
    t = state.pt[2]
    assert np.all(np.isfinite(t[:H, CS])) and np.all(t[:H, CS] > 150.0)
    assert np.all(t[:H, :H] == jw.PT_UNSET) and np.all(state.delp[2, :H, :H] == 0.0)
    assert np.all(state.phis[2, :H, :H] == jw.PHIS_UNSET) and np.all(state.phis[2, :H, CS] < 1e4)
    assert np.all(np.abs(state.u[2, :H, H : H + N + 1]) < 40.0)
    with pytest.raises(FV3ConfigError, match="does not fit"):
        state.for_rank(SubdomainSpec(48, 0, 0, 48, 0, 48, H))


def test_refusals(cube, levels):
    """alpha != 0 (not FV3's JW), adiabatic=False without a sphum tracer, FV3's derived tracers
    (qdry ...), duplicate tracers."""
    with pytest.raises(FV3ConfigError, match="sphum"):
        jw.init_jw(cube, levels, adiabatic=False, tracer_names=("cl", "cl2"))
    with pytest.raises(FV3ConfigError, match="qdry"):
        jw.init_jw(cube, levels, tracer_names=("sphum", "qdry"))
    with pytest.raises(FV3ConfigError, match="twice"):
        jw.init_jw(cube, levels, tracer_names=("sphum", "SPHUM"))
    rotated = CubedSphere.build(8, radius=UFS.radius, omega=UFS.omega, alpha=0.1)
    with pytest.raises(FV3ConfigError, match="alpha"):
        jw.init_jw(rotated, levels)


@pytest.mark.slow
def test_second_order_convergence(cube, levels, steady):
    """C24 -> C48: the errors of pt, phis and the D-grid u against JW06 fall by 4 (3.5-4.5)."""
    fine = CubedSphere.build(48, radius=UFS.radius, omega=UFS.omega)
    s48 = jw.init_jw(fine, levels, perturbation=False)
    eta = levels.eta_layer()

    def errors(c, s, n):
        cs = slice(H, H + n)
        a = c.fields["agrid"][:, cs, cs]
        t = jw.jw_temperature(a[..., 0, None], a[..., 1, None], eta)
        p = jw.jw_surface_geopotential(a[..., 0], a[..., 1])
        return np.abs(s.pt[:, cs, cs] - t).max(), np.abs(s.phis[:, cs, cs] - p).max()

    ratios = np.array(errors(cube, steady, N)) / np.array(errors(fine, s48, 48))
    assert np.all((ratios > 3.5) & (ratios < 4.5)), ratios


#: ``fv_restart`` checksums (FMS ``mpp_chksum``: the wrapping int64 sum of the float64 bit patterns
#: of the compute domain, over all ranks) that GFDL's Fortran FV3 printed at t = 0 in
#: ``stdout.txt`` of its hydrostatic C24 L26 test_case 13 run (benchmarks/fortran_fv3,
#: ``DYCORE=hydrostatic``: FMS 2026.01 GFS constants, FV3 73e28696, gfortran -O2 r8; namelist
#: npx = npy = 25, npz = 26, hydrostatic, adiabatic, field_table: sphum only; run
#: /work/fortran_fv3_hydro/runs/jw_C24_L26)
FORTRAN_CHECKSUMS = {
    "u": -8283806925725659431,
    "v": -6696738383339274691,
    "delp": -2857552977201270656,
    "phis": 3363147527400596425,
    "pt": 8174931175549746659,
}


def _mpp_chksum(arrays) -> int:
    total = np.int64(0)
    with np.errstate(over="ignore"):
        for a in arrays:
            total = total + np.ascontiguousarray(a).view(np.int64).sum(dtype=np.int64)
    return int(total)


def test_equals_fortran_checksums(cube, levels):
    """Bit for bit GFDL's Fortran FV3 at t = 0: the fv_restart checksums of the D-grid u
    (``u(isc:iec, jsc:jec, :)``), v, delp, phis and pt of our C24 L26 state (FV3's tracers: sphum,
    adiabatic) equal FV3's printed ones: every bit of the ~360,000 compute-domain values (a checksum is
    not a proof, but one flipped last bit in any value changes it)."""
    s = jw.init_jw(cube, levels, tracer_names=("sphum",))
    mine = {
        name: _mpp_chksum(getattr(s, name)[t, CS, CS] for t in range(6))
        for name in ("u", "v", "delp", "phis", "pt")
    }
    assert mine == FORTRAN_CHECKSUMS
    assert _mpp_chksum(s.q["sphum"][t, CS, CS] for t in range(6)) == 0  # "fv_restart sphum = 0"


FORTRAN_JW = Path(__file__).parent / "data" / "fortran" / "jw_C24_L26"


def _close(ours: np.ndarray, fortran: np.ndarray, rtol: float = 1e-12) -> float:
    """Assert ``|ours - fortran| <= rtol max(|fortran|, 1e-3 max|fortran|)`` elementwise (a floor
    for values near a zero crossing); return the largest relative difference."""
    assert ours.shape == fortran.shape
    floor = max(1e-3 * float(np.abs(fortran).max()), np.finfo(np.float64).tiny)  # all-0: exact
    scale = np.maximum(np.abs(fortran), floor)
    rel = np.abs(ours - fortran) / scale
    assert rel.max() <= rtol, rel.max()
    return float(rel.max())


@pytest.mark.skipif(not (FORTRAN_JW / "extract.npz").is_file(), reason="no JW Fortran extract")
def test_equals_fortran_t0(cube, levels):
    """Our C24 L26 initial state from the run's own namelist (npz, adiabatic, hydrostatic; its
    field_table has sphum only) equals GFDL's Fortran FV3 at t = 0 (the extract's t0 companion:
    netCDF output and the restart's D-grid winds): ak, bk, ptop, delp, temperature (pt), ps,
    phis, zsurf, sphum and the D-grid u, v, to <= 1e-12 relative to each value.  The tolerance
    allows for a last-bit difference of the C library's sin/cos/pow/exp on another machine
    amplified by the 9-point sums (~1e-14); here every value is bit for bit FV3's (difference 0)."""
    ext = load_3d_run_extract(FORTRAN_JW)
    nml = read_namelist_values(ext.namelist)
    core = nml["fv_core_nml"]
    assert int(core["npz"]) == 26 and int(core["npx"]) == N + 1
    assert int(nml["test_case_nml"]["test_case"]) == 13
    assert core["hydrostatic"] is True
    adiabatic = bool(core.get("adiabatic", False))  # FV3's default .false.
    lev = set_eta(int(core["npz"]))
    np.testing.assert_array_equal(lev.ak, ext.ak)
    np.testing.assert_array_equal(lev.bk, ext.bk)
    assert lev.ptop == ext.ptop
    s = jw.init_jw(cube, lev, adiabatic=adiabatic, tracer_names=("sphum",))
    worst = {
        "delp": _close(s.delp[:, CS, CS], ext.at("delp", 0.0)),
        "pt": _close(s.pt[:, CS, CS], ext.at("temp", 0.0)),
        "sphum": _close(s.q["sphum"][:, CS, CS], ext.at("sphum", 0.0)),
        "ps": _close(s.ps[:, CS, CS], ext.at("ps", 0.0)),
        "phis": _close(s.phis[:, CS, CS], ext.phis),
        "zsurf": _close((1.0 / UFS.grav) * s.phis[:, CS, CS], ext.zsurf),  # fv_diag's ginv*phis
        "u": _close(s.u[:, CS, H : H + N + 1], ext.at("u_dgrid", 0.0)),
        "v": _close(s.v[:, H : H + N + 1, CS], ext.at("v_dgrid", 0.0)),
    }
    assert worst == dict.fromkeys(worst, 0.0)  # bit for bit with this machine's libm


def test_nonhydrostatic_start(cube, levels, steady):
    """FV3's non-hydrostatic start (``hydrostatic = .false.``): ``w = 0``; ``delz`` < 0 is each
    layer's hydrostatic thickness, so ``phis - grav sum(delz)`` from the surface up is the
    geopotential the discrete hydrostatic balance above checks against JW06's analytic Phi
    (relative 1e-13); it is taken before the humidity correction of ``pt`` (``adiabatic =
    .false.`` gives the same ``delz``); the halos are unset (NaN) and ``for_rank`` carries both.
    Hydrostatic states have neither."""
    nh = jw.init_jw(cube, levels, perturbation=False, hydrostatic=False)
    assert steady.w is None and steady.delz is None
    np.testing.assert_array_equal(nh.delp, steady.delp)
    np.testing.assert_array_equal(nh.pt, steady.pt)
    assert np.all(nh.w == 0.0) and np.all(nh.delz[:, CS, CS] < 0.0)
    assert np.isnan(nh.delz[:, :H]).all()
    dl = steady.peln[:, CS, CS, 1:] - steady.peln[:, CS, CS, :-1]
    gz = steady.phis[:, CS, CS, None] + np.cumsum((RD * steady.pt[:, CS, CS] * dl)[..., ::-1], axis=-1)[..., ::-1]
    from_delz = steady.phis[:, CS, CS, None] - UFS.grav * np.cumsum(nh.delz[:, CS, CS][..., ::-1], axis=-1)[..., ::-1]
    np.testing.assert_allclose(from_delz, gz, rtol=1e-13)
    moist = jw.init_jw(cube, levels, perturbation=False, hydrostatic=False, adiabatic=False)
    assert np.abs(moist.pt - nh.pt)[:, CS, CS].max() > 0.01  # humidity changed pt ...
    np.testing.assert_array_equal(moist.delz, nh.delz)  # ... after delz was taken
    rank = nh.for_rank(SubdomainSpec(N, 2, 0, 12, 12, 24))
    np.testing.assert_array_equal(rank.delz[H:-H, H:-H], nh.delz[2, H : H + 12, H + 12 : H + 24])
    assert rank.w.shape == rank.delp.shape

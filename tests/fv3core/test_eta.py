"""FV3's hybrid levels (fv3core.vertical.eta, ``fv_eta.F90 set_eta``).

References:

* Jablonowski & Williamson (2006), "A baroclinic instability test case for atmospheric model
  dynamical cores", Q. J. R. Meteorol. Soc. 132, 2943-2975, appendix (the 26-level hybrid
  coefficients, NCAR CAM3's L26): ``p_{k+1/2} = A_{k+1/2} p0 + B_{k+1/2} ps``, p0 = 1e5 Pa, with
  A and B as listed in :data:`JW06_A`, :data:`JW06_B` (top to bottom);
* ``fv_eta.F90 var_hi`` itself: GFDL's Fortran routine (with ``sm1_edge``) compiled alone with
  gfortran 12 ``-O2 -fdefault-real-8 -fdefault-double-8`` and FMS's GFS ``rdgas`` = 287.05,
  ``grav`` = 9.80665, called as ``set_eta`` calls it for npz = 30 (ptop 226 Pa, pint 250 hPa,
  stretch 1.03); its ``ks`` and ``ak``/``bk`` printed to 17 digits are :data:`FORTRAN_L30_*`;
* the properties FV3's ``set_eta``/``check_eta_levels`` guarantee: ``ak[0] = ptop``, ``bk[0] = 0``,
  ``bk[-1] = 1``, ``ak[-1] = 0``, pressure strictly increasing downward at ps = 1000 hPa, the first
  ``ks`` layers pure pressure.
"""

from __future__ import annotations

import numpy as np
import pytest

from fv3core.constants import GFDL, UFS
from fv3core.errors import FV3ConfigError
from fv3core.vertical.eta import SUPPORTED_NPZ, HybridLevels, set_eta

#: JW06 appendix: A_{k+1/2} (units of p0 = 1e5 Pa), k + 1/2 = 1/2 (top) ... 26 + 1/2 (surface)
JW06_A = (
    0.002194067, 0.004895209, 0.009882418, 0.01805201, 0.02983724, 0.04462334, 0.06160587,
    0.07851243, 0.07731271, 0.07590131, 0.07424086, 0.07228744, 0.06998933, 0.06728574,
    0.06410509, 0.06036322, 0.05596111, 0.05078225, 0.04468960, 0.03752191, 0.02908949,
    0.02084739, 0.01334443, 0.00708499, 0.00252136, 0.0, 0.0,
)  # fmt: skip
#: JW06 appendix: B_{k+1/2}
JW06_B = (
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.01505309, 0.03276228, 0.05359622, 0.07810627,
    0.1069411, 0.1408637, 0.1807720, 0.2277220, 0.2829562, 0.3479364, 0.4243822, 0.5143168,
    0.6201202, 0.7235355, 0.8176768, 0.8962153, 0.9534761, 0.9851122, 1.0,
)  # fmt: skip

#: the compiled Fortran var_hi for npz = 30 (see the module docstring)
FORTRAN_L30_KS = 14
FORTRAN_L30_AK = """
225.99999999999997 712.1688711232333 1442.501208173469 2498.6923524149497 3701.1894155616205
4994.176941022932 6385.96477000286 7903.593774834447 9584.894882345197 11486.23193473017
13671.528492738014 16190.246848409106 19078.795133675965 22375.45077698318 26134.699428968648
29283.764073166825 30851.14855008558 31088.24135853846 30242.887758134046 28529.608838298347
26140.314436320423 23251.556835006148 20029.0403825392 16629.940922829934 13203.489372001437
9890.215030220814 6820.210295092668 4110.7570028834225 1863.6362556386289
-2.7755575615628914e-12 0.0
"""
FORTRAN_L30_BK = """
0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.011019793705223711
0.04215569074435054 0.09012143555352184 0.15196256308762063 0.224903281918483
0.3062432323062255 0.3932965914603678 0.48336665194733885 0.5737501066143518
0.6617657246372575 0.7448021496124372 0.8203793981258433 0.8862184552434199
0.9403132867115248 0.984873138425938 1.0
"""


def test_jw06_26_levels():
    """FV3's L26 (fv_eta.h a26/b26) is JW06's table: ak = A p0 to 1e-15 relative (the same
    decimals, A written in units of 1e5 Pa), bk = B exactly; ks = 7, ptop = A_1/2 p0 = 219.4067 Pa
    (JW06's model top, about 2.2 hPa)."""
    lev = set_eta(26)
    assert lev.npz == 26 and lev.ks == 7
    np.testing.assert_allclose(lev.ak, np.array(JW06_A) * 1.0e5, rtol=1e-15, atol=0.0)
    np.testing.assert_array_equal(lev.bk, np.array(JW06_B))
    assert lev.ptop == 219.4067 == lev.ak[0]


def test_var_hi_l30_equals_fortran():
    """npz = 30 (FV3's var_hi levels of its baroclinic-instability setting) equal the compiled
    Fortran var_hi bit for bit (ks too); ptop = ak(1) = (226/1e5) 1e5, one ulp below 226."""
    lev = set_eta(30)
    assert lev.ks == FORTRAN_L30_KS
    np.testing.assert_array_equal(lev.ak, np.array(FORTRAN_L30_AK.split(), dtype=float))
    np.testing.assert_array_equal(lev.bk, np.array(FORTRAN_L30_BK.split(), dtype=float))
    assert lev.ptop == lev.ak[0] == 225.99999999999997


def test_var_hi_depends_on_constants():
    """var_hi integrates an isothermal atmosphere with FMS's rdgas/grav: GFDL's constants give
    other levels; the tables (npz = 26) do not depend on them."""
    assert not np.array_equal(set_eta(30, constants=GFDL).ak, set_eta(30, constants=UFS).ak)
    np.testing.assert_array_equal(set_eta(26, constants=GFDL).ak, set_eta(26).ak)


@pytest.mark.parametrize("npz", SUPPORTED_NPZ)
def test_published_properties(npz):
    """set_eta's guarantees for every supported npz: npz + 1 interfaces, ak[0] = ptop > 0,
    bk[0] = 0, bk[-1] = 1, ak[-1] = 0, 0 <= bk <= 1 non-decreasing, bk = 0 on the ks + 1 top
    interfaces, and interface pressures strictly increasing at ps = 1000 hPa (and at 500 hPa,
    FV3's equivalent-shallow-water ptop aside) from ptop to ps."""
    lev = set_eta(npz)
    assert lev.ak.shape == lev.bk.shape == (npz + 1,)
    assert lev.ak.dtype == np.float64
    assert lev.ptop == lev.ak[0] > 0.0
    assert lev.bk[0] == 0.0 and lev.bk[-1] == 1.0 and lev.ak[-1] == 0.0
    assert np.all(lev.bk >= 0.0) and np.all(np.diff(lev.bk) >= 0.0)
    assert 0 <= lev.ks < npz and np.all(lev.bk[: lev.ks + 1] == 0.0)
    p = lev.interface_pressure(1.0e5)
    assert p[0] == lev.ptop and p[-1] == 1.0e5
    assert np.all(np.diff(p) > 0.0)
    if lev.ptop < 5.0e4:
        assert np.all(np.diff(lev.interface_pressure(5.0e4)) > 0.0)


@pytest.mark.parametrize("npz", [26, 30, 47, 63])
def test_pressure_methods(npz):
    """delp sums to ps - ptop (to round-off), layer pressures lie inside their layers (FV3's
    get_eta_level pf), broadcasting puts the level index last, JW06's eta at layer centres lies in
    (0, 1) increasing downward."""
    lev = set_eta(npz)
    ps = np.array([[1.0e5, 9.5e4], [1.02e5, 1.0e5]])
    pe = lev.interface_pressure(ps)
    dp = lev.delp(ps)
    pf = lev.layer_pressure(ps)
    assert pe.shape == (2, 2, npz + 1) and dp.shape == pf.shape == (2, 2, npz)
    np.testing.assert_allclose(dp.sum(axis=-1), ps - lev.ptop, rtol=1e-14)
    np.testing.assert_allclose(dp, np.diff(pe, axis=-1), rtol=1e-12, atol=1e-9)
    assert np.all((pf > pe[..., :-1]) & (pf < pe[..., 1:]))
    eta = lev.eta_layer()
    assert eta.shape == (npz,) and np.all(np.diff(eta) > 0) and 0 < eta[0] and eta[-1] < 1


def test_tables_give_fortran_decimals():
    """Spot values of fv_eta.h: a47 (Oct 2012, not OLD_L47) and a63 (GFS L64-equivalent)."""
    l47, l63 = set_eta(47), set_eta(63)
    assert l47.ks == 20 and l47.ak[0] == 10.0 and l47.ak[21] == 7019.26669 and l47.bk[21] == 0.00267
    assert l63.ks == 23 and l63.ak[-2] == 119.70243 and l63.bk[-2] == 0.99347


def test_unsupported_npz_refused():
    """npz without ported levels (52: FV3's table has no values; 75: var_gfs) and npz_type
    variants are refused, naming the key and the supported values."""
    for bad in (52, 75, 27, 0):
        with pytest.raises(FV3ConfigError, match=r"npz=.*26, 30"):
            set_eta(bad)
    with pytest.raises(FV3ConfigError, match="npz_type"):
        set_eta(63, npz_type="gfs")


def test_levels_are_frozen():
    """HybridLevels is immutable: its arrays are read-only."""
    lev = set_eta(26)
    with pytest.raises(ValueError):
        lev.ak[0] = 1.0
    with pytest.raises(AttributeError):
        lev.ks = 3  # type: ignore[misc]
    assert isinstance(lev, HybridLevels)

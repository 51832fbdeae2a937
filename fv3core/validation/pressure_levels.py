"""FV3's fields on pressure levels (``u850``, ``v850``, ``t850``, ``vort850``), ``ps`` and ``slp``
from a hydrostatic 3-D state, as NumPy functions over arrays of columns (GFDL FV3
``tools/fv_diagnostics.F90``).

Arrays: any leading column shape ``C`` (e.g. global ``(6, N, N)`` cells ``[tile, i, j]``), then
the vertical; layer fields ``C + (npz,)``, interface fields ``C + (npz+1,)``, **index 0 the model
top** (FV3's k = 1), increasing downward.  Pressures in Pa, ``peln = ln(pe / 1 Pa)``.

FV3 has two vertical interpolators, and ``fv_diagnostics`` uses them for different outputs:

* :func:`cs3_interpolator` (FV3 ``cs3_interpolator`` + ``cs_prof``, through ``make_plevs``): the
  layer values are taken as layer means over the coordinate; ``cs_prof`` reconstructs interface
  values with a cubic-spline (tridiagonal) edge fit plus FV3's "large-scale" monotonicity limits,
  and the value at the target level is the PPM parabola ``qe(k) + s (qe(k+1) - qe(k) + a6 (1-s))``
  of the layer holding it.  **This is the rule of FV3's ``u850``, ``v850``, ``t850`` and
  ``vort850``** (the ``'u'//levs``, ``'v'//...``, ``'t'//...``, ``'vort'//...`` outputs):

  ====================== ============== ========================== ==== =========================
  output                 field          coordinate                 iv   above top / below bottom
  ====================== ============== ========================== ==== =========================
  ``u850``, ``v850``     ``ua``, ``va``  ``pe`` (Pa), level 850e2  -1   ``qe`` at the top / bottom
                                                                        interface
  ``vort850``            ``get_vorticity``  ``peln``, ln(850e2)    -1   same
                         (relative, D grid)
  ``t850``               ``pt`` (T, K)   ``peln``, ln(850e2)        1   top: ``qe(1)``; below
                                                                        ``ps``: ECMWF extrapolation
                                                                        (Trenberth et al. 1993)
  ``q850``               ``sphum``       ``pe`` (Pa)                0   as winds, then max(0, q)
  ====================== ============== ========================== ==== =========================

  so u and v are interpolated in p, T and vorticity in ln p; the vorticity is the relative
  vorticity of the D-grid circulation (``get_vorticity``, the same as
  :func:`fv3core.validation.norms.dgrid_vorticity` level by level).

* :func:`interpolate_vertical` (FV3 ``interpolate_vertical``): linear in ln p between the
  **layer-mean log pressures** ``pm(k) = (peln(k) + peln(k+1)) / 2`` (not ``log(pfull)``), the top
  layer's value above ``pm(1)``, the lowest layer's below ``pm(npz)``; FV3 uses it for ``x850``
  (850-hPa helicity, the vorticity interpolated), ``rh*_cmip``, ``qn200/500/850``.

:func:`at_pressure` picks FV3's rule per quantity; ``method="linear"`` asks for
:func:`interpolate_vertical` instead (documented alternative, not FV3's for these outputs).

``ps`` is ``pe(npz+1)`` (:func:`surface_pressure`); ``slp`` (:func:`sea_level_pressure`) is FV3's
``get_height_field`` (hydrostatic: ``wz(k) = wz(k+1) + rdgas/grav T (1 + zvir q) dln p``, ``wz``
at the surface ``phis / grav``) + ``get_pressure_given_height`` at height 0 with the lowest layer's
``pt`` as ``ts``.  FV3 outputs slp in hPa (``fac = 0.01``); :func:`sea_level_pressure` returns Pa.

Every function follows the Fortran's arithmetic order, column by column vectorised over ``C``,
with the C library's ``exp``/``log`` (what gfortran calls), so FV3's own inputs give FV3's
values to the bit (checked against loop transliterations, not against a Fortran run).
"""

from __future__ import annotations

import math

import numpy as np

from fv3core.constants import UFS, Constants
from fv3core.errors import FV3ConfigError
from fv3core.grid.metric_terms import exp

_log_ufunc = np.frompyfunc(math.log, 1, 1)


def _log(x: np.ndarray) -> np.ndarray:
    """libm ``log`` elementwise (what gfortran calls; NumPy's may differ in the last bit)."""
    return np.asarray(_log_ufunc(np.asarray(x, dtype=np.float64)), dtype=np.float64)

#: FV3's ``cs3_interpolator`` ``iv``: winds, positive-definite scalars, temperature
IV_WIND = -1
IV_SCALAR = 0
IV_TEMPERATURE = 1

#: quantity name -> (FV3's coordinate: "pe" or "peln", iv) of ``make_plevs`` / ``cs3_interpolator``
FV3_RULES: dict[str, tuple[str, int]] = {
    "u": ("pe", IV_WIND),
    "v": ("pe", IV_WIND),
    "wind": ("pe", IV_WIND),
    "vort": ("peln", IV_WIND),
    "vorticity": ("peln", IV_WIND),
    "t": ("peln", IV_TEMPERATURE),
    "temperature": ("peln", IV_TEMPERATURE),
    "q": ("pe", IV_SCALAR),
    "scalar": ("pe", IV_SCALAR),
}


def _columns(field: np.ndarray, edges: np.ndarray, what: str) -> tuple[np.ndarray, np.ndarray]:
    field = np.asarray(field, dtype=np.float64)
    edges = np.asarray(edges, dtype=np.float64)
    if field.ndim < 1 or edges.shape != field.shape[:-1] + (field.shape[-1] + 1,):
        raise FV3ConfigError(
            f"{what}: the layer field has shape {field.shape} and the interface coordinate "
            f"{edges.shape}; the interfaces need the same columns and one level more "
            f"(layers C + (npz,), interfaces C + (npz+1,), level 0 the top)"
        )
    if field.shape[-1] < 2:
        raise FV3ConfigError(f"{what}: needs at least 2 layers, got {field.shape[-1]}")
    return field, edges


def interpolate_vertical(field: np.ndarray, peln: np.ndarray, plev: float) -> np.ndarray:
    """FV3 ``interpolate_vertical``: ``field`` (C + (npz,)) at pressure ``plev`` (Pa) from the
    interface log pressures ``peln`` (C + (npz+1,)), linear in ln p between the layer-mean log
    pressures ``pm(k) = 0.5 (peln(k) + peln(k+1))``; ``field[..., 0]`` where ``ln plev <= pm(1)``,
    ``field[..., -1]`` where ``ln plev >= pm(npz)``.  Returns shape C."""
    a3, peln = _columns(field, peln, "interpolate_vertical")
    if not plev > 0.0:
        raise FV3ConfigError(f"interpolate_vertical: plev={plev!r} Pa must be positive")
    logp = math.log(plev)
    pm = 0.5 * (peln[..., :-1] + peln[..., 1:])
    km = a3.shape[-1]
    # the first k (0-based) with logp <= pm(k+1): the layer pair FV3's loop finds
    k = np.minimum(np.count_nonzero(pm[..., 1:] < logp, axis=-1), km - 2)[..., None]
    pk, pk1 = np.take_along_axis(pm, k, -1)[..., 0], np.take_along_axis(pm, k + 1, -1)[..., 0]
    ak, ak1 = np.take_along_axis(a3, k, -1)[..., 0], np.take_along_axis(a3, k + 1, -1)[..., 0]
    with np.errstate(invalid="ignore", divide="ignore"):
        inner = ak + (ak1 - ak) * (logp - pk) / (pk1 - pk)
    out = np.where(logp >= pm[..., -1], a3[..., -1], inner)
    return np.where(logp <= pm[..., 0], a3[..., 0], out)


def cs_prof(q2: np.ndarray, delp: np.ndarray, iv: int) -> np.ndarray:
    """FV3 ``cs_prof``: interface values (C + (km+1,)) of the layer means ``q2`` (C + (km,)) over
    layers of thickness ``delp`` (C + (km,), in the interpolation coordinate): the cubic-spline
    edge values of a tridiagonal solve, then FV3's large-scale limits (an interface lies between
    its neighbours' means unless a mean is a local extremum; ``iv = 0`` keeps minima >= 0)."""
    q2 = np.asarray(q2, dtype=np.float64)
    delp = np.asarray(delp, dtype=np.float64)
    km = q2.shape[-1]
    if km < 2 or delp.shape != q2.shape:
        raise FV3ConfigError(f"cs_prof: q2 {q2.shape} and delp {delp.shape} must agree, km >= 2")
    q = np.empty(q2.shape[:-1] + (km + 1,))
    gam = np.empty_like(q2)
    grat = delp[..., 1] / delp[..., 0]
    bet = grat * (grat + 0.5)
    q[..., 0] = ((grat + grat) * (grat + 1.0) * q2[..., 0] + q2[..., 1]) / bet
    gam[..., 0] = (1.0 + grat * (grat + 1.5)) / bet
    d4 = grat
    for k in range(1, km):
        d4 = delp[..., k - 1] / delp[..., k]
        bet = 2.0 + d4 + d4 - gam[..., k - 1]
        q[..., k] = (3.0 * (q2[..., k - 1] + d4 * q2[..., k]) - q[..., k - 1]) / bet
        gam[..., k] = d4 / bet
    a_bot = 1.0 + d4 * (d4 + 1.5)
    top = 2.0 * d4 * (d4 + 1.0) * q2[..., km - 1] + q2[..., km - 2] - a_bot * q[..., km - 1]
    q[..., km] = top / (d4 * (d4 + 0.5) - a_bot * gam[..., km - 1])
    for k in range(km - 1, -1, -1):
        q[..., k] = q[..., k] - gam[..., k] * q[..., k + 1]

    def between(k: int, lo: np.ndarray, hi: np.ndarray) -> None:
        q[..., k] = np.maximum(np.minimum(q[..., k], np.maximum(lo, hi)), np.minimum(lo, hi))

    # large-scale constraints (Fortran k = 2 is Python 1)
    between(1, q2[..., 0], q2[..., 1])
    dq = np.diff(q2, axis=-1)  # dq[..., k-1] = Fortran gam(k) = q2(k) - q2(k-1), k = 2..km
    for k in range(2, km - 1):  # Fortran k = 3 .. km-1
        a, b = q2[..., k - 1], q2[..., k]
        g_below, g_above = dq[..., k - 2], dq[..., k]  # Fortran gam(k-1), gam(k+1)
        qk = q[..., k]
        mono = np.maximum(np.minimum(qk, np.maximum(a, b)), np.minimum(a, b))
        local_max = np.maximum(qk, np.minimum(a, b))
        local_min = np.minimum(qk, np.maximum(a, b))
        if iv == IV_SCALAR:
            local_min = np.maximum(0.0, local_min)
        q[..., k] = np.where(g_below * g_above > 0.0, mono,
                             np.where(g_below > 0.0, local_max, local_min))  # fmt: skip
    between(km - 1, q2[..., km - 2], q2[..., km - 1])
    return q


def cs3_interpolator(field: np.ndarray, coordinate: np.ndarray, level: float, iv: int, *,
                     phis: np.ndarray | None = None, constants: Constants = UFS
                     ) -> np.ndarray:  # fmt: skip
    """FV3 ``cs3_interpolator`` at one target ``level`` (in the units of ``coordinate``: Pa with
    ``pe``, ln Pa with ``peln``): ``field`` (C + (npz,)) from the interface ``coordinate``
    (C + (npz+1,)).  Returns shape C.

    * ``level <= coordinate[..., 0]`` (above the top): the top interface value ``qe(1)``;
    * ``level >= coordinate[..., -1]`` (below the surface): ``qe(npz+1)``, except ``iv = 1``
      (temperature, ``coordinate = peln``): FV3's ECMWF rule from the lowest layer's T, the
      surface height ``zsurf = phis / grav`` (``phis`` in m^2/s^2, shape C, required) and a
      6.5 K/km lapse rate (reduced over terrain above 2000 m), ``ts (p / ps)^alpha``;
    * otherwise the PPM value inside the layer ``k`` with ``coordinate(k) <= level <=
      coordinate(k+1)`` (the first such k);
    * ``iv = 0``: the result is clipped at 0."""
    q2, pe = _columns(field, coordinate, "cs3_interpolator")
    if iv not in (IV_WIND, IV_SCALAR, IV_TEMPERATURE):
        raise FV3ConfigError(f"cs3_interpolator: iv={iv!r}; FV3 knows -1 (winds), 0 (scalars), "
                             f"1 (temperature)")  # fmt: skip
    km = q2.shape[-1]
    dp = pe[..., 1:] - pe[..., :-1]
    qe = cs_prof(q2, dp, iv)
    k = np.minimum(np.count_nonzero(pe[..., 1:-1] < level, axis=-1), km - 1)[..., None]

    def at(a: np.ndarray, kk: np.ndarray) -> np.ndarray:
        return np.take_along_axis(a, kk, -1)[..., 0]

    qek, qek1, q2k, dpk = at(qe, k), at(qe, k + 1), at(q2, k), at(dp, k)
    a6 = 3.0 * (2.0 * q2k - (qek + qek1))
    s0 = (level - at(pe, k)) / dpk
    inner = qek + s0 * (qek1 - qek + a6 * (1.0 - s0))
    below = level >= pe[..., -1]
    if iv == IV_TEMPERATURE:
        bottom = _temperature_below_ground(q2, pe, level, phis, constants, below)
    else:
        bottom = qe[..., -1]
    out = np.where(level <= pe[..., 0], qe[..., 0], np.where(below, bottom, inner))
    if iv == IV_SCALAR:
        out = np.maximum(0.0, out)
    return out


def _temperature_below_ground(q2: np.ndarray, peln: np.ndarray, level: float,
                              phis: np.ndarray | None, c: Constants, below: np.ndarray
                              ) -> np.ndarray:  # fmt: skip
    """``cs3_interpolator``'s ``iv == 1`` branch under the surface (Trenberth et al. 1993)."""
    cols = q2.shape[:-1]
    if phis is None:
        if np.any(below):
            raise FV3ConfigError(
                f"cs3_interpolator: level {level} lies below the surface in {int(np.sum(below))} "
                f"column(s); FV3 extrapolates the temperature with the surface height: pass phis "
                f"(m^2/s^2)"
            )
        return np.full(cols, np.nan)
    phis = np.broadcast_to(np.asarray(phis, dtype=np.float64), cols)
    zsurf = (1.0 / c.grav) * phis
    grav, rdgas = c.grav, c.rdgas
    pe_km, pe_km1 = peln[..., -2], peln[..., -1]
    tk = q2[..., -1]
    alpha = np.full(cols, 0.0065 * rdgas / grav)
    pbot = (exp(pe_km1) - exp(pe_km)) / (pe_km1 - pe_km)
    ts = tk + alpha * tk * (exp(pe_km1) / pbot - 1.0)
    t0 = ts + 0.0065 * zsurf
    tmp = np.minimum(t0, 298.0)
    high = zsurf >= 2000.0
    tmp = np.where(high & (zsurf <= 2500.0),
                   0.002 * ((2500.0 - zsurf) * t0 + (zsurf - 2000.0) * tmp), tmp)  # fmt: skip
    with np.errstate(invalid="ignore", divide="ignore"):
        terrain = np.where(tmp - ts < 0.0, 0.0, rdgas * (tmp - ts) / (zsurf * grav))
    alpha = np.where(high, terrain, alpha)
    return ts * exp(alpha * (level - pe_km1))


def at_pressure(field: np.ndarray, p: float, *, quantity: str, pe: np.ndarray | None = None,
                peln: np.ndarray | None = None, phis: np.ndarray | None = None,
                method: str = "fv3", constants: Constants = UFS) -> np.ndarray:  # fmt: skip
    """``field`` (C + (npz,)) at pressure ``p`` (Pa) as FV3 computes that output
    (:data:`FV3_RULES`): ``quantity`` ``"u"``/``"v"``/``"wind"`` (A-grid winds, m/s, in p from
    ``pe``), ``"vort"`` (relative vorticity, 1/s, in ln p from ``peln``), ``"t"`` (temperature,
    K, in ln p from ``peln``, ``phis`` for levels below the surface) or ``"q"`` (in p, >= 0).

    ``pe`` (Pa) and ``peln`` are interfaces C + (npz+1,); either gives the other (``peln =
    ln pe``, ``pe = exp(peln)``), pass FV3's own to match it to the bit.  ``method="linear"``
    uses :func:`interpolate_vertical` (linear in ln p between layer-mean ln p) for any quantity
    instead of FV3's ``cs3_interpolator``."""
    if quantity not in FV3_RULES:
        raise FV3ConfigError(f"at_pressure: quantity={quantity!r}; use one of {sorted(FV3_RULES)}")
    if not p > 0.0:
        raise FV3ConfigError(f"at_pressure: p={p!r} Pa must be positive")
    if pe is None and peln is None:
        raise FV3ConfigError("at_pressure: pass the interface pressures pe (Pa) or peln = ln pe")
    if method == "linear":
        return interpolate_vertical(field, peln if peln is not None else _log(pe), p)
    if method != "fv3":
        raise FV3ConfigError(f"at_pressure: method={method!r}; use 'fv3' or 'linear'")
    coordinate, iv = FV3_RULES[quantity]
    if coordinate == "pe":
        edges = pe if pe is not None else exp(peln)
        return cs3_interpolator(field, edges, p, iv, phis=phis, constants=constants)
    edges = peln if peln is not None else _log(pe)
    return cs3_interpolator(field, edges, math.log(p), iv, phis=phis, constants=constants)


def fields_at_850(ua: np.ndarray, va: np.ndarray, pt: np.ndarray, vort: np.ndarray,
                  pe: np.ndarray, peln: np.ndarray, phis: np.ndarray, *,
                  constants: Constants = UFS) -> dict[str, np.ndarray]:  # fmt: skip
    """FV3's ``u850``, ``v850`` (m/s), ``t850`` (K) and ``vort850`` (1/s) of one state:
    :func:`at_pressure` at 850e2 Pa with FV3's rule for each."""
    p = 850.0e2
    return {
        "u850": at_pressure(ua, p, quantity="u", pe=pe, peln=peln),
        "v850": at_pressure(va, p, quantity="v", pe=pe, peln=peln),
        "t850": at_pressure(pt, p, quantity="t", pe=pe, peln=peln, phis=phis,
                            constants=constants),  # fmt: skip
        "vort850": at_pressure(vort, p, quantity="vort", pe=pe, peln=peln),
    }


def surface_pressure(pe: np.ndarray) -> np.ndarray:
    """FV3's ``ps`` (Pa): the lowest interface pressure ``pe(npz+1)``."""
    return np.asarray(pe, dtype=np.float64)[..., -1]


def height_field(pt: np.ndarray, peln: np.ndarray, phis: np.ndarray, *,
                 q: np.ndarray | None = None, constants: Constants = UFS) -> np.ndarray:  # fmt: skip
    """FV3 ``get_height_field`` (hydrostatic): interface heights ``wz`` (m, C + (npz+1,)) from
    ``zsurf = phis / grav`` up, ``wz(k) = wz(k+1) + rdgas/grav pt(k) (1 + zvir q(k)) (peln(k+1) -
    peln(k))``; ``q`` the specific humidity (None: dry)."""
    pt, peln = _columns(pt, peln, "height_field")
    c = constants
    ginv = 1.0 / c.grav
    gg = c.rdgas * ginv
    tv = pt if q is None else pt * (1.0 + c.zvir * np.asarray(q, dtype=np.float64))
    wz = np.empty(peln.shape)
    wz[..., -1] = ginv * np.broadcast_to(np.asarray(phis, dtype=np.float64), pt.shape[:-1])
    for k in range(pt.shape[-1] - 1, -1, -1):
        wz[..., k] = wz[..., k + 1] + gg * tv[..., k] * (peln[..., k + 1] - peln[..., k])
    return wz


def sea_level_pressure(pt: np.ndarray, peln: np.ndarray, phis: np.ndarray, *,
                       q: np.ndarray | None = None, constants: Constants = UFS
                       ) -> np.ndarray:  # fmt: skip
    """FV3's ``slp`` in Pa (FV3 writes it in hPa): ``get_pressure_given_height`` at height 0
    from :func:`height_field`: log-linear in height inside the layer holding z = 0, or below the
    surface ``exp(peln(npz+1) + zsurf / tm)``, ``tm = rdgas/grav (ts + 3.25e-3 wz(npz))``, with
    ``ts`` the lowest layer's ``pt``."""
    pt, peln = _columns(pt, peln, "sea_level_pressure")
    c = constants
    ginv = 1.0 / c.grav
    wz = height_field(pt, peln, phis, q=q, constants=c)
    height = 0.0
    above = height >= wz[..., -1]
    # first k with wz(k+1) <= 0 < wz(k), i.e. the layer holding z = 0 (wz decreases with k)
    k = np.minimum(np.count_nonzero(wz[..., 1:] > height, axis=-1), pt.shape[-1] - 1)[..., None]

    def at(a: np.ndarray, kk: np.ndarray) -> np.ndarray:
        return np.take_along_axis(a, kk, -1)[..., 0]

    with np.errstate(invalid="ignore", divide="ignore"):
        ptmp = at(peln, k) + (at(peln, k + 1) - at(peln, k)) * (at(wz, k) - height) / (
            at(wz, k) - at(wz, k + 1))
    tm = c.rdgas * ginv * (pt[..., -1] + 3.25e-3 * (wz[..., -2] - height))
    below = exp(peln[..., -1] + (wz[..., -1] - height) / tm)
    return np.where(above, exp(ptmp), below)

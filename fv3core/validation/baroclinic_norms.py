"""Diagnostics of the Jablonowski-Williamson baroclinic-wave test (JW06: Jablonowski &
Williamson 2006, Q. J. R. Meteorol. Soc. 132, 2943-2975) and FV3's global invariants of a
hydrostatic 3-D state, as NumPy functions of gathered global arrays.

Shapes: cell fields ``(6, N, N)`` ``[tile, i, j]`` (or any column shape C), layer fields
C + (npz,), interface fields C + (npz+1,), level 0 the model top; D-grid winds ``u``
(6, N, N+1, npz) on the cells' south/north edges and ``v`` (6, N+1, N, npz) on the west/east
edges (as :func:`fv3core.validation.norms.dgrid_vorticity`).  Lat-lon fields ``(nlat, nlon[,
npz])`` ``[lat, lon]`` as :class:`fv3core.grid.latlon_regrid.LatLonRegridder` returns them.
SI units: Pa, K, m/s, m^2 (areas), m^2/s^2 (geopotential), kg, J.

* :func:`zonal_mean_wind_l2`: JW06's steady-state error norm of the zonal-mean zonal wind
  (written from its definition, not checked against the paper's equation), implemented as

  ``l2(t) = sqrt( sum_jk (ubar_jk(t) - ubar_jk(0))^2 cos(lat_j) dp_jk
  / sum_jk cos(lat_j) dp_jk )``

  with ``ubar_jk`` the zonal mean over the lon points of latitude j on model level k (JW06
  evaluate it on the model levels, interpolated to a lat-lon grid) and ``dp_jk`` the zonal mean
  layer thickness (Pa or Delta-eta: it is normalised away).  It is the discrete form of
  ``sqrt( iiint (ubar(t) - ubar(0))^2 dA deta / iiint dA deta )``: on a regular lat-lon grid
  the band area ``2 pi a^2 (sin lat_{j+1/2} - sin lat_{j-1/2})`` is proportional to
  ``cos(lat_j)`` exactly, and the zonal integral of a zonal mean is ``2 pi`` times it.  For
  the steady state (``ps = 1000 hPa``) ``dp = 1e5 Pa Delta-eta``, i.e. JW06's ``Delta-eta``.
* :func:`extrema`: min/max (of ps) and the lon/lat of the cell where each is attained.
* :func:`dry_air_mass`: ``sum delp (1 - q_water) area / g`` (kg) (FV3 ``prt_mass``'s dry
  surface pressure times area / g; ``q_water = 0`` for the dry JW case).
* :func:`tracer_mass`: ``sum q delp area / g`` (kg), FV3's ``z_sum`` of ``delp q`` times area.
* :func:`total_energy`: FV3 ``compute_total_energy`` (model/fv_thermodynamics.F90),
  hydrostatic branch, per column (J/m^2 after the division by g)::

      phiz(npz+1) = phis;   phiz(k) = phiz(k+1) + rdgas tv(k) (peln(k+1) - peln(k))
      te = pe(npz+1) phiz(npz+1) - pe(1) phiz(1)
           + sum_k delp(k) (cp tv(k) + 0.25 rsin2 (u^2 + u'^2 + v^2 + v'^2
                                                    - (u + u')(v + v') cosa_s))

  ``tv = pt (1 + zvir q)`` (FV3's ``pt (1 + qc)``; ``pt`` the temperature), ``u, u'`` the
  D-grid winds on the cell's south and north edges, ``v, v'`` west and east, ``rsin2``,
  ``cosa_s`` FV3's cell-centre metric terms (``1/sin^2`` and ``cos`` of the angle between the
  grid lines).  The terms are ``cp T`` (enthalpy), ``|V|^2 / 2`` of the cell-mean covariant
  winds, and the potential energy integrated by parts: ``te = integral (cp T + K) dp + ps phis -
  ptop phiz(top) = integral (cv T + Phi + K) dp`` over the column (hydrostatic, ``dPhi = -rdgas
  T dln p``), i.e. ``cp T + Phi_s + K`` per unit mass when ``ptop = 0``.  The global total is
  ``sum te area / g`` (J); FV3 sums ``te_2d area`` (``g_sum``) without the 1/g.
* :func:`printed_extrema`: what FV3's ``fv_diag`` prints every ``print_freq`` for the 3-D
  core (``prt_mxm``, tools/fv_diagnostics.F90): the max and min over every cell and layer of
  ``ps`` (hPa), ``ua``, ``va`` and ``ta``, and ``g_sum``'s area-weighted mean of the *lowest*
  layer (``prt_mxm`` passes ``q(:, :, km)`` to ``g_sum``), under FV3's names ``PS_max``,
  ``UA_mean``, ...
"""

from __future__ import annotations

import numpy as np

from fv3core.constants import UFS, Constants
from fv3core.errors import FV3ConfigError


def _same(name: str, a: np.ndarray, ref_name: str, ref: np.ndarray) -> None:
    if np.shape(a) != np.shape(ref):
        raise FV3ConfigError(f"{name} has shape {np.shape(a)}, {ref_name} {np.shape(ref)}: "
                             f"they must agree")  # fmt: skip


def zonal_mean_wind_l2(u: np.ndarray, u0: np.ndarray, lat: np.ndarray,
                       dp: np.ndarray) -> float:  # fmt: skip
    """JW06's l2 norm (m/s) of the zonal-mean zonal wind change, see the module docstring.

    ``u``, ``u0`` (nlat, nlon, npz): eastward wind at time t and at t = 0 on the model levels,
    regridded to lat-lon; ``lat`` (nlat,) degrees; ``dp``: layer thickness, (npz,) or
    (nlat, nlon, npz), Pa or Delta-eta (only its relative size matters)."""
    u, u0 = np.asarray(u, dtype=np.float64), np.asarray(u0, dtype=np.float64)
    lat = np.asarray(lat, dtype=np.float64)
    if u.ndim != 3:
        raise FV3ConfigError(f"zonal_mean_wind_l2: u has shape {u.shape}; expected "
                             f"(nlat, nlon, npz) (lat-lon on model levels)")  # fmt: skip
    _same("u0", u0, "u", u)
    if lat.shape != (u.shape[0],):
        raise FV3ConfigError(f"zonal_mean_wind_l2: lat has shape {lat.shape}; expected "
                             f"({u.shape[0]},) (one per row of u)")  # fmt: skip
    dp = np.asarray(dp, dtype=np.float64)
    if dp.shape == (u.shape[2],):
        dp_bar = np.broadcast_to(dp, (u.shape[0], u.shape[2]))
    elif dp.shape == u.shape:
        dp_bar = dp.mean(axis=1)
    else:
        raise FV3ConfigError(f"zonal_mean_wind_l2: dp has shape {dp.shape}; expected "
                             f"({u.shape[2]},) or {u.shape}")  # fmt: skip
    if np.any(dp_bar < 0.0) or not np.all(np.isfinite(dp_bar)):
        raise FV3ConfigError("zonal_mean_wind_l2: dp must be finite and >= 0")
    diff = u.mean(axis=1) - u0.mean(axis=1)  # (nlat, npz)
    w = np.cos(np.deg2rad(lat))[:, None] * dp_bar
    total = float(np.sum(w))
    if total <= 0.0:
        raise FV3ConfigError("zonal_mean_wind_l2: the weights cos(lat) dp sum to 0")
    return float(np.sqrt(np.sum(diff**2 * w) / total))


def extrema(field: np.ndarray, lon: np.ndarray, lat: np.ndarray) -> dict[str, float]:
    """``min``, ``max`` of ``field`` and where: ``min_lon``, ``min_lat``, ``max_lon``,
    ``max_lat`` (the first cell in C order attaining each; ``lon``, ``lat`` in degrees, of the
    field's shape or broadcastable to it, e.g. 1-D lon/lat of a (nlat, nlon) field: pass
    ``lon[None, :]``, ``lat[:, None]``)."""
    field = np.asarray(field, dtype=np.float64)
    try:
        lon_b, lat_b = np.broadcast_to(lon, field.shape), np.broadcast_to(lat, field.shape)
    except ValueError:
        raise FV3ConfigError(f"extrema: lon {np.shape(lon)} / lat {np.shape(lat)} do not "
                             f"broadcast to the field {field.shape}") from None  # fmt: skip
    if field.size == 0 or not np.all(np.isfinite(field)):
        raise FV3ConfigError(f"extrema: the field (shape {field.shape}) is empty or not finite")
    imin, imax = np.unravel_index(np.argmin(field), field.shape), np.unravel_index(
        np.argmax(field), field.shape)
    return {"min": float(field[imin]), "min_lon": float(lon_b[imin]),
            "min_lat": float(lat_b[imin]), "max": float(field[imax]),
            "max_lon": float(lon_b[imax]), "max_lat": float(lat_b[imax])}  # fmt: skip


def dry_air_mass(delp: np.ndarray, area: np.ndarray, *, q_water: np.ndarray | None = None,
                 constants: Constants = UFS) -> float:  # fmt: skip
    """``sum delp (1 - q_water) area / grav`` (kg): ``delp`` (Pa) C + (npz,), ``area`` (m^2) C,
    ``q_water`` the total water mixing ratio (kg/kg, None: dry air)."""
    delp = np.asarray(delp, dtype=np.float64)
    if delp.ndim < 2 or delp.shape[:-1] != np.shape(area):
        raise FV3ConfigError(f"dry_air_mass: delp {delp.shape} must be area {np.shape(area)} + "
                             f"(npz,)")  # fmt: skip
    dry = delp if q_water is None else delp * (1.0 - np.asarray(q_water, dtype=np.float64))
    return float(np.sum(dry.sum(axis=-1) * area) / constants.grav)


def tracer_mass(q: np.ndarray, delp: np.ndarray, area: np.ndarray, *,
                constants: Constants = UFS) -> float:  # fmt: skip
    """``sum q delp area / grav`` (kg for q in kg/kg): ``q``, ``delp`` C + (npz,), ``area`` C."""
    q = np.asarray(q, dtype=np.float64)
    _same("q", q, "delp", delp)
    if q.ndim < 2 or q.shape[:-1] != np.shape(area):
        raise FV3ConfigError(f"tracer_mass: q {q.shape} must be area {np.shape(area)} + (npz,)")
    column = np.zeros(q.shape[:-1])
    for k in range(q.shape[-1]):  # FV3's z_sum, top down
        column = column + np.asarray(delp)[..., k] * q[..., k]
    return float(np.sum(column * area) / constants.grav)


def dgrid_kinetic_energy(u: np.ndarray, v: np.ndarray, rsin2: np.ndarray,
                         cosa_s: np.ndarray) -> np.ndarray:  # fmt: skip
    """FV3's cell kinetic energy per unit mass (m^2/s^2) of D-grid winds, C + (npz,):
    ``0.25 rsin2 (u^2 + u'^2 + v^2 + v'^2 - (u + u')(v + v') cosa_s)``; ``u`` (6, N, N+1, npz),
    ``v`` (6, N+1, N, npz), ``rsin2``, ``cosa_s`` (6, N, N)."""
    u, v = np.asarray(u, dtype=np.float64), np.asarray(v, dtype=np.float64)
    rsin2 = np.asarray(rsin2, dtype=np.float64)
    t, ni, nj = rsin2.shape
    if u.shape[:3] != (t, ni, nj + 1) or v.shape[:3] != (t, ni + 1, nj):
        raise FV3ConfigError(f"dgrid_kinetic_energy: u {u.shape} must be {(t, ni, nj + 1)} + "
                             f"(npz,), v {v.shape} {(t, ni + 1, nj)} + (npz,) for cells "
                             f"{rsin2.shape}")  # fmt: skip
    _same("cosa_s", cosa_s, "rsin2", rsin2)
    us, un = u[:, :, :-1], u[:, :, 1:]
    vw, ve = v[:, :-1, :], v[:, 1:, :]
    extra = (1,) * (u.ndim - 3)
    r = rsin2.reshape(rsin2.shape + extra)
    c = np.asarray(cosa_s, dtype=np.float64).reshape(rsin2.shape + extra)
    return 0.25 * r * (us**2 + un**2 + vw**2 + ve**2 - (us + un) * (vw + ve) * c)


def column_total_energy(pt: np.ndarray, delp: np.ndarray, pe: np.ndarray, peln: np.ndarray,
                        phis: np.ndarray, kinetic: np.ndarray, *, q: np.ndarray | None = None,
                        constants: Constants = UFS) -> np.ndarray:  # fmt: skip
    """FV3 ``compute_total_energy``'s hydrostatic ``te_2d`` (Pa m^2/s^2 = g J/m^2) per column C:
    ``pt`` (K), ``delp`` (Pa), ``kinetic`` (m^2/s^2, e.g. :func:`dgrid_kinetic_energy` or
    ``0.5 (ua^2 + va^2)``) C + (npz,); ``pe`` (Pa), ``peln`` C + (npz+1,); ``phis`` (m^2/s^2)
    C; ``q`` specific humidity (None: dry, tv = pt)."""
    pt = np.asarray(pt, dtype=np.float64)
    for name, a, shape in (("delp", delp, pt.shape), ("kinetic", kinetic, pt.shape),
                           ("pe", pe, pt.shape[:-1] + (pt.shape[-1] + 1,)),
                           ("peln", peln, pt.shape[:-1] + (pt.shape[-1] + 1,)),
                           ("phis", phis, pt.shape[:-1])):  # fmt: skip
        if np.shape(a) != shape:
            raise FV3ConfigError(f"total energy: {name} has shape {np.shape(a)}, expected "
                                 f"{shape} for pt {pt.shape}")  # fmt: skip
    c = constants
    tv = pt if q is None else pt * (1.0 + c.zvir * np.asarray(q, dtype=np.float64))
    km = pt.shape[-1]
    phiz = np.asarray(phis, dtype=np.float64)
    phiz_bottom = phiz
    for k in range(km - 1, -1, -1):
        phiz = phiz + c.rdgas * tv[..., k] * (peln[..., k + 1] - peln[..., k])
    te = pe[..., km] * phiz_bottom - pe[..., 0] * phiz
    for k in range(km):
        te = te + delp[..., k] * (c.cp_air * tv[..., k] + kinetic[..., k])
    return te


def total_energy(pt: np.ndarray, delp: np.ndarray, pe: np.ndarray, peln: np.ndarray,
                 phis: np.ndarray, kinetic: np.ndarray, area: np.ndarray, *,
                 q: np.ndarray | None = None, constants: Constants = UFS) -> float:  # fmt: skip
    """Global total energy (J): ``sum column_total_energy * area / grav`` (``area`` in m^2)."""
    te = column_total_energy(pt, delp, pe, peln, phis, kinetic, q=q, constants=constants)
    if np.shape(area) != te.shape:
        raise FV3ConfigError(f"total_energy: area {np.shape(area)} must be the columns {te.shape}")
    return float(np.sum(te * area) / constants.grav)


#: the quantities of FV3's per-step prints (prt_mxm) and their scale factor to the printed unit
PRINTED_QUANTITIES = {"PS": 0.01, "UA": 1.0, "VA": 1.0, "TA": 1.0, "W": 1.0}


def printed_extrema(fields: dict[str, np.ndarray], area: np.ndarray) -> dict[str, float]:
    """FV3's printed ``<Q>_max``, ``<Q>_min`` and ``<Q>_mean`` (``prt_mxm``) of ``ps`` (C, Pa,
    printed in hPa), ``ua``, ``va`` (m/s) and ``temperature`` (K; FV3's ``TA``), layer fields
    C + (npz,): max/min over every cell and layer, the mean ``sum q area / sum area`` of the
    lowest layer (``ps``: of itself); non-hydrostatic (``w`` given) also ``W`` (m/s)."""
    area = np.asarray(area, dtype=np.float64)
    out: dict[str, float] = {}
    quantities = [("PS", "ps"), ("UA", "ua"), ("VA", "va"), ("TA", "temperature")]
    for name, key in quantities + ([("W", "w")] if "w" in fields else []):
        q = np.asarray(fields[key], dtype=np.float64) * PRINTED_QUANTITIES[name]
        bottom = q if q.shape == area.shape else q[..., -1]
        _same(f"{key} (lowest layer)", bottom, "area", area)
        out[f"{name}_max"], out[f"{name}_min"] = float(q.max()), float(q.min())
        out[f"{name}_mean"] = float(np.sum(bottom * area) / np.sum(area))
    return out

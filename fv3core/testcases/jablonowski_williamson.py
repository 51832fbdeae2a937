"""FV3's Jablonowski-Williamson baroclinic wave, ``test_case = 13`` (tools/test_cases.F90
``init_case``), on FV3's grid, for the hydrostatic 3-D core; and JW06's analytic fields.

Reference: Jablonowski & Williamson (2006), Q. J. R. Meteorol. Soc. 132, 2943-2975 ("JW06"):
u0 = 35 m/s, eta0 = 0.252, eta_s = 1, eta_t = 0.2, T0 = 288 K, Gamma = 0.005 K/m,
Delta T = 4.8e5 K, the zonal-wind perturbation u_p = 1 m/s exp(-(r/R)^2), R = a/10, centred at
(20 E, 40 N).  FV3's ``init_case`` for ``test_case = 13`` (``12`` is the same without the
perturbation: its ``r0 = 1 m`` adds it only at points within 6.3 m of the centre, none on FV3's
grids) does, and :func:`init_jw` does alike (``perturbation=False`` for test_case 12):

* ``ps = 1000 hPa``; ``delp(k) = ak(k+1) - ak(k) + ps (bk(k+1) - bk(k))`` (the levels of
  :func:`fv3core.vertical.eta.set_eta`); FV3's ``p_var`` then sets ``pe`` (``ptop`` + the sum of
  ``delp`` from the top), ``peln = ln pe``, ``pk = pe^kappa``, ``ps = pe(npz+1)`` (= 1e5 Pa to
  round-off) and the hydrostatic ``pkz = (pk(k+1) - pk(k)) / (kappa (peln(k+1) - peln(k)))``;
* eta at a layer: ``0.5 ((ak(k) + ak(k+1))/1e5 + bk(k) + bk(k+1))`` (the interfaces' mean at
  ps = 1e5 Pa), ``eta_v = (eta - eta0) pi/2``;
* D-grid winds: JW06's zonal wind (with the perturbation if ``perturbation``) at an edge's two
  corners projected on ``ee1``/``ee2`` and at its great-circle midpoint on ``es``/``ew``
  (``u = (uu1 + 2 uu2 + uu3)/4``; the projection of an eastward wind ``U`` on a unit vector
  ``e`` is ``U (e_y cos(lon) - e_x sin(lon))``), then ``mp_update_dwinds``;
* ``pt``: JW06's temperature averaged over 9 points of the cell (weights 1/4 the centre
  ``agrid``, 1/8 the 4 edge midpoints, 1/16 the 4 corners; FV3's ``NO_AVG13`` is not set);
* ``phis``: JW06's surface geopotential at eta_s = 1, the same 9-point average, then the halo
  update (``phis = 1e25`` left in the cube-corner halo regions, as FV3 sets it);
* tracers: FV3 zeroes all (``q = 0``); if not ``adiabatic`` (FV3's namelist ``adiabatic``,
  default ``.false.``) the tracer ``sphum`` gets the DCMIP-2016 moist-baroclinic-wave humidity
  ``0.021 exp(-(lat/(2 pi/9))^4) exp(-((delp/dln pe - 1e5)/34000)^2)`` and ``pt`` is divided by
  ``1 + zvir q`` (FV3 takes the temperature above as virtual); after ``p_var``,
  ``checker_tr`` (``test_case_nml``) sets every tracer to FV3's 20-degree checkerboard
  (``checker_tracers`` with nx = ny = 9) and, if the tracers ``cl`` and ``cl2`` exist, FV3's
  DCMIP-2016 terminator tracers (``terminator_tracers``) replace them.  JW06 itself defines no
  tracer; these are FV3's.

**What FV3 stores as pt at init**: the (dry) temperature T in K, not a potential temperature
(``fv_dynamics`` converts it to virtual potential temperature with ``pkz`` on entry and back on
exit).  With ``adiabatic`` (or q = 0) T is also the virtual temperature.

The floating-point operations follow the Fortran's order with the C library's transcendental
functions (as :mod:`fv3core.testcases.shallow_water`), for FV3's 64-bit build (gfortran, no FMA):
at C24 L26 every delp, pt, ps, phis, sphum and D-grid u, v value equals GFDL's Fortran FV3's
t = 0 output bit for bit (tests/fv3core/test_jablonowski_williamson.py).  With
``hydrostatic=False`` FV3's non-hydrostatic start: ``w = 0`` and the layer thicknesses of the
hydrostatic state, ``delz = rdgas / grav T (peln(k) - peln(k+1))`` (negative, m), from the
temperature before any humidity correction, as ``init_case`` does.  Not set: the
``qdry``/``qmoist``/``qtotal`` tracers (refused), ``nwat`` moisture species other than sphum.

Per-rank state (:meth:`JWInitialState.for_rank` -> :class:`JWRankState`), halo ``h = 3`` (the
cube's ``n_halo``), ``nx x ny`` compute cells, ``nz = npz`` layers; every array float64, index
``[i, j, k]`` with Python index ``h`` the first compute point and **k = 0 the model top** (FV3's
k = 1), increasing downward:

============ ====================== ========= ===============================================
field        shape                  units     meaning
============ ====================== ========= ===============================================
``delp``     (nx+6, ny+6, nz)       Pa        layer pressure thickness (halo: updated; 0 in
                                              the cube-corner regions, as FV3)
``pt``       (nx+6, ny+6, nz)       K         temperature T (halo: updated; FV3's 1.0 in the
                                              cube-corner regions)
``u``        (nx+6, ny+7, nz)       m/s       D-grid wind along the cell's x-edges (y-faces,
                                              FV3 ``u(isd:ied, jsd:jed+1)``), halo updated
``v``        (nx+7, ny+6, nz)       m/s       D-grid wind along the y-edges (x-faces)
``ua``,      (nx+6, ny+6, nz)       m/s       A-grid east/north winds, FV3's ``cubed_to_latlon``
``va``                                        (``c2l_ord = 4``) of u, v; NaN in the halo
``q``        {name: (nx+6, ny+6,    kg/kg     tracers in FV3's order (``tracer_names``), halo
             nz)}                             updated, 0 in the corner regions
``phis``     (nx+6, ny+6)           m^2/s^2   surface geopotential (1e25 in the corner regions)
``ps``       (nx+6, ny+6)           Pa        surface pressure ``pe(npz+1)`` (halo: FV3's 1e5)
``pe``       (nx+6, ny+6, nz+1)     Pa        interface pressures, top (= ptop) first;
                                              compute domain only, NaN in the halo
``peln``     (nx+6, ny+6, nz+1)     1         ln(pe) (FV3's ``p_var``; NaN in the halo)
``pk``       (nx+6, ny+6, nz+1)     Pa^kappa  pe^kappa (NaN in the halo)
``pkz``      (nx+6, ny+6, nz)       Pa^kappa  hydrostatic layer-mean p^kappa (NaN in the halo)
``w``        (nx+6, ny+6, nz)       m/s       non-hydrostatic only (else None): 0
``delz``     (nx+6, ny+6, nz)       m         non-hydrostatic only: layer thickness, < 0
                                              (NaN in the halo)
============ ====================== ========= ===============================================

``levels`` (a :class:`~fv3core.vertical.eta.HybridLevels`: ``ak``, ``bk``, ``ks``, ``ptop``)
and ``constants`` (FMS's set: ``rdgas``, ``grav``, ``kappa``...) travel with the state.

Analytic JW06 fields (NumPy, any broadcastable lon, lat in radians and eta in (0, 1]):
:func:`jw_zonal_wind`, :func:`jw_temperature`, :func:`jw_geopotential`,
:func:`jw_surface_geopotential`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from fv3core.constants import UFS, Constants
from fv3core.errors import FV3ConfigError
from fv3core.grid.cubed_to_latlon import c2l_ord4
from fv3core.grid.metric_terms import (
    N_TILES,
    CubedSphere,
    FortranIndex,
    cos,
    exp,
    fpow,
    great_circle_dist,
    mid_pt_sphere,
    points_at,
    rank_slice,
    sin,
)
from fv3core.grid.subdomain import SubdomainSpec
from fv3core.vertical.eta import HybridLevels

PI = math.pi

# JW06's parameters, as test_cases.F90 sets them
U0 = 35.0  #: maximum zonal wind, m/s (FV3 ``Ubar``)
ETA_0 = 0.252  #: eta of the jet maximum
ETA_S = 1.0  #: surface eta
ETA_T = 0.2  #: tropopause eta
T_0 = 288.0  #: surface mean temperature, K
DELTA_T = 480000.0  #: stratospheric temperature parameter, K
LAPSE_RATE = 0.005  #: Gamma, K/m
PS = 1.0e5  #: surface pressure, Pa
#: the perturbation: amplitude (m/s), centre (lon, lat) in radians (20 E, 40 N), radius / a
U_P = 1.0
PERTURBATION_CENTRE = (PI / 9.0, 2.0 * PI / 9.0)
PERTURBATION_RADIUS_FRACTION = 0.1

#: FV3's marker of unset phis (``phis(:,:) = 1.e25``) and pt (``pt(:,:,:) = 1.0``)
PHIS_UNSET = 1.0e25
PT_UNSET = 1.0


# --------------------------------------------------------------------------------------------
# JW06's analytic fields
# --------------------------------------------------------------------------------------------
def _eta_v(eta):
    return (np.asarray(eta, dtype=np.float64) - ETA_0) * (PI / 2.0)


def jw_zonal_wind(lon, lat, eta, *, radius: float = UFS.radius,
                  perturbation: bool = True) -> np.ndarray:  # fmt: skip
    """JW06 eq. (2) + (12): ``u = u0 cos^(3/2)(eta_v) sin^2(2 lat)`` (m/s), plus the Gaussian
    ``u_p exp(-(r/R)^2)`` (r the great-circle distance to (20 E, 40 N), R = radius/10) when
    ``perturbation``; the meridional wind is 0."""
    lon, lat, eta = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in (lon, lat, eta)))
    u = U0 * np.cos(_eta_v(eta)) ** 1.5 * np.sin(2.0 * lat) ** 2
    if perturbation:
        lc, pc = PERTURBATION_CENTRE
        cosd = np.sin(pc) * np.sin(lat) + np.cos(pc) * np.cos(lat) * np.cos(lon - lc)
        r = radius * np.arccos(np.clip(cosd, -1.0, 1.0))
        u = u + U_P * np.exp(-((r / (PERTURBATION_RADIUS_FRACTION * radius)) ** 2))
    return u


def _horizontal_terms(lat):
    """JW06's two latitude brackets: ``(-2 sin^6 (cos^2 + 1/3) + 10/63)``,
    ``(8/5 cos^3 (sin^2 + 2/3) - pi/4)``."""
    s, c = np.sin(lat), np.cos(lat)
    a = -2.0 * s**6 * (c**2 + 1.0 / 3.0) + 10.0 / 63.0
    b = 1.6 * c**3 * (s**2 + 2.0 / 3.0) - PI / 4.0
    return a, b


def jw_mean_temperature(eta, *, constants: Constants = UFS) -> np.ndarray:
    """JW06 eq. (4)-(5): the horizontal-mean temperature (K)."""
    eta = np.asarray(eta, dtype=np.float64)
    t = T_0 * eta ** (constants.rdgas * LAPSE_RATE / constants.grav)
    return np.where(eta < ETA_T, t + DELTA_T * np.abs(ETA_T - eta) ** 5, t)


def jw_temperature(lon, lat, eta, *, constants: Constants = UFS, radius: float = UFS.radius,
                   omega: float = UFS.omega) -> np.ndarray:  # fmt: skip
    """JW06 eq. (6): the temperature T(lon, lat, eta) in K (independent of lon)."""
    lon, lat, eta = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in (lon, lat, eta)))
    ev = _eta_v(eta)
    a, b = _horizontal_terms(lat)
    amplitude = 0.75 * eta * PI * U0 / constants.rdgas * np.sin(ev) * np.sqrt(np.cos(ev))
    bracket = a * 2.0 * U0 * np.cos(ev) ** 1.5 + b * radius * omega
    return jw_mean_temperature(eta, constants=constants) + amplitude * bracket


def jw_mean_geopotential(eta, *, constants: Constants = UFS) -> np.ndarray:
    """JW06 eq. (7)-(8): the horizontal-mean geopotential (m^2/s^2)."""
    eta = np.asarray(eta, dtype=np.float64)
    rd, g = constants.rdgas, constants.grav
    phi = T_0 * g / LAPSE_RATE * (1.0 - eta ** (rd * LAPSE_RATE / g))
    et = ETA_T
    with np.errstate(divide="ignore", invalid="ignore"):
        poly = (
            (np.log(eta / et) + 137.0 / 60.0) * et**5
            - 5.0 * et**4 * eta
            + 5.0 * et**3 * eta**2
            - 10.0 / 3.0 * et**2 * eta**3
            + 5.0 / 4.0 * et * eta**4
            - eta**5 / 5.0
        )
        strat = rd * DELTA_T * poly
    return np.where(eta < et, phi - strat, phi)


def jw_geopotential(lon, lat, eta, *, constants: Constants = UFS, radius: float = UFS.radius,
                    omega: float = UFS.omega) -> np.ndarray:  # fmt: skip
    """JW06 eq. (9): the geopotential Phi(lon, lat, eta) (m^2/s^2)."""
    lon, lat, eta = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in (lon, lat, eta)))
    ev = _eta_v(eta)
    a, b = _horizontal_terms(lat)
    c15 = np.cos(ev) ** 1.5
    return jw_mean_geopotential(eta, constants=constants) + U0 * c15 * (
        a * U0 * c15 + b * radius * omega
    )


def jw_surface_geopotential(lon, lat, *, radius: float = UFS.radius,
                            omega: float = UFS.omega) -> np.ndarray:  # fmt: skip
    """JW06 eq. (10): Phi_s = Phi(lon, lat, eta_s = 1) (m^2/s^2; the mean part vanishes there)."""
    return jw_geopotential(lon, lat, ETA_S, radius=radius, omega=omega)


# --------------------------------------------------------------------------------------------
# FV3's initial state
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class JWRankState:
    """One rank's JW initial state; fields, shapes, units and level order in the module
    docstring."""

    spec: SubdomainSpec
    levels: HybridLevels = field(repr=False)
    constants: Constants = field(repr=False)
    perturbation: bool
    delp: np.ndarray = field(repr=False)
    pt: np.ndarray = field(repr=False)
    u: np.ndarray = field(repr=False)
    v: np.ndarray = field(repr=False)
    ua: np.ndarray = field(repr=False)
    va: np.ndarray = field(repr=False)
    phis: np.ndarray = field(repr=False)
    ps: np.ndarray = field(repr=False)
    pe: np.ndarray = field(repr=False)
    peln: np.ndarray = field(repr=False)
    pk: np.ndarray = field(repr=False)
    pkz: np.ndarray = field(repr=False)
    q: dict[str, np.ndarray] = field(repr=False)
    w: np.ndarray | None = field(default=None, repr=False)
    delz: np.ndarray | None = field(default=None, repr=False)

    @property
    def npz(self) -> int:
        return self.levels.npz


#: (field, location) of the per-rank arrays
_RANK_FIELDS = (("delp", "center"), ("pt", "center"), ("u", "y"), ("v", "x"), ("ua", "center"),
                ("va", "center"), ("phis", "center"), ("ps", "center"), ("pe", "center"),
                ("peln", "center"), ("pk", "center"), ("pkz", "center"))  # fmt: skip


@dataclass(frozen=True, eq=False)
class JWInitialState:
    """FV3's test_case 13 state on the six tiles: the per-rank fields as ``(6, ...)`` tile arrays
    with halo (see the module docstring); :meth:`for_rank` cuts one rank out."""

    cube: CubedSphere = field(repr=False)
    levels: HybridLevels = field(repr=False)
    constants: Constants = field(repr=False)
    perturbation: bool
    delp: np.ndarray = field(repr=False)
    pt: np.ndarray = field(repr=False)
    u: np.ndarray = field(repr=False)
    v: np.ndarray = field(repr=False)
    ua: np.ndarray = field(repr=False)
    va: np.ndarray = field(repr=False)
    phis: np.ndarray = field(repr=False)
    ps: np.ndarray = field(repr=False)
    pe: np.ndarray = field(repr=False)
    peln: np.ndarray = field(repr=False)
    pk: np.ndarray = field(repr=False)
    pkz: np.ndarray = field(repr=False)
    q: dict[str, np.ndarray] = field(repr=False)
    w: np.ndarray | None = field(default=None, repr=False)
    delz: np.ndarray | None = field(default=None, repr=False)

    def for_rank(self, spec: SubdomainSpec) -> JWRankState:
        """One rank's part (compute domain and halo)."""
        if spec.resolution != self.cube.resolution or spec.n_halo != self.cube.n_halo:
            raise FV3ConfigError(
                f"subdomain C{spec.resolution} (n_halo={spec.n_halo}) does not fit the C"
                f"{self.cube.resolution} JW state (n_halo={self.cube.n_halo})"
            )
        cut = {name: rank_slice(getattr(self, name), spec, loc) for name, loc in _RANK_FIELDS}
        q = {name: rank_slice(a, spec, "center") for name, a in self.q.items()}
        vertical = {name: rank_slice(getattr(self, name), spec, "center")
                    for name in ("w", "delz") if getattr(self, name) is not None}  # fmt: skip
        return JWRankState(spec=spec, levels=self.levels, constants=self.constants,
                           perturbation=self.perturbation, q=q, **cut, **vertical)  # fmt: skip


def init_jw(cube: CubedSphere, levels: HybridLevels, *, perturbation: bool = True,
            constants: Constants = UFS, adiabatic: bool = True,
            tracer_names: tuple[str, ...] = ("sphum",),
            checker_tr: bool = False, hydrostatic: bool = True) -> JWInitialState:  # fmt: skip
    """FV3's ``init_case`` for ``test_case = 13`` (``perturbation=False``: the steady state, FV3's
    ``test_case = 12``) on ``cube`` (its ``radius``, ``omega``; ``alpha`` must be 0) with
    ``levels`` (``set_eta``) and FMS ``constants`` (``rdgas``, ``rvgas``, ``grav``, ``kappa``).
    ``adiabatic``, ``checker_tr``: FV3's namelist keys (``fv_core_nml``, ``test_case_nml``);
    ``tracer_names``: the field_table's tracers in order (``sphum`` must be one of them unless
    ``adiabatic``); ``hydrostatic=False``: also FV3's ``w`` and ``delz``."""
    if cube.alpha != 0.0:
        raise FV3ConfigError(f"alpha={cube.alpha}: FV3's test_case 13 is defined for alpha = 0")
    names = tuple(str(t).lower() for t in tracer_names)
    if len(set(names)) != len(names):
        raise FV3ConfigError(f"tracer_names={tracer_names!r}: a tracer is named twice")
    unported = sorted({"qdry", "qmoist", "qtotal"} & set(names))
    if unported:
        raise FV3ConfigError(
            f"tracer_names: {unported} (FV3's 1 - sum of the nwat species) are not ported: drop "
            "them from the tracers"
        )
    if not adiabatic and "sphum" not in names:
        raise FV3ConfigError(
            "adiabatic=False needs the tracer 'sphum' (FV3 writes the JW humidity into it): add "
            "it to tracer_names or pass adiabatic=True"
        )
    n, h = cube.resolution, cube.n_halo
    F = FortranIndex(n, h)
    r, npx, npy = F.r, F.npx, F.npy
    halos = cube.halos
    f = cube.fields
    grid = (f["grid"][..., 0], f["grid"][..., 1])
    agrid = (f["agrid"][..., 0], f["agrid"][..., 1])
    radius, omega = cube.radius, cube.omega
    rdgas, grav, kappa = constants.rdgas, constants.grav, constants.kappa
    nz = levels.npz
    ak, bk, ptop = levels.ak, levels.bk, levels.ptop
    cs = r(1, n)
    shape_c = halos.shape("center")

    # --- delp, and init_case's pe/peln (for the humidity) ----------------------------------
    delp = np.full(shape_c + (nz,), 1.0e30)  # fv_arrays real_big
    delp[:, _corner_cells(F)] = 0.0
    ps0 = np.full(shape_c, PS)
    dk = (ak[1:] - ak[:-1]) + ps0[:, cs, cs, None] * (bk[1:] - bk[:-1])
    delp[:, cs, cs] = dk
    pe_c, peln_c, pk_c, pkz_c, ps_c = _p_var(dk, ptop, kappa)

    eta = levels.eta_layer()
    eta_v = [(e - ETA_0) * PI * 0.5 for e in eta]
    cv15 = np.array([math.pow(math.cos(ev), 1.5) for ev in eta_v])

    # --- D-grid winds ---------------------------------------------------------------------
    r0 = radius / 10.0  # FV3's r0 = radius/10.0 (PERTURBATION_RADIUS_FRACTION)
    pcen = PERTURBATION_CENTRE

    def projected(p, vec):
        """FV3's ``utmp (vec_y cos(lon) - vec_x sin(lon))`` at points p on every level, (..., nz):
        ``utmp = Ubar cos(eta_v)^(3/2) sin(2 lat)^2`` plus ``u1 exp(-(r/r0)^2)`` where
        ``-(r/r0)^2 > -40``."""
        s = sin(2.0 * p[1])
        utmp = (U0 * cv15) * (s * s)[..., None]
        if perturbation:
            shape = np.shape(p[0])
            centre = (np.full(shape, pcen[0]), np.full(shape, pcen[1]))
            t = great_circle_dist(centre, p, radius) / r0
            g = -(t * t)
            bump = np.where(g > -40.0, U_P * exp(np.maximum(g, -745.0)), 0.0)
            utmp = utmp + bump[..., None]  # + 0.0 where FV3 adds nothing: exact
        proj = vec[..., 1] * cos(p[0]) - vec[..., 0] * sin(p[0])
        return utmp * proj[..., None]

    ee1, ee2, ew, es = f["ee1"], f["ee2"], f["ew"], f["es"]
    u = np.zeros(halos.shape("y") + (nz,))
    v = np.zeros(halos.shape("x") + (nz,))
    si, sj, sj1 = r(1, npx), r(1, n), r(2, npy)  # v on x-faces: i = 1..npx, j = 1..n
    p1, p2 = points_at(grid, si, sj), points_at(grid, si, sj1)
    vv1 = projected(p2, ee2[:, si, sj1])
    vv3 = projected(p1, ee2[:, si, sj])
    vv2 = projected(mid_pt_sphere(p1, p2), ew[:, 1, si, sj])
    v[:, si, sj] = 0.25 * (vv1 + 2.0 * vv2 + vv3)
    si, si1, sj = r(1, n), r(2, npx), r(1, npy)  # u on y-faces: i = 1..n, j = 1..npy
    p1, p2 = points_at(grid, si, sj), points_at(grid, si1, sj)
    uu1 = projected(p1, ee1[:, si, sj])
    uu3 = projected(p2, ee1[:, si1, sj])
    uu2 = projected(mid_pt_sphere(p1, p2), es[:, 0, si, sj])
    u[:, si, sj] = 0.25 * (uu1 + 2.0 * uu2 + uu3)

    # --- temperature and surface geopotential: 9-point averages -------------------------------
    lat9 = _nine_point_latitudes(grid, agrid, F)
    t_mean = np.array([
        T_0 * math.pow(e, rdgas * LAPSE_RATE / grav)
        + (DELTA_T * math.pow(ETA_T - e, 5.0) if ETA_T > e else 0.0)
        for e in eta
    ])  # fmt: skip
    c1 = np.array([
        0.75 * (e * PI * U0 / rdgas) * math.sin(ev) * math.sqrt(math.cos(ev))
        for e, ev in zip(eta, eta_v, strict=True)
    ])  # fmt: skip

    def temperature(lat):
        a, b = _brackets(lat)
        return t_mean + c1 * ((a * 2.0 * U0)[..., None] * cv15 + (b * radius * omega)[..., None])

    pt = np.full(shape_c + (nz,), PT_UNSET)
    pt[:, cs, cs] = _average9([temperature(lat) for lat in lat9])

    cs15 = math.pow(math.cos((ETA_S - ETA_0) * PI / 2.0), 1.5)

    def surface(lat):
        a, b = _brackets(lat)
        return U0 * cs15 * (a * U0 * cs15 + b * radius * omega)

    phis = np.full(shape_c, PHIS_UNSET)
    phis[:, cs, cs] = _average9([surface(lat) for lat in lat9])

    # --- non-hydrostatic: w and the hydrostatic layer thicknesses (before the humidity) ------
    w = delz = None
    if not hydrostatic:
        w = np.zeros(shape_c + (nz,))
        delz = np.full(shape_c + (nz,), np.nan)
        delz[:, cs, cs] = rdgas / grav * pt[:, cs, cs] * (peln_c[..., :-1] - peln_c[..., 1:])

    # --- tracers ------------------------------------------------------------------------------
    q = {name: np.zeros(shape_c + (nz,)) for name in names}
    if not adiabatic:
        dlnp = peln_c[..., 1:] - peln_c[..., :-1]
        ptmp = dk / dlnp - 100000.0
        lat_a = agrid[1][:, cs, cs]
        qv = 0.021 * exp(-fpow(lat_a / pcen[1], 4.0))[..., None] * exp(-((ptmp / 34000.0) ** 2))
        q["sphum"][:, cs, cs] = qv
        zvir = constants.rvgas / rdgas - 1.0
        pt[:, cs, cs] = pt[:, cs, cs] / (1.0 + zvir * qv)
    lon_a, lat_a = agrid[0][:, cs, cs], agrid[1][:, cs, cs]
    if checker_tr:
        qt = np.where(sin(9.0 * lon_a) * sin(9.0 * lat_a) < 0.0, 0.0, 1.0)
        for name in names:
            q[name][:, cs, cs] = qt[..., None]
    if "cl" in q and "cl2" in q:
        cl, cl2 = _terminator(lon_a, lat_a)
        q["cl"][:, cs, cs] = cl[..., None]
        q["cl2"][:, cs, cs] = cl2[..., None]

    # --- halos -------------------------------------------------------------------------------
    for a in (delp, pt, *q.values()):
        _update_levels(halos, a)
    halos.update(phis, "center")
    for k in range(nz):
        vk, uk = np.ascontiguousarray(v[..., k]), np.ascontiguousarray(u[..., k])
        halos.update_pair(vk, uk, vector=True)
        v[..., k], u[..., k] = vk, uk

    ua = np.full(shape_c + (nz,), np.nan)
    va = np.full(shape_c + (nz,), np.nan)
    for t in range(N_TILES):
        m = cube.metric_terms(SubdomainSpec(n, t, 0, n, 0, n, h))
        a, b = c2l_ord4(u[t], v[t], m)
        ua[t, cs, cs], va[t, cs, cs] = a[cs, cs], b[cs, cs]

    ps = np.full(shape_c, PS)
    ps[:, cs, cs] = ps_c
    pe, peln, pk = (np.full(shape_c + (nz + 1,), np.nan) for _ in range(3))
    pkz = np.full(shape_c + (nz,), np.nan)
    pe[:, cs, cs], peln[:, cs, cs], pk[:, cs, cs], pkz[:, cs, cs] = pe_c, peln_c, pk_c, pkz_c
    return JWInitialState(cube=cube, levels=levels, constants=constants,
                          perturbation=perturbation, delp=delp, pt=pt, u=u, v=v, ua=ua, va=va,
                          phis=phis, ps=ps, pe=pe, peln=peln, pk=pk, pkz=pkz, q=q, w=w, delz=delz)  # fmt: skip


def _brackets(lat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """JW06's latitude brackets in FV3's operation order (libm pow for the powers 6 and 3)."""
    s, c = sin(lat), cos(lat)
    a = -2.0 * fpow(s, 6.0) * (c * c + 1.0 / 3.0) + 10.0 / 63.0
    b = 8.0 / 5.0 * fpow(c, 3.0) * (s * s + 2.0 / 3.0) - PI / 4.0
    return a, b


def _nine_point_latitudes(grid, agrid, F: FortranIndex) -> list[np.ndarray]:
    """Latitudes of FV3's 9 points per compute cell: 1 centre, 2-5 the south, east, north and
    west edge midpoints, 6-9 the SW, SE, NE, NW corners."""
    c, c1 = F.r(1, F.n), F.r(2, F.npx)
    g00, g10 = points_at(grid, c, c), points_at(grid, c1, c)
    g11, g01 = points_at(grid, c1, c1), points_at(grid, c, c1)
    return [
        points_at(agrid, c, c)[1],
        mid_pt_sphere(g00, g10)[1],
        mid_pt_sphere(g10, g11)[1],
        mid_pt_sphere(g01, g11)[1],
        mid_pt_sphere(g00, g01)[1],
        g00[1], g10[1], g11[1], g01[1],
    ]  # fmt: skip


def _average9(p: list[np.ndarray]) -> np.ndarray:
    """``0.25 pt1 + 0.125 (pt2 + pt3 + pt4 + pt5) + 0.0625 (pt6 + pt7 + pt8 + pt9)``."""
    return 0.25 * p[0] + 0.125 * (p[1] + p[2] + p[3] + p[4]) + 0.0625 * (p[5] + p[6] + p[7] + p[8])


def _p_var(delp: np.ndarray, ptop: float, kappa: float):
    """FV3's ``p_var`` (hydrostatic, no dry-mass adjustment, ``ptop >= ptop_min``) on (..., nz)
    layers: pe, peln, pk (..., nz+1), pkz (..., nz), ps."""
    nz = delp.shape[-1]
    pe = np.empty(delp.shape[:-1] + (nz + 1,))
    pe[..., 0] = ptop
    for k in range(1, nz + 1):
        pe[..., k] = pe[..., k - 1] + delp[..., k - 1]
    peln = np.empty_like(pe)
    peln[..., 1:] = _log(pe[..., 1:])
    pk = np.empty_like(pe)
    pk[..., 0] = math.pow(ptop, kappa)
    pk[..., 1:] = exp(kappa * peln[..., 1:])
    peln[..., 0] = math.log(ptop)
    pkz = (pk[..., 1:] - pk[..., :-1]) / (kappa * (peln[..., 1:] - peln[..., :-1]))
    return pe, peln, pk, pkz, pe[..., nz].copy()


def _log(x: np.ndarray) -> np.ndarray:
    return np.asarray(np.frompyfunc(math.log, 1, 1)(x), dtype=np.float64)


def _terminator(lon: np.ndarray, lat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``terminator_tracers``' Cl and Cl2 (kg/kg) at the cell centres (same on every level)."""
    qcly = 4.0e-6
    lc = 5.0 * PI / 3.0
    thc = PI / 9.0
    k2 = 1.0
    sinthc, costhc = math.sin(thc), math.cos(thc)
    k1 = np.maximum(0.0, sin(lat) * sinthc + cos(lat) * costhc * cos(lon - lc))
    rr = k1 / k2 * 0.25
    d = np.sqrt(rr * rr + 2.0 * rr * qcly)
    cl = d - rr
    return cl, 0.5 * (qcly - cl)


def _update_levels(halos, a: np.ndarray) -> None:
    """The scalar halo update of a (6, ..., nz) cell array, level by level, in place."""
    for k in range(a.shape[-1]):
        ak = np.ascontiguousarray(a[..., k])
        halos.update(ak, "center")
        a[..., k] = ak


def _corner_cells(F: FortranIndex) -> np.ndarray:
    m = F.n + 2 * F.h
    i = np.arange(m)
    out = (i < F.h) | (i >= F.h + F.n)
    return out[:, None] & out[None, :]

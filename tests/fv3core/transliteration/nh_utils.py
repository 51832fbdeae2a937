"""FV3's non-hydrostatic vertical solvers (GFDL_atmos_cubed_sphere ``model/nh_utils.F90``:
``SIM1_solver``, ``SIM_solver``, ``SIM3_solver``, ``SIM3p0_solver``, ``imp_diff_w``,
``Riem_Solver_c``, ``update_dz_c``; ``model/nh_core.F90``: ``Riem_Solver3``), transliterated loop by loop with
FV3's order of floating-point operations.

A column routine works on one ``j`` row: arrays are ``(ni, km + 2)`` with FV3's 1-based level
index (column 0 unused), so ``a[:, k]`` is FV3's ``a(is:ie, k)``; ``i`` is vectorised, as in FV3's
inner loops. Riem_Solver_c and Riem_Solver3 take 3-D ``(ni, nj, km[+1])`` arrays of their
``i, j`` range (0-based levels, top down) and loop over ``j``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tests.fv3core.transliteration.corners import XDIR, YDIR, fill_4corners
from tests.fv3core.transliteration.farray import FArray, R

R3 = 1.0 / 3.0


def _levels(ni: int, km: int) -> np.ndarray:
    return np.zeros((ni, km + 2))


def rayleigh_w_factors(dt: float, fast_tau_w_sec: float, rf_cutoff: float, ptop: float,
                       pfull: np.ndarray) -> tuple[np.ndarray, int]:  # fmt: skip
    """``Riem_Solver_c``'s one-time set-up of ``rff(k)`` and ``k_rf`` (``real(kind=8)``)."""
    km = len(pfull)
    rff = np.ones(km + 2)
    k_rf = 0
    for k in range(1, km + 1):
        if pfull[k - 1] > rf_cutoff:
            break
        k_rf = k
        sine = math.sin(0.5 * math.pi * math.log(rf_cutoff / pfull[k - 1]) / math.log(rf_cutoff / ptop))
        rff_temp = (dt / fast_tau_w_sec) * (sine * sine)
        rff[k] = 1.0 / (1.0 + rff_temp)
    return rff, k_rf


@dataclass
class Damping:
    """FV3's fast Rayleigh damping of ``w`` in the SIM1/SIM solvers (``rff``, ``k_rf``)."""

    rff: np.ndarray
    k_rf: int


def _edge_reconstruction(km: int, pe: np.ndarray, dm2: np.ndarray):
    """The shared first part of SIM1/SIM: ``g_rat``, ``bb``, ``dd``, ``gam`` and ``pp``."""
    ni = pe.shape[0]
    g_rat, bb, dd, gam, pp = (_levels(ni, km) for _ in range(5))
    for k in range(1, km):
        g_rat[:, k] = dm2[:, k] / dm2[:, k + 1]
        bb[:, k] = 2.0 * (1.0 + g_rat[:, k])
        dd[:, k] = 3.0 * (pe[:, k] + g_rat[:, k] * pe[:, k + 1])
    bet = bb[:, 1].copy()
    pp[:, 1] = 0.0
    pp[:, 2] = dd[:, 1] / bet
    bb[:, km] = 2.0
    dd[:, km] = 3.0 * pe[:, km]
    for k in range(2, km + 1):
        gam[:, k] = g_rat[:, k - 1] / bet
        bet = bb[:, k] - gam[:, k]
        pp[:, k + 1] = (dd[:, k] - pp[:, k]) / bet
    for k in range(km, 1, -1):
        pp[:, k] = pp[:, k] - gam[:, k] * pp[:, k + 1]
    return g_rat, bb, pp


def sim_solver(dt: float, km: int, rgas: float, gama: float, gm2: np.ndarray, cp2: np.ndarray,
               kappa: float, dm2: np.ndarray, pm2: np.ndarray, pem: np.ndarray, w2: np.ndarray,
               dz2: np.ndarray, pt2: np.ndarray, ws: np.ndarray, alpha: float, p_fac: float,
               scale_m: float, damping: Damping | None) -> np.ndarray:  # fmt: skip
    """``SIM_solver`` (``alpha < 1``; ``alpha = a_imp``); updates ``w2``, ``dz2``; returns ``pe2``."""
    ni = w2.shape[0]
    beta = 1.0 - alpha
    ra = 1.0 / alpha
    t2 = beta / alpha
    t1g = 2.0 * ((alpha * dt) * (alpha * dt))
    rdt = 1.0 / dt
    pe2 = _levels(ni, km)
    aa, wk = _levels(ni, km), _levels(ni, km)
    w1 = w2.copy()
    for k in range(1, km + 1):
        pe2[:, k] = np.exp(gm2[:, k] * np.log(-dm2[:, k] / dz2[:, k] * rgas * pt2[:, k])) - pm2[:, k]
    g_rat, bb, pp = _edge_reconstruction(km, pe2, dm2)
    for k in range(1, km + 2):
        pe2[:, k] = pem[:, k]
    for k in range(2, km + 1):
        aa[:, k] = t1g * 0.5 * (gm2[:, k - 1] + gm2[:, k]) / (dz2[:, k - 1] + dz2[:, k]) * pe2[:, k]
        wk[:, k] = t2 * aa[:, k] * (w1[:, k - 1] - w1[:, k])
        aa[:, k] = aa[:, k] - scale_m * dm2[:, 1]
    gam = _levels(ni, km)
    bet = dm2[:, 1] - aa[:, 2]
    w2[:, 1] = (dm2[:, 1] * w1[:, 1] + dt * pp[:, 2] + wk[:, 2]) / bet
    for k in range(2, km):
        gam[:, k] = aa[:, k] / bet
        bet = dm2[:, k] - (aa[:, k] + aa[:, k + 1] + aa[:, k] * gam[:, k])
        w2[:, k] = (dm2[:, k] * w1[:, k] + dt * (pp[:, k + 1] - pp[:, k]) + wk[:, k + 1] - wk[:, k]
                    - aa[:, k] * w2[:, k - 1]) / bet  # fmt: skip
    wk1 = t1g * gm2[:, km] / dz2[:, km] * pe2[:, km + 1]
    gam[:, km] = aa[:, km] / bet
    bet = dm2[:, km] - (aa[:, km] + wk1 + aa[:, km] * gam[:, km])
    w2[:, km] = (dm2[:, km] * w1[:, km] + dt * (pp[:, km + 1] - pp[:, km]) - wk[:, km]
                 + wk1 * (t2 * w1[:, km] - ra * ws) - aa[:, km] * w2[:, km - 1]) / bet  # fmt: skip
    for k in range(km - 1, 0, -1):
        w2[:, k] = w2[:, k] - gam[:, k + 1] * w2[:, k + 1]
    if damping is not None:
        for k in range(1, damping.k_rf + 1):
            w2[:, k] = w2[:, k] * damping.rff[k]
    pe2[:, 1] = 0.0
    for k in range(1, km + 1):
        pe2[:, k + 1] = pe2[:, k] + (dm2[:, k] * (w2[:, k] - w1[:, k]) * rdt
                                     - beta * (pp[:, k + 1] - pp[:, k])) * ra  # fmt: skip
    _recover_dz(km, rgas, cp2, dm2, pm2, pt2, pe2, bb, g_rat, p_fac, dz2)
    for k in range(1, km + 2):
        pe2[:, k] = pe2[:, k] + beta * (pp[:, k] - pe2[:, k])
    return pe2


def _recover_dz(km, rgas, cp2, dm2, pm2, pt2, pe2, bb, g_rat, p_fac, dz2) -> None:
    """SIM1/SIM: ``delz = -dm R T_m / p_gas`` from the cell-mean pressure, bottom up."""
    p1 = (pe2[:, km] + 2.0 * pe2[:, km + 1]) * R3
    dz2[:, km] = -dm2[:, km] * rgas * pt2[:, km] * np.exp(
        (cp2[:, km] - 1.0) * np.log(np.maximum(p_fac * pm2[:, km], p1 + pm2[:, km])))
    for k in range(km - 1, 0, -1):
        p1 = (pe2[:, k] + bb[:, k] * pe2[:, k + 1] + g_rat[:, k] * pe2[:, k + 2]) * R3 - g_rat[:, k] * p1
        dz2[:, k] = -dm2[:, k] * rgas * pt2[:, k] * np.exp(
            (cp2[:, k] - 1.0) * np.log(np.maximum(p_fac * pm2[:, k], p1 + pm2[:, k])))


def sim1_solver(dt: float, km: int, rgas: float, gama: float, gm2: np.ndarray, cp2: np.ndarray,
                kappa: float, dm2: np.ndarray, pm2: np.ndarray, pem: np.ndarray, w2: np.ndarray,
                dz2: np.ndarray, pt2: np.ndarray, ws: np.ndarray, p_fac: float,
                damping: Damping | None) -> np.ndarray:  # fmt: skip
    """``SIM1_solver`` (``a_imp > 0.999``); updates ``w2``, ``dz2``; returns ``pe`` (perturbation)."""
    ni = w2.shape[0]
    t1g = 2.0 * dt * dt
    rdt = 1.0 / dt
    pe, aa, gam = _levels(ni, km), _levels(ni, km), _levels(ni, km)
    w1 = w2.copy()
    for k in range(1, km + 1):
        pe[:, k] = np.exp(gm2[:, k] * np.log(-dm2[:, k] / dz2[:, k] * rgas * pt2[:, k])) - pm2[:, k]
    g_rat, bb, pp = _edge_reconstruction(km, pe, dm2)
    for k in range(2, km + 1):
        aa[:, k] = t1g * 0.5 * (gm2[:, k - 1] + gm2[:, k]) / (dz2[:, k - 1] + dz2[:, k]) * pem[:, k]
    bet = dm2[:, 1] - aa[:, 2]
    w2[:, 1] = (dm2[:, 1] * w1[:, 1] + dt * pp[:, 2]) / bet
    for k in range(2, km):
        gam[:, k] = aa[:, k] / bet
        bet = dm2[:, k] - (aa[:, k] + aa[:, k + 1] + aa[:, k] * gam[:, k])
        w2[:, k] = (dm2[:, k] * w1[:, k] + dt * (pp[:, k + 1] - pp[:, k]) - aa[:, k] * w2[:, k - 1]) / bet
    p1 = t1g * gm2[:, km] / dz2[:, km] * pem[:, km + 1]
    gam[:, km] = aa[:, km] / bet
    bet = dm2[:, km] - (aa[:, km] + p1 + aa[:, km] * gam[:, km])
    w2[:, km] = (dm2[:, km] * w1[:, km] + dt * (pp[:, km + 1] - pp[:, km]) - p1 * ws
                 - aa[:, km] * w2[:, km - 1]) / bet  # fmt: skip
    for k in range(km - 1, 0, -1):
        w2[:, k] = w2[:, k] - gam[:, k + 1] * w2[:, k + 1]
    if damping is not None:
        for k in range(1, damping.k_rf + 1):
            w2[:, k] = w2[:, k] * damping.rff[k]
    pe[:, 1] = 0.0
    for k in range(1, km + 1):
        pe[:, k + 1] = pe[:, k] + dm2[:, k] * (w2[:, k] - w1[:, k]) * rdt
    _recover_dz(km, rgas, cp2, dm2, pm2, pt2, pe, bb, g_rat, p_fac, dz2)
    return pe


def sim3_solver(dt: float, km: int, rgas: float, gama: float, kappa: float, dm: np.ndarray,
                pem: np.ndarray, w2: np.ndarray, dz2: np.ndarray, pt2: np.ndarray, ws: np.ndarray,
                alpha: float | None, p_fac: float, scale_m: float, grav: float) -> np.ndarray:  # fmt: skip
    """``SIM3_solver`` (``alpha``) or, with ``alpha=None``, ``SIM3p0_solver``; updates ``w2``,
    ``dz2``; returns ``pe2`` (perturbation)."""
    ni = w2.shape[0]
    p0 = alpha is None
    if p0:
        t1g = 2.0 * gama * (dt * dt)
    else:
        beta = 1.0 - alpha
        ra = 1.0 / alpha
        t2 = beta / alpha
        t1g = gama * 2.0 * ((alpha * dt) * (alpha * dt))
    rdt = 1.0 / dt
    capa1 = kappa - 1.0
    r2g = grav / 2.0
    r6g = grav / 6.0
    aa, bb, dd, g_rat, gam, wk, pe2, pp = (_levels(ni, km) for _ in range(8))
    w1 = w2.copy()
    for k in range(1, km + 1):
        aa[:, k] = np.exp(gama * np.log(-dm[:, k] / dz2[:, k] * rgas * pt2[:, k]))
    for k in range(1, km):
        g_rat[:, k] = dm[:, k] / dm[:, k + 1]
        bb[:, k] = 2.0 * (1.0 + g_rat[:, k])
        dd[:, k] = 3.0 * (aa[:, k] + g_rat[:, k] * aa[:, k + 1])
    bet = bb[:, 1].copy()
    pe2[:, 1] = pem[:, 1]
    pe2[:, 2] = (dd[:, 1] - pem[:, 1]) / bet
    bb[:, km] = 2.0
    dd[:, km] = 3.0 * aa[:, km] + r2g * dm[:, km]
    for k in range(2, km + 1):
        gam[:, k] = g_rat[:, k - 1] / bet
        bet = bb[:, k] - gam[:, k]
        pe2[:, k + 1] = (dd[:, k] - pe2[:, k]) / bet
    for k in range(km, 1, -1):
        pe2[:, k] = pe2[:, k] - gam[:, k] * pe2[:, k + 1]
    for k in range(1, km + 2):
        pp[:, k] = pe2[:, k] - pem[:, k]
    for k in range(2, km + 1):
        if p0:
            aa[:, k] = t1g / (dz2[:, k - 1] + dz2[:, k]) * pe2[:, k] - scale_m * dm[:, 1]
        else:
            aa[:, k] = t1g / (dz2[:, k - 1] + dz2[:, k]) * pe2[:, k]
            wk[:, k] = t2 * aa[:, k] * (w1[:, k - 1] - w1[:, k])
            aa[:, k] = aa[:, k] - scale_m * dm[:, 1]
    bet = dm[:, 1] - aa[:, 2]
    if p0:
        w2[:, 1] = (dm[:, 1] * w1[:, 1] + dt * pp[:, 2]) / bet
    else:
        w2[:, 1] = (dm[:, 1] * w1[:, 1] + dt * pp[:, 2] + wk[:, 2]) / bet
    for k in range(2, km):
        gam[:, k] = aa[:, k] / bet
        bet = dm[:, k] - (aa[:, k] + aa[:, k + 1] + aa[:, k] * gam[:, k])
        if p0:
            w2[:, k] = (dm[:, k] * w1[:, k] + dt * (pp[:, k + 1] - pp[:, k]) - aa[:, k] * w2[:, k - 1]) / bet
        else:
            w2[:, k] = (dm[:, k] * w1[:, k] + dt * (pp[:, k + 1] - pp[:, k]) + wk[:, k + 1] - wk[:, k]
                        - aa[:, k] * w2[:, k - 1]) / bet  # fmt: skip
    wk1 = t1g / dz2[:, km] * pe2[:, km + 1]
    gam[:, km] = aa[:, km] / bet
    bet = dm[:, km] - (aa[:, km] + wk1 + aa[:, km] * gam[:, km])
    if p0:
        w2[:, km] = (dm[:, km] * w1[:, km] + dt * (pp[:, km + 1] - pp[:, km]) - wk1 * ws
                     - aa[:, km] * w2[:, km - 1]) / bet  # fmt: skip
    else:
        w2[:, km] = (dm[:, km] * w1[:, km] + dt * (pp[:, km + 1] - pp[:, km]) - wk[:, km]
                     + wk1 * (t2 * w1[:, km] - ra * ws) - aa[:, km] * w2[:, km - 1]) / bet  # fmt: skip
    for k in range(km - 1, 0, -1):
        w2[:, k] = w2[:, k] - gam[:, k + 1] * w2[:, k + 1]
    pe2[:, 1] = 0.0
    for k in range(1, km + 1):
        if p0:
            pe2[:, k + 1] = pe2[:, k] + dm[:, k] * (w2[:, k] - w1[:, k]) * rdt
        else:
            pe2[:, k + 1] = pe2[:, k] + (dm[:, k] * (w2[:, k] - w1[:, k]) * rdt
                                         - beta * (pp[:, k + 1] - pp[:, k])) * ra  # fmt: skip
    pe2[:, 1] = pem[:, 1]
    for k in range(2, km + 2):
        pe2[:, k] = np.maximum(p_fac * pem[:, k], pe2[:, k] + pem[:, k])
    p1 = (pe2[:, km] + 2.0 * pe2[:, km + 1]) * R3 - r6g * dm[:, km]
    dz2[:, km] = -dm[:, km] * rgas * pt2[:, km] * np.exp(capa1 * np.log(p1))
    for k in range(km - 1, 0, -1):
        p1 = (pe2[:, k] + bb[:, k] * pe2[:, k + 1] + g_rat[:, k] * pe2[:, k + 2]) * R3 - g_rat[:, k] * p1
        dz2[:, k] = -dm[:, k] * rgas * pt2[:, k] * np.exp(capa1 * np.log(p1))
    for k in range(1, km + 2):
        pe2[:, k] = pe2[:, k] - pem[:, k]
        if not p0:
            pe2[:, k] = pe2[:, k] + beta * (pp[:, k] - pe2[:, k])
    return pe2


def imp_diff_w(km: int, cd: float, delz: np.ndarray, ws: np.ndarray, w: np.ndarray) -> None:
    """``imp_diff_w``: implicit vertical diffusion of ``w`` (``d2bg_zq``), in place."""
    ni = w.shape[0]
    c, gam, dz, wt = (_levels(ni, km) for _ in range(4))
    for k in range(2, km + 1):
        dz[:, k] = 0.5 * (delz[:, k - 1] + delz[:, k])
    for k in range(1, km):
        c[:, k] = -cd / (dz[:, k + 1] * delz[:, k])
    bet = 1.0 - c[:, 1]
    wt[:, 1] = w[:, 1] / bet
    for k in range(2, km):
        gam[:, k] = c[:, k - 1] / bet
        a = cd / (dz[:, k] * delz[:, k])
        bet = (1.0 + a - c[:, k]) + a * gam[:, k]
        wt[:, k] = (w[:, k] + a * wt[:, k - 1]) / bet
    gam[:, km] = c[:, km - 1] / bet
    a = cd / (dz[:, km] * delz[:, km])
    w[:, km] = (w[:, km] + 2.0 * ws * cd / (delz[:, km] * delz[:, km]) + a * wt[:, km - 1]) / (
        1.0 + a + (cd + cd) / (delz[:, km] * delz[:, km]) + a * gam[:, km])
    for k in range(km - 1, 0, -1):
        w[:, k] = wt[:, k] - gam[:, k + 1] * w[:, k + 1]


def _solve(a_imp: float, dt: float, km: int, rdgas: float, gama: float, akap: float, gm2, cp2,
           dm, pm2, pem, w2, dz2, pt2, ws, p_fac: float, grav: float, damping: Damping | None,
           cgrid: bool) -> np.ndarray:  # fmt: skip
    """The solver ``a_imp`` selects, as Riem_Solver3 (``cgrid``: Riem_Solver_c) dispatches."""
    if cgrid:  # Riem_Solver_c: SIM3p0 below -0.01, SIM1 above 0.5 (RIM_2D between)
        if a_imp < -0.01:
            return sim3_solver(dt, km, rdgas, gama, akap, dm, pem, w2, dz2, pt2, ws, None, p_fac, 0.0, grav)
        if a_imp <= 0.5:
            raise NotImplementedError("RIM_2D")
        return sim1_solver(dt, km, rdgas, gama, gm2, cp2, akap, dm, pm2, pem, w2, dz2, pt2, ws, p_fac, damping)
    if a_imp < -0.999:
        return sim3_solver(dt, km, rdgas, gama, akap, dm, pem, w2, dz2, pt2, ws, None, p_fac, 0.0, grav)
    if a_imp < -0.5:
        return sim3_solver(dt, km, rdgas, gama, akap, dm, pem, w2, dz2, pt2, ws, abs(a_imp), p_fac, 0.0, grav)
    if a_imp <= 0.5:
        raise NotImplementedError("RIM_2D")
    if a_imp > 0.999:
        return sim1_solver(dt, km, rdgas, gama, gm2, cp2, akap, dm, pm2, pem, w2, dz2, pt2, ws, p_fac, damping)
    return sim_solver(dt, km, rdgas, gama, gm2, cp2, akap, dm, pm2, pem, w2, dz2, pt2, ws, a_imp, p_fac,
                      0.0, damping)  # fmt: skip


def riem_solver3(dt: float, akap: float, ptop: float, zs: np.ndarray, w: np.ndarray, delz: np.ndarray,
                 pt: np.ndarray, delp: np.ndarray, zh: np.ndarray, pe: np.ndarray, peln: np.ndarray,
                 ppe: np.ndarray, pk3: np.ndarray, pk: np.ndarray, ws: np.ndarray, p_fac: float,
                 a_imp: float, use_logp: bool, last_call: bool, fp_out: bool, d2bg_zq: float,
                 rdgas: float, grav: float, damping: Damping | None = None) -> None:  # fmt: skip
    """``Riem_Solver3`` (dry: no ``q_con``, ``cappa = akap``) on the compute columns given: ``w``,
    ``delz``, ``pt``, ``delp`` ``(ni, nj, km)``; ``zh``, ``pe``, ``peln``, ``ppe``, ``pk3``, ``pk``
    ``(ni, nj, km + 1)``; ``zs``, ``ws`` ``(ni, nj)``. Writes as FV3 does (``pe``, ``peln``,
    ``pk`` only on the ``last_call``)."""
    ni, nj, km = w.shape
    gama = 1.0 / (1.0 - akap)
    rgrav = 1.0 / grav
    peln1 = math.log(ptop)
    ptk = math.exp(akap * peln1)
    for j in range(nj):
        dm, cp2, pm2, gm2, dz2, w2, pt2 = (_levels(ni, km) for _ in range(7))
        pem, peln2 = _levels(ni, km), _levels(ni, km)
        for k in range(1, km + 1):
            dm[:, k] = delp[:, j, k - 1]
            cp2[:, k] = akap
            pt2[:, k] = pt[:, j, k - 1]
        pem[:, 1] = ptop
        peln2[:, 1] = peln1
        pk3[:, j, 0] = ptk
        for k in range(2, km + 2):
            pem[:, k] = pem[:, k - 1] + dm[:, k - 1]
            peln2[:, k] = np.log(pem[:, k])
            pk3[:, j, k - 1] = np.exp(akap * peln2[:, k])
        for k in range(1, km + 1):
            pm2[:, k] = dm[:, k] / (peln2[:, k + 1] - peln2[:, k])
            gm2[:, k] = 1.0 / (1.0 - cp2[:, k])
            dm[:, k] = dm[:, k] * rgrav
            dz2[:, k] = zh[:, j, k] - zh[:, j, k - 1]
            w2[:, k] = w[:, j, k - 1]
        pe2 = _solve(a_imp, dt, km, rdgas, gama, akap, gm2, cp2, dm, pm2, pem, w2, dz2, pt2,
                     ws[:, j], p_fac, grav, damping, cgrid=False)  # fmt: skip
        if d2bg_zq > 0.0001:
            imp_diff_w(km, d2bg_zq, dz2, ws[:, j], w2)
        for k in range(1, km + 1):
            w[:, j, k - 1] = w2[:, k]
            delz[:, j, k - 1] = dz2[:, k]
        if last_call:
            for k in range(1, km + 2):
                peln[:, j, k - 1] = peln2[:, k]
                pk[:, j, k - 1] = pk3[:, j, k - 1]
                pe[:, j, k - 1] = pem[:, k]
        for k in range(1, km + 2):
            ppe[:, j, k - 1] = pe2[:, k] + pem[:, k] if fp_out else pe2[:, k]
        if use_logp:
            for k in range(2, km + 2):
                pk3[:, j, k - 1] = peln2[:, k]
        zh[:, j, km] = zs[:, j]
        for k in range(km, 0, -1):
            zh[:, j, k - 1] = zh[:, j, k] - dz2[:, k]


def riem_solver_c(dt: float, akap: float, ptop: float, hs: np.ndarray, w3: np.ndarray, pt: np.ndarray,
                  delp: np.ndarray, gz: np.ndarray, pef: np.ndarray, ws: np.ndarray, p_fac: float,
                  a_imp: float, rdgas: float, grav: float, damping: Damping | None = None) -> None:  # fmt: skip
    """``Riem_Solver_c`` (dry: no ``q_con``) on the columns given (FV3: ``is-1..ie+1``,
    ``js-1..je+1``): ``gz`` in is the height of the interfaces (``update_dz_c``'s), out the
    geopotential; ``pef`` the full non-hydrostatic pressure on the interfaces."""
    ni, nj, km = w3.shape
    gama = 1.0 / (1.0 - akap)
    for j in range(nj):
        dm, dz2, w2, pm2, gm2, cp2, pt2 = (_levels(ni, km) for _ in range(7))
        pem = _levels(ni, km)
        for k in range(1, km + 1):
            dm[:, k] = delp[:, j, k - 1]
            pt2[:, k] = pt[:, j, k - 1]
        pef[:, j, 0] = ptop
        pem[:, 1] = ptop
        for k in range(2, km + 2):
            pem[:, k] = pem[:, k - 1] + dm[:, k - 1]
        for k in range(1, km + 1):
            dz2[:, k] = gz[:, j, k] - gz[:, j, k - 1]
            pm2[:, k] = dm[:, k] / np.log(pem[:, k + 1] / pem[:, k])
            cp2[:, k] = akap
            gm2[:, k] = 1.0 / (1.0 - cp2[:, k])
            dm[:, k] = dm[:, k] * (1.0 / grav)
            w2[:, k] = w3[:, j, k - 1]
        pe2 = _solve(a_imp, dt, km, rdgas, gama, akap, gm2, cp2, dm, pm2, pem, w2, dz2, pt2,
                     ws[:, j], p_fac, grav, damping, cgrid=True)  # fmt: skip
        for k in range(2, km + 2):
            pef[:, j, k - 1] = pe2[:, k] + pem[:, k]
        gz[:, j, km] = hs[:, j]
        for k in range(km, 0, -1):
            gz[:, j, k - 1] = gz[:, j, k] - dz2[:, k] * grav


def update_dz_c(is_: int, ie: int, js: int, je: int, km: int, dt: float, dp0: np.ndarray, zs: FArray,
                area: FArray, ut: list[FArray], vt: list[FArray], gz: list[FArray], ws: FArray, npx: int,
                npy: int, corners: object, dz_min: float = 2.0) -> None:  # fmt: skip
    """``update_dz_c`` (``grid_type < 3``): ``gz``, ``ut``, ``vt``: one :class:`FArray` per level
    (``gz``: ``km + 1`` interfaces), top down; ``dp0``: FV3's ``dp0(1:km)``; in place."""
    rdt = 1.0 / dt
    top_ratio = dp0[0] / (dp0[0] + dp0[1])
    bot_ratio = dp0[km - 1] / (dp0[km - 2] + dp0[km - 1])
    is1, js1, ie1, je1, ie2, je2 = is_ - 1, js - 1, ie + 1, je + 1, ie + 2, je + 2
    lo = gz[0].lo
    for k in range(1, km + 2):
        xfx = FArray.full(lo, gz[0].hi)
        yfx = FArray.full(lo, gz[0].hi)
        fx = FArray.full(lo, gz[0].hi)
        fy = FArray.full(lo, gz[0].hi)
        ux, vy = R(is1, ie2), R(js1, je1)
        uy, vx = R(js1, je2), R(is1, ie1)
        if k == 1:
            xfx[ux, vy] = ut[0][ux, vy] + (ut[0][ux, vy] - ut[1][ux, vy]) * top_ratio
            yfx[vx, uy] = vt[0][vx, uy] + (vt[0][vx, uy] - vt[1][vx, uy]) * top_ratio
        elif k == km + 1:
            xfx[ux, vy] = ut[km - 1][ux, vy] + (ut[km - 1][ux, vy] - ut[km - 2][ux, vy]) * bot_ratio
            yfx[vx, uy] = vt[km - 1][vx, uy] + (vt[km - 1][vx, uy] - vt[km - 2][vx, uy]) * bot_ratio
        else:
            int_ratio = 1.0 / (dp0[k - 2] + dp0[k - 1])
            xfx[ux, vy] = (dp0[k - 1] * ut[k - 2][ux, vy] + dp0[k - 2] * ut[k - 1][ux, vy]) * int_ratio
            yfx[vx, uy] = (dp0[k - 1] * vt[k - 2][vx, uy] + dp0[k - 2] * vt[k - 1][vx, uy]) * int_ratio
        gz2 = FArray(gz[k - 1].data.copy(), lo)
        fill_4corners(gz2, XDIR, npx, npy, corners)
        for j in range(js1, je1 + 1):
            for i in range(is1, ie2 + 1):
                fx[i, j] = gz2[i - 1, j] if xfx[i, j] > 0.0 else gz2[i, j]
                fx[i, j] = xfx[i, j] * fx[i, j]
        fill_4corners(gz2, YDIR, npx, npy, corners)
        for j in range(js1, je2 + 1):
            for i in range(is1, ie1 + 1):
                fy[i, j] = gz2[i, j - 1] if yfx[i, j] > 0.0 else gz2[i, j]
                fy[i, j] = yfx[i, j] * fy[i, j]
        for j in range(js1, je1 + 1):
            for i in range(is1, ie1 + 1):
                gz[k - 1][i, j] = (gz2[i, j] * area[i, j] + fx[i, j] - fx[i + 1, j] + fy[i, j] - fy[i, j + 1]) / (
                    area[i, j] + xfx[i, j] - xfx[i + 1, j] + yfx[i, j] - yfx[i, j + 1])  # fmt: skip
    for j in range(js1, je1 + 1):
        for i in range(is1, ie1 + 1):
            ws[i, j] = (zs[i, j] - gz[km][i, j]) * rdt
        for k in range(km, 0, -1):
            for i in range(is1, ie1 + 1):
                gz[k - 1][i, j] = max(gz[k - 1][i, j], gz[k][i, j] + dz_min)


def edge_profile(q1: np.ndarray, q2: np.ndarray, dp0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``edge_profile`` (``uniform_grid = .false.``, ``limiter = 0``) of every column of ``q1``,
    ``q2`` ``(..., km)``: the interface values ``(..., km + 1)``."""
    km = q1.shape[-1]
    qe1, qe2, gam = (np.zeros(q1.shape[:-1] + (km + 2,)) for _ in range(3))
    q1, q2 = (np.concatenate([np.zeros(q.shape[:-1] + (1,)), q], -1) for q in (q1, q2))
    g0 = dp0[1] / dp0[0]
    xt1 = 2.0 * g0 * (g0 + 1.0)
    bet = g0 * (g0 + 0.5)
    qe1[..., 1] = (xt1 * q1[..., 1] + q1[..., 2]) / bet
    qe2[..., 1] = (xt1 * q2[..., 1] + q2[..., 2]) / bet
    gam[..., 1] = (1.0 + g0 * (g0 + 1.5)) / bet
    for k in range(2, km + 1):
        gk = dp0[k - 2] / dp0[k - 1]
        bet = 2.0 + 2.0 * gk - gam[..., k - 1]
        qe1[..., k] = (3.0 * (q1[..., k - 1] + gk * q1[..., k]) - qe1[..., k - 1]) / bet
        qe2[..., k] = (3.0 * (q2[..., k - 1] + gk * q2[..., k]) - qe2[..., k - 1]) / bet
        gam[..., k] = gk / bet
    a_bot = 1.0 + gk * (gk + 1.5)
    xt1 = 2.0 * gk * (gk + 1.0)
    xt2 = gk * (gk + 0.5) - a_bot * gam[..., km]
    qe1[..., km + 1] = (xt1 * q1[..., km] + q1[..., km - 1] - a_bot * qe1[..., km]) / xt2
    qe2[..., km + 1] = (xt1 * q2[..., km] + q2[..., km - 1] - a_bot * qe2[..., km]) / xt2
    for k in range(km, 0, -1):
        qe1[..., k] = qe1[..., k] - gam[..., k] * qe1[..., k + 1]
        qe2[..., k] = qe2[..., k] - gam[..., k] * qe2[..., k + 1]
    return qe1[..., 1:], qe2[..., 1:]


def update_dz_d(ndif: list[int], damp: list[float], hord: int, km: int, g: object, dp0: np.ndarray,
                zs: np.ndarray, zh: np.ndarray, crx: np.ndarray, cry: np.ndarray, xfx: np.ndarray,
                yfx: np.ndarray, ws: np.ndarray, rdt: float, dz_min: float = 2.0) -> None:  # fmt: skip
    """``update_dz_d``: 3-D arrays from ``(isd, jsd)`` (``crx``, ``xfx`` x faces, ``cry``,
    ``yfx`` y faces, layers; ``zh`` interfaces), ``ndif``, ``damp`` FV3's ``km`` values; in place."""
    from tests.fv3core.transliteration.deln_flux import del6_vt_flux
    from tests.fv3core.transliteration.tp_core import fv_tp_2d

    b = g.bd
    ndif, damp = [*ndif, ndif[-1]], [*damp, damp[-1]]
    crx_adv, xfx_adv = edge_profile(crx, xfx, dp0)
    cry_adv, yfx_adv = edge_profile(cry, yfx, dp0)
    lo = (b.isd, b.jsd)
    area, rarea = g.area, g.rarea
    for k in range(km + 1):
        xa, ya = FArray(xfx_adv[:, :, k], lo), FArray(yfx_adv[:, :, k], lo)
        ra_x = FArray.full(lo, (b.ied, b.jed))
        ra_y = FArray.full(lo, (b.ied, b.jed))
        ra_x[R(b.is_, b.ie), R(b.jsd, b.jed)] = (area[R(b.is_, b.ie), R(b.jsd, b.jed)] + xa[R(b.is_, b.ie), R(b.jsd, b.jed)]
                                                 - xa[R(b.is_ + 1, b.ie + 1), R(b.jsd, b.jed)])  # fmt: skip
        ra_y[R(b.isd, b.ied), R(b.js, b.je)] = (area[R(b.isd, b.ied), R(b.js, b.je)] + ya[R(b.isd, b.ied), R(b.js, b.je)]
                                                 - ya[R(b.isd, b.ied), R(b.js + 1, b.je + 1)])  # fmt: skip
        z = FArray(zh[:, :, k], lo)
        I, J = R(b.is_, b.ie), R(b.js, b.je)
        if damp[k] > 1.0e-5:
            z2 = FArray(zh[:, :, k].copy(), lo)
            fx, fy = fv_tp_2d(z2, FArray(crx_adv[:, :, k], lo), FArray(cry_adv[:, :, k], lo), hord, xa, ya, ra_x,
                              ra_y, g)  # fmt: skip
            wk2 = FArray.full(lo, (b.ied, b.jed))
            fx2 = FArray.full(lo, (b.ied + 1, b.jed))
            fy2 = FArray.full(lo, (b.ied, b.jed + 1))
            del6_vt_flux(ndif[k], g.npx, g.npy, damp[k], z2, wk2, fx2, fy2, g)
            z[I, J] = (z2[I, J] * area[I, J] + fx[I, J] - fx[I + 1, J] + fy[I, J] - fy[I, J + 1]) / (
                ra_x[I, J] + ra_y[I, J] - area[I, J]) + (fx2[I, J] - fx2[I + 1, J] + fy2[I, J] - fy2[I, J + 1]) * rarea[I, J]  # fmt: skip
        else:
            fx, fy = fv_tp_2d(z, FArray(crx_adv[:, :, k], lo), FArray(cry_adv[:, :, k], lo), hord, xa, ya, ra_x,
                              ra_y, g)  # fmt: skip
            z[I, J] = (z[I, J] * area[I, J] + fx[I, J] - fx[I + 1, J] + fy[I, J] - fy[I, J + 1]) / (
                ra_x[I, J] + ra_y[I, J] - area[I, J])  # fmt: skip
    for j in range(b.js, b.je + 1):
        jj = j - b.jsd
        Ic = slice(b.is_ - b.isd, b.ie + 1 - b.isd)
        ws[Ic, jj] = (zs[Ic, jj] - zh[Ic, jj, km]) * rdt
        for k in range(km, 0, -1):
            zh[Ic, jj, k - 1] = np.maximum(zh[Ic, jj, k - 1], zh[Ic, jj, k] + dz_min)

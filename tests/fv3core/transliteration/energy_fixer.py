"""FV3's total-energy fixer ``consv_te`` (hydrostatic, dry), transliterated: the hydrostatic
branch of ``compute_total_energy`` (``fv_thermodynamics.F90``), the "consv > consv_min" and
"consv < -consv_min" blocks of ``Lagrangian_to_Eulerian`` (``fv_mapz.F90``) and its step 9a
heating.  The reference of :mod:`fv3core.vertical.energy_fixer`.

Arrays are one rank's compute domain, 0-based, vertical last (level 0 the model top): ``pt``,
``delp``, ``pkz`` ``(nx, ny, km)``; ``pe``, ``peln``, ``pk`` ``(nx, ny, km + 1)``; ``u``
``(nx, ny + 1, km)``; ``v`` ``(nx + 1, ny, km)``; ``hs`` (FV3's ``phis``), ``rsin2``,
``cosa_s``, ``area`` ``(nx, ny)``.  Dry: FV3's ``1 + qc`` and ``1 + r_vir q`` factors are 1.
The global sums are FV3's ``g_sum(..., reproduce=.true.)`` with ``math.fsum`` for FMS's
bitwise-reproducible sum.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from fv3core.constants import Constants

CONSV_MIN = 0.001


def _kinetic(u: np.ndarray, v: np.ndarray, rsin2: np.ndarray, cosa_s: np.ndarray,
             j: int, k: int) -> np.ndarray:  # fmt: skip
    """``0.25*rsin2(i,j)*(u(i,j,k)**2+u(i,j+1,k)**2+v(i,j,k)**2+v(i+1,j,k)**2 -
    (u(i,j,k)+u(i,j+1,k))*(v(i,j,k)+v(i+1,j,k))*cosa_s(i,j))`` for all ``i``."""
    us, un = u[:, j, k], u[:, j + 1, k]
    vw, ve = v[:-1, j, k], v[1:, j, k]
    return 0.25 * rsin2[:, j] * (us * us + un * un + vw * vw + ve * ve
                                 - (us + un) * (vw + ve) * cosa_s[:, j])  # fmt: skip


def compute_total_energy(pt: np.ndarray, delp: np.ndarray, pe: np.ndarray, peln: np.ndarray,
                         hs: np.ndarray, u: np.ndarray, v: np.ndarray, rsin2: np.ndarray,
                         cosa_s: np.ndarray, *, rg: float, cp: float) -> np.ndarray:  # fmt: skip
    """``te_2d`` of ``compute_total_energy``, hydrostatic (``pt`` the temperature)."""
    nx, ny, km = pt.shape
    te_2d = np.zeros((nx, ny))
    for j in range(ny):
        phiz = np.zeros((nx, km + 1))
        tv = np.zeros((nx, km))
        phiz[:, km] = hs[:, j]
        for k in range(km - 1, -1, -1):
            tv[:, k] = pt[:, j, k]
            phiz[:, k] = phiz[:, k + 1] + rg * tv[:, k] * (peln[:, j, k + 1] - peln[:, j, k])
        te_2d[:, j] = pe[:, j, km] * phiz[:, km] - pe[:, j, 0] * phiz[:, 0]
        for k in range(km):
            te_2d[:, j] = te_2d[:, j] + delp[:, j, k] * (
                cp * tv[:, k] + _kinetic(u, v, rsin2, cosa_s, j, k))  # fmt: skip
    return te_2d


def energy_deficit(pt: np.ndarray, delp: np.ndarray, pe: np.ndarray, peln: np.ndarray,
                   pk: np.ndarray, pkz: np.ndarray, hs: np.ndarray, u: np.ndarray,
                   v: np.ndarray, rsin2: np.ndarray, cosa_s: np.ndarray, te0_2d: np.ndarray,
                   *, rg: float, cp: float, ptop: float) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """``Lagrangian_to_Eulerian``'s "consv > consv_min" loop (hydrostatic, ``remap_te =
    .false.``) on the remapped state: ``(te_2d, zsum0)``, ``te_2d = te0_2d -`` the column
    energy."""
    nx, ny, km = pt.shape
    te_2d, zsum0 = np.zeros((nx, ny)), np.zeros((nx, ny))
    for j in range(ny):
        gz = hs[:, j].copy()
        for k in range(km):
            gz = gz + rg * pt[:, j, k] * (peln[:, j, k + 1] - peln[:, j, k])
        te_2d[:, j] = pe[:, j, km] * hs[:, j] - pe[:, j, 0] * gz
        for k in range(km):
            te_2d[:, j] = te_2d[:, j] + delp[:, j, k] * (
                cp * pt[:, j, k] + _kinetic(u, v, rsin2, cosa_s, j, k))  # fmt: skip
        te_2d[:, j] = te0_2d[:, j] - te_2d[:, j]
        zsum1 = pkz[:, j, 0] * delp[:, j, 0]
        for k in range(1, km):
            zsum1 = zsum1 + pkz[:, j, k] * delp[:, j, k]
        zsum0[:, j] = ptop * (pk[:, j, 0] - pk[:, j, km]) + zsum1
    return te_2d, zsum0


def g_sum(values: Sequence[np.ndarray], areas: Sequence[np.ndarray]) -> float:
    """``g_sum(domain, p, ..., area, 0, reproduce=.true.)`` over the ranks' arrays."""
    return math.fsum(float(x) for p, a in zip(values, areas) for x in (p * a).reshape(-1))


def heating(consv: float, te_2d: Sequence[np.ndarray], zsum0: Sequence[np.ndarray],
            areas: Sequence[np.ndarray], *, pdt: float, constants: Constants) -> tuple[float, float]:  # fmt: skip
    """``(dtmp, E_Flux)`` of ``Lagrangian_to_Eulerian`` from every rank's ``te_2d``, ``zsum0``
    (``E_Flux``: FV3's single-precision value, as a float; ``(0, 0)`` when ``|consv| <=
    consv_min``)."""
    grav, radius, pi = constants.grav, constants.radius, math.pi
    if consv > CONSV_MIN:
        dtmp = consv * g_sum(te_2d, areas)
        e_flux = float(np.float32(dtmp / (grav * pdt * 4.0 * pi * radius**2)))
        dtmp = dtmp / g_sum(zsum0, areas)
    elif consv < -CONSV_MIN:
        e_flux = float(np.float32(consv))
        dtmp = e_flux * (grav * pdt * 4.0 * pi * radius**2) / g_sum(zsum0, areas)
    else:
        return 0.0, 0.0
    return dtmp, e_flux


def heat(pt: np.ndarray, pkz: np.ndarray, dtmp: float, cp: float) -> np.ndarray:
    """Step 9a, dry: ``pt = (pt + dtmp/cp*pkz) / (1. + r_vir*0)``."""
    return pt + dtmp / cp * pkz

"""FV3's ``Ray_fast`` (``dyn_core.F90``) in GTScript: :class:`FastRayleighFriction`, the
"inline" Rayleigh friction of the winds in the top layers, applied every acoustic step where
``RF_fast`` is set.

Above ``rf_cutoff`` each layer's winds (and the non-hydrostatic ``w``) are multiplied by
``rf = 1 / (1 + dt / tau sin(pi/2 log(rf_cutoff / p) / log(rf_cutoff / ptop)) ** 2)`` (``p`` the
reference full-level pressure, ``tau`` in days); the horizontal momentum the damping removes from
a column is given back evenly (per unit mass) to its top layers down to ``rf_cutoff + min(100,
10 ptop)`` (FV3's ``k_rf``), so the column's momentum is conserved.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import __INLINED, BACKWARD, FORWARD, PARALLEL, computation, interval

from fv3core.errors import FV3ConfigError
from fv3core.stencils.divergence_damping import edge_dims
from stencils.dims import CELL_DIMS
from stencils.directions import DIRECTIONS
from stencils.factory import GridStencilFactory
from stencils.launch import Launch
from stencils.storage import from_numpy

FloatField = gtscript.Field[np.float64]
FloatFieldK = gtscript.Field[gtscript.K, np.float64]

SECONDS_PER_DAY = 86400.0


def rayleigh_damp(q: FloatField, rf: FloatFieldK, dp: FloatFieldK, refill: FloatFieldK, dm: float):
    """``q`` times ``rf`` in each layer; with ``CONSERVE`` (the winds) the column's removed
    ``(1 - rf) dp q`` summed top down and given back, divided by ``dm``, to the layers where
    ``refill`` is 1 (``rf`` is 1 and ``refill`` 0 below FV3's ``kmax`` and ``k_rf``)."""
    from __externals__ import CONSERVE

    with computation(FORWARD):
        with interval(0, 1):
            if __INLINED(CONSERVE):
                removed = (1.0 - rf) * dp * q
            q = rf * q
        with interval(1, None):
            if __INLINED(CONSERVE):
                removed = removed[0, 0, -1] + (1.0 - rf) * dp * q
            q = rf * q
    with computation(BACKWARD), interval(0, -1):
        if __INLINED(CONSERVE):
            removed = removed[0, 0, 1]
    with computation(PARALLEL), interval(...):
        if __INLINED(CONSERVE):
            if refill > 0.0:
                q = q + removed / dm


def rayleigh_factor(dt_over_tau: float, rf_cutoff: float, ptop: float, p: float) -> float:
    """FV3's Rayleigh damping factor of a layer at pressure ``p`` above ``rf_cutoff`` (``Ray_fast``,
    and ``Riem_Solver_c``'s damping of ``w``): ``1 / (1 + dt / tau sin(pi/2 log(rf_cutoff / p) /
    log(rf_cutoff / ptop)) ** 2)``."""
    s = math.sin(0.5 * math.pi * math.log(rf_cutoff / p) / math.log(rf_cutoff / ptop))
    return 1.0 / (1.0 + dt_over_tau * (s * s))


def rayleigh_factors(dt: float, tau: float, rf_cutoff: float, ptop: float, pfull: np.ndarray,
                     dp: np.ndarray, ks: int) -> tuple[np.ndarray, int, int, float]:  # fmt: skip
    """``Ray_fast``'s set-up: ``rf`` per layer (1 below the damped ones), FV3's ``kmax`` (the
    damped layers), ``k_rf`` (the refilled ones, at most ``ks``) and their ``dp`` sum ``dm``."""
    tau0 = tau * SECONDS_PER_DAY
    rf, kmax = np.ones(len(pfull)), 0
    for k, p in enumerate(pfull):
        if p >= rf_cutoff:
            break
        rf[k] = rayleigh_factor(dt / tau0, rf_cutoff, ptop, p)
        kmax = k + 1
    k_rf = 0
    for k in range(ks):
        if pfull[k] >= rf_cutoff + min(100.0, 10.0 * ptop):
            break
        k_rf = k + 1
    dm = 0.0
    for k in range(k_rf):
        dm = dm + dp[k]
    return rf, kmax, k_rf, dm


class FastRayleighFriction:
    """Equivalent of FV3's ``Ray_fast`` (``dyn_core.F90``): ``u`` (``is..ie, js..je+1``), ``v``
    (``is..ie+1, js..je``) and, non-hydrostatic, ``w`` (``is..ie, js..je``) damped in place.
    ``pfull``: FV3's reference full-level pressures (Pa), ``dp``: ``dp_ref`` (Pa), ``ks``: the
    pure-pressure layers, ``tau`` (days), ``dt`` the acoustic step (s)."""

    def __init__(self, factory: GridStencilFactory, *, dt: float, tau: float, rf_cutoff: float, ptop: float,
                 pfull: np.ndarray, dp: np.ndarray, ks: int, hydrostatic: bool) -> None:  # fmt: skip
        if not tau > 0.0:
            raise FV3ConfigError(f"Ray_fast: tau = {tau} days; FV3 applies it with tau > 0")
        rf, self.kmax, self.k_rf, dm = rayleigh_factors(dt, tau, rf_cutoff, ptop, np.asarray(pfull),
                                                         np.asarray(dp), ks)  # fmt: skip
        if self.k_rf == 0:
            raise FV3ConfigError(f"Ray_fast: no layer of the {ks} pure-pressure ones lies above "
                                 f"rf_cutoff = {rf_cutoff} Pa: raise rf_cutoff or ks")  # fmt: skip
        self.rf, self.dm, self.hydrostatic = rf, float(dm), hydrostatic
        backend, nz = factory.backend, factory.indexing.nz
        refill = (np.arange(nz) < self.k_rf).astype(np.float64)
        self._k = {name: from_numpy(np.append(a, 0.0), backend, (0,))
                   for name, a in (("rf", rf), ("dp", np.asarray(dp, dtype=np.float64)), ("refill", refill))}  # fmt: skip
        self._winds = {d: factory.from_dims(rayleigh_damp, edge_dims(d), externals={"CONSERVE": True},
                                            name=f"ray_fast_{d.name}") for d in DIRECTIONS}  # fmt: skip
        self._w = factory.from_dims(rayleigh_damp, CELL_DIMS, externals={"CONSERVE": False}, name="ray_fast_w")

    def bind(self, u: Any, v: Any, w: Any = None) -> list[Launch]:
        """``w`` (cells) is damped where the core is non-hydrostatic."""
        winds = {"x": u, "y": v}
        launches = [s.bind(q=winds[d.name], dm=self.dm, **self._k) for d, s in self._winds.items()]
        if not self.hydrostatic:
            if w is None:
                raise ValueError("Ray_fast, non-hydrostatic: pass w")
            launches.append(self._w.bind(q=w, dm=self.dm, **self._k))
        return launches

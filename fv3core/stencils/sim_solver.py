"""FV3's semi-implicit vertical solvers of the non-hydrostatic core (``nh_utils.F90``:
``SIM1_solver``, ``SIM_solver``, ``SIM3_solver``, ``SIM3p0_solver``) in GTScript:
:class:`SemiImplicitSolver`, the one that ``a_imp`` selects.

Each solves, column by column, the vertically implicit acoustic system for the vertical velocity
``w`` and the layer thickness ``delz`` over a time step ``dt``:

1. the cell-mean pressure from the ideal gas law, ``p = (-dm R pt / delz) ** gama``, reconstructed
   to the interfaces by a cubic edge profile (a tridiagonal solve, FORWARD and BACKWARD);
2. ``w`` from the tridiagonal system of the linearised vertical momentum and continuity equations
   (FORWARD elimination, BACKWARD substitution), with ``ws``, the surface's vertical velocity,
   as the bottom boundary;
3. the non-hydrostatic pressure perturbation on the interfaces from the change of ``w`` (FORWARD);
4. ``delz`` back from the new interface pressures (BACKWARD).

SIM1 and SIM work on the perturbation from the hydrostatic pressure ``pm`` and ``pem``
(``gm2 = 1 / (1 - cappa)``); SIM3 and SIM3p0 on the full pressure, with gravity's correction of
the bottom edge. SIM and SIM3 are off-centred by ``alpha = |a_imp|`` (``beta = 1 - alpha``);
SIM1 and SIM3p0 are their fully implicit forms. The model is dry (``cappa = kappa``), and FV3's
``scale_m`` is a Fortran parameter 0 (its terms vanish exactly and are left out). FV3's fast
Rayleigh damping of ``w`` (``fast_tau_w_sec``) multiplies ``w`` by ``rff`` in SIM1 and SIM
(1 below ``rf_cutoff``: exact).

The domain is the interfaces (``nz + 1`` levels): the cell fields ``w``, ``delz``, ``dm``
(``delp / grav``), ``pm`` (the hydrostatic layer-mean pressure), ``pt`` are read and written on
the first ``nz``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import (
    __INLINED,
    BACKWARD,
    FORWARD,
    PARALLEL,
    computation,
    exp,
    interval,
    log,
)

from fv3core.errors import FV3ConfigError
from fv3core.stencils.ray_fast import rayleigh_factor
from stencils.dims import X_DIM, Y_DIM, Z_INTERFACE_DIM
from stencils.factory import GridStencilFactory
from stencils.launch import Launch

FloatField = gtscript.Field[np.float64]
FloatFieldIJ = gtscript.Field[gtscript.IJ, np.float64]
FloatFieldK = gtscript.Field[gtscript.K, np.float64]

R3 = 1.0 / 3.0


def semi_implicit_solve(
    w: FloatField,
    delz: FloatField,
    pe: FloatField,
    dm: FloatField,
    pm: FloatField,
    pt: FloatField,
    pem: FloatField,
    ws: FloatFieldIJ,
    rff: FloatFieldK,
    dt: float,
    rdt: float,
    t1g: float,
    beta: float,
    t2: float,
    ra: float,
    rgas: float,
    gama: float,
    akap: float,
    p_fac: float,
    grav: float,
):
    """One column solve of ``SIM1_solver``/``SIM_solver`` (``FULL_PRESSURE`` False) or
    ``SIM3p0_solver``/``SIM3_solver`` (True), fully implicit or off-centred (``OFF_CENTRED``) by
    ``alpha``: ``w`` and ``delz`` in and out, ``pe`` the interfaces' non-hydrostatic pressure
    perturbation out (FV3's ``pe2``). The scalars are FV3's: ``rdt = 1 / dt``, ``t1g`` (the
    solver's ``2 gama (alpha dt)**2`` in its own order), ``beta = 1 - alpha``, ``t2 = beta / alpha``,
    ``ra = 1 / alpha``."""
    from __externals__ import FULL_PRESSURE, OFF_CENTRED, RAYLEIGH

    with computation(PARALLEL), interval(0, -1):
        w1 = w
        if __INLINED(FULL_PRESSURE):
            pc = exp(gama * log(-dm / delz * rgas * pt))
        else:
            pc = exp(gama * log(-dm / delz * rgas * pt)) - pm
    # the cubic edge profile of the cell means: FORWARD elimination, BACKWARD substitution
    with computation(PARALLEL):
        with interval(0, -2):
            g_rat = dm / dm[0, 0, 1]
            bb = 2.0 * (1.0 + g_rat)
            dd = 3.0 * (pc + g_rat * pc[0, 0, 1])
        with interval(-2, -1):
            bb = 2.0
            if __INLINED(FULL_PRESSURE):
                dd = 3.0 * pc + grav / 2.0 * dm
            else:
                dd = 3.0 * pc
    with computation(FORWARD):
        with interval(0, 1):
            bet = bb
            if __INLINED(FULL_PRESSURE):
                pp = pem
            else:
                pp = 0.0
        with interval(1, -1):
            pp = (dd[0, 0, -1] - pp[0, 0, -1]) / bet[0, 0, -1]
            gam = g_rat[0, 0, -1] / bet[0, 0, -1]
            bet = bb - gam
        with interval(-1, None):
            pp = (dd[0, 0, -1] - pp[0, 0, -1]) / bet[0, 0, -1]
    with computation(BACKWARD), interval(1, -1):
        pp = pp - gam * pp[0, 0, 1]
    # pp: the perturbation on the interfaces; pf (full pressure forms): the full pressure
    with computation(PARALLEL), interval(...):
        if __INLINED(FULL_PRESSURE):
            pf = pp
            pp = pf - pem
    # the w system on the interior interfaces
    with computation(PARALLEL), interval(1, -1):
        if __INLINED(FULL_PRESSURE):
            aa = t1g / (delz[0, 0, -1] + delz) * pf
        else:
            aa = t1g * 0.5 * (gama + gama) / (delz[0, 0, -1] + delz) * pem
        if __INLINED(OFF_CENTRED):
            wk = t2 * aa * (w1[0, 0, -1] - w1)
    with computation(FORWARD):
        with interval(0, 1):
            bet = dm - aa[0, 0, 1]
            if __INLINED(OFF_CENTRED):
                w = (dm * w1 + dt * pp[0, 0, 1] + wk[0, 0, 1]) / bet
            else:
                w = (dm * w1 + dt * pp[0, 0, 1]) / bet
        with interval(1, -2):
            gam = aa / bet[0, 0, -1]
            bet = dm - (aa + aa[0, 0, 1] + aa * gam)
            if __INLINED(OFF_CENTRED):
                w = (dm * w1 + dt * (pp[0, 0, 1] - pp) + wk[0, 0, 1] - wk - aa * w[0, 0, -1]) / bet
            else:
                w = (dm * w1 + dt * (pp[0, 0, 1] - pp) - aa * w[0, 0, -1]) / bet
        with interval(-2, -1):
            if __INLINED(FULL_PRESSURE):
                wk1 = t1g / delz * pf[0, 0, 1]
            else:
                wk1 = t1g * gama / delz * pem[0, 0, 1]
            gam = aa / bet[0, 0, -1]
            bet = dm - (aa + wk1 + aa * gam)
            if __INLINED(OFF_CENTRED):
                w = (dm * w1 + dt * (pp[0, 0, 1] - pp) - wk
                     + wk1 * (t2 * w1 - ra * ws) - aa * w[0, 0, -1]) / bet  # fmt: skip
            else:
                w = (dm * w1 + dt * (pp[0, 0, 1] - pp) - wk1 * ws - aa * w[0, 0, -1]) / bet
    with computation(BACKWARD), interval(0, -2):
        w = w - gam[0, 0, 1] * w[0, 0, 1]
    with computation(PARALLEL), interval(0, -1):
        if __INLINED(RAYLEIGH):
            w = w * rff
    # the new pressure perturbation on the interfaces, top down
    with computation(FORWARD):
        with interval(0, 1):
            pe = 0.0
        with interval(1, None):
            if __INLINED(OFF_CENTRED):
                pe = pe[0, 0, -1] + (dm[0, 0, -1] * (w[0, 0, -1] - w1[0, 0, -1]) * rdt
                                     - beta * (pp - pp[0, 0, -1])) * ra  # fmt: skip
            else:
                pe = pe[0, 0, -1] + dm[0, 0, -1] * (w[0, 0, -1] - w1[0, 0, -1]) * rdt
    with computation(PARALLEL):
        with interval(0, 1):
            if __INLINED(FULL_PRESSURE):
                pf = pem
        with interval(1, None):
            if __INLINED(FULL_PRESSURE):
                pf = p_fac * pem if p_fac * pem > pe + pem else pe + pem
    # delz from the cell-mean pressure, bottom up
    with computation(BACKWARD):
        with interval(-2, -1):
            if __INLINED(FULL_PRESSURE):
                p1 = (pf + 2.0 * pf[0, 0, 1]) * R3 - grav / 6.0 * dm
                delz = -dm * rgas * pt * exp((akap - 1.0) * log(p1))
            else:
                p1 = (pe + 2.0 * pe[0, 0, 1]) * R3
                pg = p_fac * pm if p_fac * pm > p1 + pm else p1 + pm
                delz = -dm * rgas * pt * exp((akap - 1.0) * log(pg))
        with interval(0, -2):
            if __INLINED(FULL_PRESSURE):
                p1 = (pf + bb * pf[0, 0, 1] + g_rat * pf[0, 0, 2]) * R3 - g_rat * p1[0, 0, 1]
                delz = -dm * rgas * pt * exp((akap - 1.0) * log(p1))
            else:
                p1 = (pe + bb * pe[0, 0, 1] + g_rat * pe[0, 0, 2]) * R3 - g_rat * p1[0, 0, 1]
                pg = p_fac * pm if p_fac * pm > p1 + pm else p1 + pm
                delz = -dm * rgas * pt * exp((akap - 1.0) * log(pg))
    with computation(PARALLEL), interval(...):
        if __INLINED(FULL_PRESSURE):
            pe = pf - pem
        if __INLINED(OFF_CENTRED):
            pe = pe + beta * (pp - pe)


@dataclass(frozen=True)
class SolverChoice:
    """The solver FV3's ``a_imp`` selects (``Riem_Solver3``; ``Riem_Solver_c``: ``cgrid``)."""

    name: str
    full_pressure: bool
    alpha: float

    @property
    def off_centred(self) -> bool:
        return self.alpha < 1.0

    def scalars(self, dt: float, gama: float) -> dict[str, float]:
        """The solver's time-step scalars, as FV3 computes them."""
        alpha = self.alpha
        if self.name == "SIM1":
            t1g = 2.0 * dt * dt
        elif self.name == "SIM":
            t1g = 2.0 * ((alpha * dt) * (alpha * dt))
        elif self.name == "SIM3":
            t1g = gama * 2.0 * ((alpha * dt) * (alpha * dt))
        else:
            t1g = 2.0 * gama * (dt * dt)
        return {"dt": dt, "rdt": 1.0 / dt, "t1g": t1g, "beta": 1.0 - alpha, "t2": (1.0 - alpha) / alpha,
                "ra": 1.0 / alpha, "gama": gama}  # fmt: skip

    @classmethod
    def from_a_imp(cls, a_imp: float, *, cgrid: bool = False) -> SolverChoice:
        """FV3's dispatch on ``a_imp``: ``Riem_Solver3``: SIM3p0 below -0.999, SIM3
        (``alpha = |a_imp|``) below -0.5, RIM_2D up to 0.5, SIM1 above 0.999, SIM between;
        ``Riem_Solver_c``: SIM3p0 below -0.01, RIM_2D up to 0.5, SIM1 above."""
        if (cgrid and a_imp < -0.01) or a_imp < -0.999:
            return cls("SIM3p0", True, 1.0)
        if a_imp < -0.5:
            return cls("SIM3", True, abs(a_imp))
        if a_imp <= 0.5:
            raise FV3ConfigError(f"a_imp = {a_imp} selects FV3's RIM_2D solver, which fv3core does "
                                 "not port; use a_imp > 0.5 (SIM1/SIM) or < -0.5 (SIM3/SIM3p0)")  # fmt: skip
        if cgrid or a_imp > 0.999:
            return cls("SIM1", False, 1.0)
        return cls("SIM", False, a_imp)


def rayleigh_w_factors(dt: float, fast_tau_w_sec: float, rf_cutoff: float, ptop: float,
                       pfull: np.ndarray) -> np.ndarray:  # fmt: skip
    """FV3's ``rff`` of the fast Rayleigh damping of ``w`` (``Riem_Solver_c``'s set-up, with the
    first call's ``dt``): ``1 / (1 + dt / tau sin(pi/2 log(rf_cutoff / p) / log(rf_cutoff /
    ptop)) ** 2)`` on the top layers down to the first full-level pressure ``p`` above
    ``rf_cutoff``, 1 below (:func:`~fv3core.stencils.ray_fast.rayleigh_factor`)."""
    rff = np.ones(len(pfull))
    for k, p in enumerate(pfull):
        if p > rf_cutoff:
            break
        rff[k] = rayleigh_factor(dt / fast_tau_w_sec, rf_cutoff, ptop, p)
    return rff


class SemiImplicitSolver:
    """Equivalent of FV3's ``SIM1_solver``, ``SIM_solver``, ``SIM3_solver`` and
    ``SIM3p0_solver`` (``nh_utils.F90``), the one ``choice`` names, over the columns of ``halo``
    halo cells around the compute domain (``Riem_Solver_c``: 1, ``Riem_Solver3``: 0)."""

    def __init__(self, factory: GridStencilFactory, choice: SolverChoice, *, halo: int, dt: float,
                 rgas: float, akap: float, grav: float, p_fac: float,
                 rff: np.ndarray | None = None) -> None:  # fmt: skip
        self.choice = choice
        externals = {"FULL_PRESSURE": choice.full_pressure, "OFF_CENTRED": choice.off_centred,
                     "RAYLEIGH": rff is not None and not choice.full_pressure}  # fmt: skip
        self._stencil = factory.from_dims(semi_implicit_solve, (X_DIM, Y_DIM, Z_INTERFACE_DIM), halo,
                                          externals=externals)  # fmt: skip
        self._scalars = {"rgas": float(rgas), "akap": float(akap), "p_fac": float(p_fac),
                         "grav": float(grav), **choice.scalars(float(dt), 1.0 / (1.0 - akap))}  # fmt: skip

    def bind(self, w: Any, delz: Any, pe: Any, dm: Any, pm: Any, pt: Any, pem: Any, ws: Any,
             rff: Any) -> Launch:  # fmt: skip
        """``w``, ``delz`` (cells, in and out), ``pe`` (interfaces, out), ``dm``, ``pm``, ``pt``
        (cells), ``pem`` (interfaces), ``ws`` (2-D), ``rff`` (a K field of :func:`rayleigh_w_factors`
        or ones)."""
        return self._stencil.bind(w=w, delz=delz, pe=pe, dm=dm, pm=pm, pt=pt, pem=pem, ws=ws,
                                  rff=rff, **self._scalars)  # fmt: skip

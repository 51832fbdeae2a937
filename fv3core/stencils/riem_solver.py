"""FV3's vertical Riemann solves of the non-hydrostatic core in GTScript: :class:`RiemannSolver3`
(``Riem_Solver3``, ``nh_core.F90``: the D grid's, with ``imp_diff_w``) and :class:`RiemannSolverC`
(``Riem_Solver_c``, ``nh_utils.F90``: the C grid's half step), and :class:`ImplicitWDiffusion`
(``imp_diff_w``, the ``d2bg_zq`` diffusion of ``w``).

Each sets up the columns FV3's way (the hydrostatic interface pressure ``pem`` from ``ptop`` down,
its logarithm, the layer mean ``pm = delp / dlog(pem)``, the layer mass ``delp / grav`` and the
thickness from the interface heights), runs the :class:`~fv3core.stencils.sim_solver.SemiImplicitSolver`
``a_imp`` selects and integrates the new thicknesses from the surface up. Dry: ``cappa = kappa``,
no ``q_con`` (FV3's ``use_cond`` and ``moist_kappa`` off).
"""

from __future__ import annotations

import math
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

from fv3core.stencils.sim_solver import SemiImplicitSolver, SolverChoice
from stencils.dims import X_DIM, Y_DIM, Z_DIM, Z_INTERFACE_DIM
from stencils.factory import GridStencilFactory
from stencils.launch import Launch
from stencils.storage import from_numpy, zeros

FloatField = gtscript.Field[np.float64]
FloatFieldIJ = gtscript.Field[gtscript.IJ, np.float64]

INTERFACES = (X_DIM, Y_DIM, Z_INTERFACE_DIM)
CELLS = (X_DIM, Y_DIM, Z_DIM)


def riem3_columns(delp: FloatField, zh: FloatField, pem: FloatField, peln: FloatField, pk3: FloatField,
                  pm: FloatField, dm: FloatField, delz: FloatField, akap: float, ptop: float,
                  peln1: float, ptk: float, rgrav: float):  # fmt: skip
    """``Riem_Solver3``'s set-up: ``pem``, ``peln``, ``pk3`` on the interfaces, ``pm``, ``dm``
    and the thickness ``delz`` from the heights ``zh`` in the layers."""
    with computation(FORWARD):
        with interval(0, 1):
            pem = ptop
            peln = peln1
            pk3 = ptk
        with interval(1, None):
            pem = pem[0, 0, -1] + delp[0, 0, -1]
            peln = log(pem)
            pk3 = exp(akap * peln)
    with computation(PARALLEL), interval(0, -1):
        pm = delp / (peln[0, 0, 1] - peln)
        dm = delp * rgrav
        delz = zh[0, 0, 1] - zh


def riem3_finish(zh: FloatField, delz: FloatField, zs: FloatFieldIJ, ppe: FloatField, pem: FloatField,
                 peln2: FloatField, pk3: FloatField, pe: FloatField, peln: FloatField, pk: FloatField):  # fmt: skip
    """``Riem_Solver3``'s outputs: on the last acoustic step FV3's ``pe``, ``peln``, ``pk``; the
    full pressure in ``ppe`` (``FP_OUT``); ``log(p)`` in ``pk3`` (``USE_LOGP``); the heights
    ``zh`` from the surface up."""
    from __externals__ import FP_OUT, LAST_CALL, USE_LOGP

    with computation(PARALLEL), interval(...):
        if __INLINED(LAST_CALL):
            peln = peln2
            pk = pk3
            pe = pem
        if __INLINED(FP_OUT):
            ppe = ppe + pem
    with computation(PARALLEL), interval(1, None):
        if __INLINED(USE_LOGP):
            pk3 = peln2
    with computation(BACKWARD):
        with interval(-1, None):
            zh = zs
        with interval(0, -1):
            zh = zh[0, 0, 1] - delz


def riemc_columns(delp: FloatField, gz: FloatField, w3: FloatField, pem: FloatField, pm: FloatField,
                  dm: FloatField, delz: FloatField, w: FloatField, ptop: float, rgrav: float):  # fmt: skip
    """``Riem_Solver_c``'s set-up: ``pem`` on the interfaces, ``pm``, ``dm``, the thickness from
    the heights ``gz`` and a copy of ``w`` in the layers."""
    with computation(FORWARD):
        with interval(0, 1):
            pem = ptop
        with interval(1, None):
            pem = pem[0, 0, -1] + delp[0, 0, -1]
    with computation(PARALLEL), interval(0, -1):
        delz = gz[0, 0, 1] - gz
        pm = delp / log(pem[0, 0, 1] / pem)
        dm = delp * rgrav
        w = w3


def riemc_finish(pef: FloatField, pem: FloatField, gz: FloatField, delz: FloatField, hs: FloatFieldIJ,
                 grav: float):  # fmt: skip
    """``Riem_Solver_c``'s outputs: the full pressure ``pef`` and the geopotential ``gz`` from the
    surface ``hs`` up."""
    with computation(PARALLEL), interval(...):
        pef = pef + pem
    with computation(BACKWARD):
        with interval(-1, None):
            gz = hs
        with interval(0, -1):
            gz = gz[0, 0, 1] - delz * grav


def implicit_w_diffusion(w: FloatField, delz: FloatField, ws: FloatFieldIJ, cd: float):
    """``imp_diff_w``: ``w`` diffused implicitly in the vertical with coefficient ``cd`` (m2),
    ``ws`` below."""
    with computation(PARALLEL):
        with interval(1, None):
            dz = 0.5 * (delz[0, 0, -1] + delz)
    with computation(PARALLEL):
        with interval(0, -1):
            c = -cd / (dz[0, 0, 1] * delz)
    with computation(FORWARD):
        with interval(0, 1):
            bet = 1.0 - c
            wt = w / bet
        with interval(1, -1):
            gam = c[0, 0, -1] / bet[0, 0, -1]
            a = cd / (dz * delz)
            bet = (1.0 + a - c) + a * gam
            wt = (w + a * wt[0, 0, -1]) / bet
        with interval(-1, None):
            gam = c[0, 0, -1] / bet[0, 0, -1]
            a = cd / (dz * delz)
            w = (w + 2.0 * ws * cd / (delz * delz) + a * wt[0, 0, -1]) / (
                1.0 + a + (cd + cd) / (delz * delz) + a * gam)  # fmt: skip
    with computation(BACKWARD), interval(0, -1):
        w = wt - gam[0, 0, 1] * w[0, 0, 1]


class ImplicitWDiffusion:
    """Equivalent of FV3's ``imp_diff_w`` (``nh_utils.F90``) on the compute columns."""

    def __init__(self, factory: GridStencilFactory, cd: float) -> None:
        self.cd = float(cd)
        self._stencil = factory.from_dims(implicit_w_diffusion, CELLS)

    def bind(self, w: Any, delz: Any, ws: Any) -> Launch:
        return self._stencil.bind(w=w, delz=delz, ws=ws, cd=self.cd)


def _k_field(factory: GridStencilFactory, rff: np.ndarray | None) -> Any:
    nz = factory.indexing.nz
    values = np.ones(nz + 1)
    if rff is not None:
        values[:nz] = rff
    return from_numpy(values, factory.backend, (0,))


class RiemannSolver3:
    """Equivalent of FV3's ``Riem_Solver3`` (``nh_core.F90``, dry) on the compute columns, with
    ``imp_diff_w`` where ``d2bg_zq > 1e-4``. ``rff``: the fast Rayleigh damping of ``w``
    (:func:`~fv3core.stencils.sim_solver.rayleigh_w_factors`), or None."""

    def __init__(self, factory: GridStencilFactory, *, dt: float, a_imp: float, akap: float, ptop: float,
                 rgas: float, grav: float, p_fac: float, d2bg_zq: float = 0.0, use_logp: bool = False,
                 fp_out: bool = False, last_call: bool = False, rff: np.ndarray | None = None) -> None:  # fmt: skip
        self.choice = SolverChoice.from_a_imp(a_imp)
        indexing = factory.indexing
        self._pem, self._peln, self._pm, self._dm = (
            zeros(indexing.domain_of(d), factory.backend) for d in (INTERFACES, INTERFACES, CELLS, CELLS))
        self._rff = _k_field(factory, rff)
        peln1 = math.log(ptop)
        self._columns = factory.from_dims(riem3_columns, INTERFACES)
        self._column_scalars = {"akap": float(akap), "ptop": float(ptop), "peln1": peln1,
                                "ptk": math.exp(akap * peln1), "rgrav": 1.0 / grav}  # fmt: skip
        self._solver = SemiImplicitSolver(factory, self.choice, halo=0, dt=dt, rgas=rgas, akap=akap,
                                          grav=grav, p_fac=p_fac, rff=rff)  # fmt: skip
        self._diffusion = ImplicitWDiffusion(factory, d2bg_zq) if d2bg_zq > 0.0001 else None
        self._finish = factory.from_dims(riem3_finish, INTERFACES, externals={
            "LAST_CALL": last_call, "FP_OUT": fp_out, "USE_LOGP": use_logp})  # fmt: skip

    def bind(self, w: Any, delz: Any, pt: Any, delp: Any, zh: Any, zs: Any, ws: Any, ppe: Any,
             pk3: Any, pe: Any, peln: Any, pk: Any) -> list[Launch]:  # fmt: skip
        """``w``, ``delz`` (cells; ``w`` in and out, ``delz`` out), ``pt``, ``delp`` (cells),
        ``zh`` (interface heights in and out), ``zs``, ``ws`` (2-D), ``ppe``, ``pk3`` (out), and
        FV3's ``pe``, ``peln``, ``pk`` (out on the last call), interfaces."""
        launches = [
            self._columns.bind(delp=delp, zh=zh, pem=self._pem, peln=self._peln, pk3=pk3, pm=self._pm,
                               dm=self._dm, delz=delz, **self._column_scalars),
            self._solver.bind(w, delz, ppe, self._dm, self._pm, pt, self._pem, ws, self._rff),
        ]  # fmt: skip
        if self._diffusion is not None:
            launches.append(self._diffusion.bind(w, delz, ws))
        launches.append(self._finish.bind(zh=zh, delz=delz, zs=zs, ppe=ppe, pem=self._pem, peln2=self._peln,
                                          pk3=pk3, pe=pe, peln=peln, pk=pk))  # fmt: skip
        return launches


class RiemannSolverC:
    """Equivalent of FV3's ``Riem_Solver_c`` (``nh_utils.F90``, dry) on the columns
    ``is-1..ie+1, js-1..je+1``: the C grid's half step of ``w`` and the thicknesses, giving the
    full non-hydrostatic pressure ``pef`` and the geopotential ``gz`` (in: the interface heights
    of ``update_dz_c``). ``w`` itself is not updated (FV3's ``w3`` is read only)."""

    def __init__(self, factory: GridStencilFactory, *, dt: float, a_imp: float, akap: float, ptop: float,
                 rgas: float, grav: float, p_fac: float, rff: np.ndarray | None = None) -> None:  # fmt: skip
        self.choice = SolverChoice.from_a_imp(a_imp, cgrid=True)
        indexing = factory.indexing
        self._pem, self._pm, self._dm, self._delz, self._w = (
            zeros(indexing.domain_of(d), factory.backend) for d in (INTERFACES, CELLS, CELLS, CELLS, CELLS))
        self._rff = _k_field(factory, rff)
        self._columns = factory.from_dims(riemc_columns, INTERFACES, 1)
        self._column_scalars = {"ptop": float(ptop), "rgrav": 1.0 / grav}
        self._solver = SemiImplicitSolver(factory, self.choice, halo=1, dt=dt, rgas=rgas, akap=akap,
                                          grav=grav, p_fac=p_fac, rff=rff)  # fmt: skip
        self._finish = factory.from_dims(riemc_finish, INTERFACES, 1)
        self.grav = float(grav)

    def bind(self, w3: Any, pt: Any, delp: Any, gz: Any, hs: Any, ws: Any, pef: Any) -> list[Launch]:
        """``w3``, ``pt``, ``delp`` (cells), ``gz`` (interfaces: heights in, geopotential out),
        ``hs`` (surface geopotential), ``ws`` (2-D), ``pef`` (interfaces, out)."""
        return [
            self._columns.bind(delp=delp, gz=gz, w3=w3, pem=self._pem, pm=self._pm, dm=self._dm,
                               delz=self._delz, w=self._w, **self._column_scalars),
            self._solver.bind(self._w, self._delz, pef, self._dm, self._pm, pt, self._pem, ws, self._rff),
            self._finish.bind(pef=pef, pem=self._pem, gz=gz, delz=self._delz, hs=hs, grav=self.grav),
        ]  # fmt: skip

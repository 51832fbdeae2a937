# GTScript: assignments to field parameters are the stencils' outputs (pyflakes: F841)
# ruff: noqa: F841
"""FV3's total-energy fixer ``consv_te`` (hydrostatic, dry) in GTScript: the column energy of
``compute_total_energy`` (``fv_thermodynamics.F90``) at the start of ``fv_dynamics``, and on
the last remapping of the step (``fv_mapz.F90``, ``Lagrangian_to_Eulerian``, "consv >
consv_min") the energy lost since then, spread over the sphere as one uniform heating
``dtmp`` of ``pt`` weighted by ``pkz``.  The NumPy transliteration
:mod:`tests.fv3core.transliteration.energy_fixer` is the reference.

Column energy (``Pa m^2/s^2``, per unit area times ``g``): ``pe_s phis - ptop phi_top +
sum_k delp (cp T + KE)``, ``phi`` the hydrostatic geopotential of the interfaces integrated
from ``phis`` with ``rdgas T dlog(p)`` (``compute_total_energy`` integrates it from the
surface up, ``Lagrangian_to_Eulerian`` from the top layer down: kept as FV3 has them), ``KE``
FV3's D-grid kinetic energy ``0.25 rsin2 (u_s^2 + u_n^2 + v_w^2 + v_e^2 - (u_s + u_n)(v_w +
v_e) cosa_s)``.

The global sums are FV3's ``g_sum(..., reproduce=.true.)``: sums of the cell values times
``area`` over the whole sphere, correctly rounded (``math.fsum``, through
:meth:`mapping.cluster.Communicator.exact_sum`), so one process, 6 ranks and 24 ranks give the
same ``dtmp`` bit for bit (FMS's ``BITWISE_EFP_SUM`` is decomposition-independent too; its
final rounding can differ from the correctly rounded sum in the last bit).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import BACKWARD, FORWARD, PARALLEL, computation, interval

from fv3core.constants import Constants
from fv3core.errors import FV3ConfigError
from stencils.dims import CELL_DIMS
from stencils.factory import GridStencilFactory
from stencils.launch import FrozenStencil, Launch
from stencils.storage import to_numpy

FloatField = gtscript.Field[np.float64]
FloatFieldIJ = gtscript.Field[gtscript.IJ, np.float64]

#: FV3 ``fv_mapz``'s ``consv_min``: ``|consv_te|`` at or below which no correction applies
CONSV_MIN = 0.001


@gtscript.function
def dgrid_kinetic_energy(u, v, rsin2, cosa_s):
    """FV3's kinetic energy of a cell from its four D-grid winds (``u`` south/north, ``v``
    west/east)."""
    return 0.25 * rsin2 * (u * u + u[0, 1, 0] * u[0, 1, 0] + v * v + v[1, 0, 0] * v[1, 0, 0]
                           - (u + u[0, 1, 0]) * (v + v[1, 0, 0]) * cosa_s)  # fmt: skip


def initial_energy(pt: FloatField, delp: FloatField, pe: FloatField, peln: FloatField,
                   phis: FloatFieldIJ, u: FloatField, v: FloatField, rsin2: FloatFieldIJ,
                   cosa_s: FloatFieldIJ, te0: FloatFieldIJ, phiz: FloatFieldIJ,
                   psurf: FloatFieldIJ, rdgas: float, cp: float):  # fmt: skip
    """``compute_total_energy`` (hydrostatic, dry: ``tv = pt``, the temperature): ``te0`` per
    column, the geopotential ``phiz`` integrated from the surface up."""
    with computation(BACKWARD):
        with interval(-1, None):
            psurf = pe[0, 0, 1]
            phiz = phis + rdgas * pt * (peln[0, 0, 1] - peln)
        with interval(0, -1):
            phiz = phiz + rdgas * pt * (peln[0, 0, 1] - peln)
    with computation(FORWARD):
        with interval(0, 1):
            te0 = psurf * phis - pe * phiz
            te0 = te0 + delp * (cp * pt + dgrid_kinetic_energy(u, v, rsin2, cosa_s))
        with interval(1, None):
            te0 = te0 + delp * (cp * pt + dgrid_kinetic_energy(u, v, rsin2, cosa_s))


def energy_deficit(pt: FloatField, delp: FloatField, pe: FloatField, peln: FloatField,
                   pk: FloatField, pkz: FloatField, phis: FloatFieldIJ, u: FloatField,
                   v: FloatField, rsin2: FloatFieldIJ, cosa_s: FloatFieldIJ, te0: FloatFieldIJ,
                   te: FloatFieldIJ, zsum0: FloatFieldIJ, gz: FloatFieldIJ, zsum1: FloatFieldIJ,
                   psurf: FloatFieldIJ, pk_top: FloatFieldIJ, rdgas: float, cp: float,
                   ptop: float):  # fmt: skip
    """``Lagrangian_to_Eulerian``'s "consv > consv_min" block after the remapping: ``te`` :=
    ``te0`` minus the column energy of the remapped state (the geopotential ``gz`` integrated
    from the top layer down), ``zsum0 = ptop (pk_top - pk_surface) + sum_k pkz delp``."""
    with computation(FORWARD):
        with interval(0, 1):
            pk_top = pk
            gz = phis + rdgas * pt * (peln[0, 0, 1] - peln)
        with interval(1, None):
            gz = gz + rdgas * pt * (peln[0, 0, 1] - peln)
    with computation(FORWARD), interval(-1, None):
        psurf = pe[0, 0, 1]
    with computation(FORWARD):
        with interval(0, 1):
            te = psurf * phis - pe * gz
            te = te + delp * (cp * pt + dgrid_kinetic_energy(u, v, rsin2, cosa_s))
            zsum1 = pkz * delp
        with interval(1, None):
            te = te + delp * (cp * pt + dgrid_kinetic_energy(u, v, rsin2, cosa_s))
            zsum1 = zsum1 + pkz * delp
    with computation(FORWARD), interval(-1, None):
        te = te0 - te
        zsum0 = ptop * (pk_top - pk[0, 0, 1]) + zsum1


def uniform_heating(pt: FloatField, pkz: FloatField, dtmp_cp: float):
    """Step 9a's ``pt = pt + dtmp / cp * pkz`` (dry: FV3's division by ``1 + r_vir q`` is by
    1); ``dtmp_cp``: ``dtmp / cp``."""
    with computation(PARALLEL), interval(...):
        pt = pt + dtmp_cp * pkz


class TotalEnergyFixer:
    """Equivalent of FV3's ``consv_te`` (``fv_dynamics.F90``: ``compute_total_energy`` of the
    state entering the step; ``fv_mapz.F90``: the fix on the last remapping) for every rank of
    this process, hydrostatic and dry.

    ``consv``: FV3's ``consv_te``: > 0.001 restores that fraction of the energy lost over the
    step (1: all of it); < -0.001 adds a prescribed flux of ``consv`` W/m^2 (negative: a
    cooling; held in single precision, as FV3's ``E_Flux``); otherwise nothing.
    ``dt_atmos``: FV3's ``pdt`` (s); ``ptop`` (Pa).  ``factories[rank]``: the rank's grid factory; ``fields[rank]``: its
    storages under FV3's names (``pt``, ``delp``, ``pe``, ``peln``, ``pk``, ``pkz``, ``u``,
    ``v``, ``phis``, and the grid's ``rsin2``, ``cosa_s``); ``areas[rank]``: the cell areas of
    its compute domain (m^2, NumPy ``(nx, ny)``).  ``communicator``: the run's
    :class:`mapping.cluster.Communicator`, for the global sums.

    :meth:`start` (launches) before the step, ``pt`` the temperature; :meth:`deficit`
    (launches) after the last remapping, ``pt`` the temperature on the Eulerian levels (before
    FV3's step 9a); then :meth:`heat` (collective).  :attr:`energy_deficit`: FV3's ``E_Flux``
    of the last fix (W/m^2).
    """

    def __init__(self, factories: Mapping[int, GridStencilFactory],
                 fields: Mapping[int, Mapping[str, Any]], areas: Mapping[int, np.ndarray],
                 communicator: Any, *, consv: float, dt_atmos: float, ptop: float,
                 constants: Constants) -> None:  # fmt: skip
        if not math.isfinite(consv):
            raise FV3ConfigError(f"consv_te={consv}: must be a finite number")
        self.consv, self.dt_atmos, self.constants = float(consv), float(dt_atmos), constants
        self.communicator = communicator
        self.energy_deficit = 0.0
        c = constants
        self._ranks: dict[int, _RankFixer] = {}
        for r, factory in factories.items():
            f = fields[r]
            area = np.asarray(areas[r], dtype=np.float64)
            idx = factory.indexing
            if area.shape != (idx.nx, idx.ny):
                raise FV3ConfigError(f"TotalEnergyFixer: rank {r}'s area has shape "
                                     f"{area.shape}, its compute domain is {(idx.nx, idx.ny)}")  # fmt: skip
            w = {name: _float_ij(factory) for name in
                 ("te0", "te", "zsum0", "phiz", "psurf", "gz", "zsum1", "pk_top")}  # fmt: skip
            common = {name: f[name] for name in ("pt", "delp", "pe", "peln", "phis", "u", "v",
                                                  "rsin2", "cosa_s")}  # fmt: skip
            self._ranks[r] = _RankFixer(
                area=area,
                cells=idx.interior(CELL_DIMS),
                te=w["te"],
                zsum0=w["zsum0"],
                start=factory.from_dims(initial_energy, CELL_DIMS).bind(
                    **common, te0=w["te0"], phiz=w["phiz"], psurf=w["psurf"], rdgas=c.rdgas,
                    cp=c.cp_air),
                deficit=factory.from_dims(energy_deficit, CELL_DIMS).bind(
                    **common, pk=f["pk"], pkz=f["pkz"], te0=w["te0"], te=w["te"],
                    zsum0=w["zsum0"], gz=w["gz"], zsum1=w["zsum1"], psurf=w["psurf"],
                    pk_top=w["pk_top"], rdgas=c.rdgas, cp=c.cp_air, ptop=float(ptop)),
                heating=factory.from_dims(uniform_heating, CELL_DIMS),
                pt=f["pt"],
                pkz=f["pkz"],
            )  # fmt: skip

    @property
    def active(self) -> bool:
        """Whether the fixer changes the state (``|consv| > consv_min``)."""
        return abs(self.consv) > CONSV_MIN

    def start(self, rank: int) -> list[Launch]:
        """Rank ``rank``'s launches at the step's start: ``te0`` per column (``consv > 0``
        only, as FV3 computes it)."""
        return [self._ranks[rank].start] if self.consv > CONSV_MIN else []

    def deficit(self, rank: int) -> list[Launch]:
        """Rank ``rank``'s launches after the last remapping: the energy lost per column and
        ``zsum0``."""
        return [self._ranks[rank].deficit] if self.active else []

    def heat(self) -> float:
        """The global sums, ``dtmp`` and ``pt += dtmp / cp pkz`` on every rank of this process
        (collective); returns ``dtmp`` (0 when inactive)."""
        if not self.active:
            return 0.0
        c = self.constants
        ranks = self._ranks
        flux_area = c.grav * self.dt_atmos * 4.0 * math.pi * c.radius**2
        zsum0 = self.communicator.exact_sum(
            {r: to_numpy(k.zsum0)[k.cells] * k.area for r, k in ranks.items()}
        )
        if self.consv > 0.0:
            lost = self.consv * self.communicator.exact_sum(
                {r: to_numpy(k.te)[k.cells] * k.area for r, k in ranks.items()}
            )
            self.energy_deficit = float(np.float32(lost / flux_area))
            dtmp = lost / zsum0
        else:
            self.energy_deficit = float(np.float32(self.consv))
            dtmp = self.energy_deficit * flux_area / zsum0
        for k in ranks.values():
            k.heating(pt=k.pt, pkz=k.pkz, dtmp_cp=dtmp / c.cp_air)
        return dtmp


@dataclass
class _RankFixer:
    area: np.ndarray
    cells: tuple[slice, slice]
    te: Any
    zsum0: Any
    start: Launch
    deficit: Launch
    heating: FrozenStencil
    pt: Any
    pkz: Any


def _float_ij(factory: GridStencilFactory) -> Any:
    import gt4py.storage as gt_storage

    d = factory.indexing.domain_of(CELL_DIMS)
    return gt_storage.zeros(d.shape[:2], np.float64, backend=factory.backend,
                            aligned_index=d.origin[:2])  # fmt: skip

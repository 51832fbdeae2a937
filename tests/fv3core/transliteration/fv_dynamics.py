"""FV3 ``fv_dynamics.F90`` for the hydrostatic, adiabatic, dry 3-D core, transliterated: one
large time step (``consv_te``: the column energies; ``pt`` to potential temperature, then
``k_split`` times ``dp1 = delp``, ``dyn_core``, ``tracer_2d`` (or ``tracer_2d_1L``) and
``Lagrangian_to_Eulerian``, the last with the energy fixer), composed of the transliterations of
its routines (:mod:`~tests.fv3core.transliteration.dyn_core_hydrostatic`,
:mod:`~tests.fv3core.transliteration.tracer_2d`, :mod:`~tests.fv3core.transliteration.mapz`,
:mod:`~tests.fv3core.transliteration.energy_fixer`), all ranks in this process."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from fv3core.constants import Constants
from fv3core.dycore.fv_dynamics import MIN_REMAP_LAYERS, DynamicsOptions
from mapping.cluster import Communicator
from tests.fv3core.transliteration import energy_fixer
from tests.fv3core.transliteration.dyn_core_hydrostatic import (
    HydrostaticCore,
    HydrostaticTileFields,
)
from tests.fv3core.transliteration.dyn_core_nonhydrostatic import NonHydrostaticCore
from tests.fv3core.transliteration.farray import FArray
from tests.fv3core.transliteration.grid import Grid
from tests.fv3core.transliteration.mapz import lagrangian_to_eulerian
from tests.fv3core.transliteration.tracer_2d import Tracer2D, Tracer2D1L


class HydrostaticDynamics:
    """FV3's ``fv_dynamics`` on every rank of ``communicator``: :meth:`step` is one ``dt_atmos``.
    ``fields[rank]``: the rank's state (``pt`` the temperature between steps; ``pkz`` the
    state's layer-mean ``p**kappa``), ``tracers[rank]``: the tracers (3-D arrays with FV3's
    bounds, in place), ``ps[rank]``: the surface pressure (2-D, in place); ``constants``: the
    run's (``consv_te != 0`` and non-hydrostatic only).  ``options.nonhydrostatic``: FV3's
    non-hydrostatic core (``fields`` then :class:`~tests.fv3core.transliteration
    .dyn_core_nonhydrostatic.NonHydrostaticTileFields`, with ``w`` and ``delz``)."""

    def __init__(self, grids: dict[int, Grid], fields: dict[int, HydrostaticTileFields],
                 tracers: Mapping[int, list[np.ndarray]], ps: Mapping[int, np.ndarray],
                 options: DynamicsOptions, dt_atmos: float, *, ak: np.ndarray,
                 bk: np.ndarray, akap: float, cp_air: float,
                 communicator: Communicator, constants: Constants | None = None) -> None:  # fmt: skip
        self.grids, self.fields, self.options = grids, fields, options
        self.dt_atmos, self.cp_air, self.constants = float(dt_atmos), cp_air, constants
        #: FV3's E_Flux of the last step's energy fix (W/m^2)
        self.energy_deficit = 0.0
        self.tracers, self.ps = tracers, ps
        self.ak, self.bk, self.akap = np.asarray(ak), np.asarray(bk), akap
        self.npz = len(self.ak) - 1
        nh = options.nonhydrostatic
        mdt = dt_atmos / options.k_split
        if nh is None:
            self.core = HydrostaticCore(grids, fields, options.dyn_core, mdt, akap=akap, cp_air=cp_air,
                                        ptop=float(self.ak[0]), communicator=communicator)  # fmt: skip
        else:
            c = self._constants()
            self.core = NonHydrostaticCore(grids, fields, options.dyn_core, nh, mdt, ak=self.ak, bk=self.bk,
                                           akap=akap, cp_air=cp_air, rdgas=c.rdgas, grav=c.grav,
                                           communicator=communicator)  # fmt: skip
        tracer_2d = Tracer2D1L if options.z_tracer else Tracer2D
        self.tracer_2d = tracer_2d(grids, communicator, options.hord_tr)
        self.dp1 = {r: np.zeros_like(f.delp.data) for r, f in fields.items()}

    def step(self) -> None:
        k_split = self.options.k_split
        consv = self.options.consv_te
        te0 = {r: self._energy(r) for r in self.grids} if consv > energy_fixer.CONSV_MIN else {}
        for r, g in self.grids.items():
            f, c = self.fields[r], _compute(g)
            if self.options.nonhydrostatic is not None:  # pkz of the gas law (dry: 1 + dp1 = 1)
                rdg = -self._constants().rdgas / self._constants().grav
                f.pkz.data[c] = np.exp(self.akap * np.log(rdg * f.delp.data[c] * f.pt.data[c] * (1.0 + 0.0)
                                                          / f.delz.data[c]))  # fmt: skip
            f.pt.data[c] = f.pt.data[c] / f.pkz.data[c]
        for n_map in range(1, k_split + 1):
            for r, f in self.fields.items():
                self.dp1[r][...] = f.delp.data
            self.core.step(init_step=n_map == 1)
            if any(len(q) for q in self.tracers.values()):
                self._tracers()
            if self.npz >= MIN_REMAP_LAYERS:
                for r in self.grids:
                    self._remap(r, last_step=n_map == k_split)
        if abs(consv) > energy_fixer.CONSV_MIN:
            self._fix_energy(te0)

    def _columns(self, r: int) -> dict[str, np.ndarray]:
        """Rank ``r``'s compute-domain arrays the energy fixer reads."""
        f, g = self.fields[r], self.grids[r]
        b = g.bd
        h, nx, ny = b.ng, b.ie - b.is_ + 1, b.je - b.js + 1
        cells = np.s_[h : h + nx, h : h + ny]
        out = {name: getattr(f, name).data[cells] for name in ("pt", "delp", "pe", "peln", "pk",
                                                               "pkz")}  # fmt: skip
        out["u"], out["v"] = f.u.data[h : h + nx, h : h + ny + 1], f.v.data[h : h + nx + 1, h : h + ny]
        out["hs"] = f.phis.data[cells]
        for name in ("rsin2", "cosa_s", "area"):
            out[name] = getattr(g, name).data[cells]
        return out

    def _energy(self, r: int) -> np.ndarray:
        a = self._columns(r)
        return energy_fixer.compute_total_energy(
            a["pt"], a["delp"], a["pe"], a["peln"], a["hs"], a["u"], a["v"], a["rsin2"],
            a["cosa_s"], rg=self._constants().rdgas, cp=self.cp_air)  # fmt: skip

    def _constants(self) -> Constants:
        if self.constants is None:
            raise ValueError("consv_te != 0 needs the run's constants")
        return self.constants

    def _fix_energy(self, te0: dict[int, np.ndarray]) -> None:
        c = self._constants()
        cols = {r: self._columns(r) for r in self.grids}
        te, zsum0 = {}, {}
        for r, a in cols.items():
            te[r], zsum0[r] = energy_fixer.energy_deficit(
                a["pt"], a["delp"], a["pe"], a["peln"], a["pk"], a["pkz"], a["hs"], a["u"],
                a["v"], a["rsin2"], a["cosa_s"], te0.get(r, np.zeros_like(a["hs"])),
                rg=c.rdgas, cp=self.cp_air, ptop=float(self.ak[0]))  # fmt: skip
        ranks = sorted(cols)
        dtmp, self.energy_deficit = energy_fixer.heating(
            self.options.consv_te, [te[r] for r in ranks], [zsum0[r] for r in ranks],
            [cols[r]["area"] for r in ranks], pdt=self.dt_atmos, constants=c)  # fmt: skip
        for r, g in self.grids.items():
            f, cells = self.fields[r], _compute(g)
            f.pt.data[cells] = energy_fixer.heat(f.pt.data[cells], f.pkz.data[cells], dtmp,
                                                 self.cp_air)  # fmt: skip

    def _tracers(self) -> None:
        def fa(a: np.ndarray, r: int) -> FArray:
            b = self.grids[r].bd
            return FArray(a, (b.isd, b.jsd))

        f = self.fields
        self.tracer_2d({r: [fa(q, r) for q in self.tracers[r]] for r in f},
                       {r: fa(self.dp1[r], r) for r in f}, {r: fa(f[r].mfx.data, r) for r in f},
                       {r: fa(f[r].mfy.data, r) for r in f}, {r: fa(f[r].cx.data, r) for r in f},
                       {r: fa(f[r].cy.data, r) for r in f})  # fmt: skip

    def _remap(self, r: int, last_step: bool) -> None:
        o, f, g = self.options, self.fields[r], self.grids[r]
        b = g.bd
        h, nx, ny = b.ng, b.ie - b.is_ + 1, b.je - b.js + 1
        cells = np.s_[h : h + nx, h : h + ny]
        ring = np.s_[h - 1 : h + nx + 1, h - 1 : h + ny + 1]
        u_pts, v_pts = np.s_[h : h + nx, h : h + ny + 1], np.s_[h : h + nx + 1, h : h + ny]
        qs = self.tracers[r]
        out = lagrangian_to_eulerian(
            f.pe.data[ring], f.delp.data[cells], f.pt.data[cells], f.u.data[u_pts],
            f.v.data[v_pts], [q[cells] for q in qs], f.pk.data[cells], f.peln.data[cells],
            self.ak, self.bk, akap=self.akap, kord_mt=o.kord_mt, kord_tm=o.kord_tm,
            kord_tr=[o.kord_tr] * len(qs), fill=o.fill, last_step=last_step, ptop=float(self.ak[0]),
            nonhydrostatic=self._remap_nonhydrostatic(f, cells))  # fmt: skip
        f.pe.data[ring] = out["pe"]
        if o.nonhydrostatic is not None:
            f.w.data[cells], f.delz.data[cells] = out["w"], out["delz"]
        for name, where in (("delp", cells), ("pt", cells), ("u", u_pts), ("v", v_pts),
                            ("pk", cells), ("peln", cells), ("pkz", cells)):  # fmt: skip
            getattr(f, name).data[where] = out[name]
        for q, new in zip(qs, out["q"]):
            q[cells] = new
        self.ps[r][cells] = out["ps"]


    def _remap_nonhydrostatic(self, f: HydrostaticTileFields, cells: tuple[slice, slice]) -> dict | None:
        nh = self.options.nonhydrostatic
        if nh is None:
            return None
        c = self._constants()
        return {"w": f.w.data[cells], "delz": f.delz.data[cells], "ws": f.ws.data[cells], "kord_wz": nh.kord_wz,
                "rrg": -c.rdgas / c.grav, "k1k": c.rdgas / (self.cp_air - c.rdgas)}  # fmt: skip


def _compute(g: Grid) -> tuple[slice, slice]:
    b = g.bd
    return np.s_[b.ng : b.ng + b.ie - b.is_ + 1, b.ng : b.ng + b.je - b.js + 1]

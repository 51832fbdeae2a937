"""FV3 ``dyn_core.F90`` for the non-hydrostatic 3-D core (``hydrostatic = .false.``, dry: no
``q_con``, ``d_con = 0``, ``d_ext = 0``, no vorticity damping, square rank domains),
transliterated: the ``n_split`` acoustic steps of one remapping step with FV3's halo updates,
in FV3's order: ``c_sw`` per layer with ``w``; ``update_dz_c``, ``Riem_Solver_c`` and
``p_grad_c`` on the full pressure; ``d_sw`` per layer with the ``w`` terms and the sponge
layers' damping of ``w``; ``update_dz_d``, ``Riem_Solver3``, ``pe_halo``/``pk3_halo`` and
``nh_p_grad`` (``beta > 0``: ``split_p_grad``).  Composed of the per-routine transliterations
(:mod:`~tests.fv3core.transliteration.sw_core`, :mod:`~tests.fv3core.transliteration.nh_utils`,
:mod:`~tests.fv3core.transliteration.dyn_core`), layer by layer and column by column as FV3.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import numpy as np

from fv3core.dycore.options import DynCoreOptions, NonHydrostaticOptions, layer_damping
from mapping.cluster import Communicator, ScalarHalo
from tests.fv3core.transliteration import nh_utils
from tests.fv3core.transliteration.dyn_core import halo_pressures, nh_p_grad, p_grad_c
from tests.fv3core.transliteration.dyn_core_hydrostatic import (
    Field3D,
    HydrostaticCore,
    HydrostaticTileFields,
)
from tests.fv3core.transliteration.farray import FArray, R
from tests.fv3core.transliteration.grid import Grid
from tests.fv3core.transliteration.sw_core import VerticalWind, c_sw, d_sw


@dataclass
class NonHydrostaticTileFields(HydrostaticTileFields):
    """The hydrostatic core's arrays plus FV3's non-hydrostatic ones: ``w``, ``delz`` (layers),
    ``omga`` (``c_sw``'s ``wc``), ``zh``, ``pk3`` (interfaces), ``d_sw``'s ``crx``, ``cry``,
    ``xfx``, ``yfx`` of every layer, and ``ws``, ``ws3`` (2-D)."""

    w: Field3D = None  # type: ignore[assignment]
    delz: Field3D = None  # type: ignore[assignment]
    omga: Field3D = None  # type: ignore[assignment]
    zh: Field3D = None  # type: ignore[assignment]
    pk3: Field3D = None  # type: ignore[assignment]
    crx: Field3D = None  # type: ignore[assignment]
    cry: Field3D = None  # type: ignore[assignment]
    xfx: Field3D = None  # type: ignore[assignment]
    yfx: Field3D = None  # type: ignore[assignment]
    ws: FArray = None  # type: ignore[assignment]
    ws3: FArray = None  # type: ignore[assignment]

    @classmethod
    def allocate(cls, g: Grid, npz: int) -> NonHydrostaticTileFields:
        base = HydrostaticTileFields.allocate(g, npz)
        b = g.bd

        def f(di: int = 0, dj: int = 0, nk: int = npz) -> Field3D:
            return Field3D.zeros(g, nk, di, dj)

        def flat() -> FArray:
            return FArray.full((b.isd, b.jsd), (b.ied, b.jed))

        shared = {fl.name: getattr(base, fl.name) for fl in fields(HydrostaticTileFields)}
        return cls(**shared, w=f(), delz=f(), omga=f(), zh=f(nk=npz + 1), pk3=f(nk=npz + 1),
                   crx=f(1, 0), cry=f(0, 1), xfx=f(1, 0), yfx=f(0, 1), ws=flat(), ws3=flat())  # fmt: skip


class NonHydrostaticCore(HydrostaticCore):
    """FV3's non-hydrostatic ``dyn_core`` on every rank of ``communicator`` (all in this
    process): :meth:`step` is one call.  ``ak``, ``bk``: the hybrid levels; ``rdgas``,
    ``grav``: the run's constants."""

    def __init__(self, grids: dict[int, Grid], fields: dict[int, NonHydrostaticTileFields],
                 options: DynCoreOptions, nonhydrostatic: NonHydrostaticOptions, mdt: float, *,
                 ak: np.ndarray, bk: np.ndarray, akap: float, cp_air: float, rdgas: float,
                 grav: float, communicator: Communicator) -> None:  # fmt: skip
        super().__init__(grids, fields, options, mdt, akap=akap, cp_air=cp_air, ptop=float(ak[0]),
                         communicator=communicator)  # fmt: skip
        self.nh, self.rdgas, self.grav = nonhydrostatic, rdgas, grav
        self.damping = layer_damping(options, self.npz, nonhydrostatic=True)
        self.dp_ref = (ak[1:] - ak[:-1]) + (bk[1:] - bk[:-1]) * 1.0e5
        ph = ak + bk * 1.0e5
        self.pfull = (ph[1:] - ph[:-1]) / np.log(ph[1:] / ph[:-1])
        self.zs = {r: f.phis.data * (1.0 / grav) for r, f in fields.items()}
        ranks = sorted(grids)
        h = grids[ranks[0]].bd.ng

        def updater(specs) -> object:
            return communicator.halo_updater({r: specs(fields[r]) for r in ranks}, packing="slicing")

        self._w = updater(lambda f: [ScalarHalo(f.w.data, h)])
        self._gz = updater(lambda f: [ScalarHalo(f.gz.data, h)])
        self._solve = updater(lambda f: [ScalarHalo(f.zh.data, h), ScalarHalo(f.pkc.data, h, depth=2)])

    def _rayleigh(self, dt: float) -> nh_utils.Damping | None:
        if self.nh.fast_tau_w_sec <= 0.0:
            return None
        rff, k_rf = nh_utils.rayleigh_w_factors(dt, self.nh.fast_tau_w_sec, self.nh.rf_cutoff, self.ptop,
                                                self.pfull)  # fmt: skip
        return nh_utils.Damping(rff, k_rf)

    def step(self, init_step: bool) -> None:
        self.begin(init_step)
        n = self.options.n_split
        for it in range(1, n + 1):
            self._w.update()
            if it == 1:
                for r, g in self.grids.items():
                    f, b = self.fields[r], g.bd
                    I, J = slice(b.is_ - b.isd, b.ie + 1 - b.isd), slice(b.js - b.jsd, b.je + 1 - b.jsd)
                    f.gz.data[I, J, self.npz] = self.zs[r][I, J]
                    for k in range(self.npz - 1, -1, -1):
                        f.gz.data[I, J, k] = f.gz.data[I, J, k + 1] - f.delz.data[I, J, k]
                self._gz.update()
            self.c_grid_nh(first=it == 1)
            self.d_grid_nh(last=it == n, first=it == 1)

    def c_grid_nh(self, first: bool) -> None:
        o, nh, dt2 = self.options, self.nh, 0.5 * self.dt
        cgrid = {}
        for r, g in self.grids.items():
            f = self.fields[r]
            cgrid[r] = []
            for k in range(self.npz):
                out = c_sw(f.delp.layers[k], f.pt.layers[k], f.u.layers[k], f.v.layers[k], o.nord,
                           dt2, g, f.uc.layers[k], f.vc.layers[k], f.ua.layers[k], f.va.layers[k],
                           f.ut.layers[k], f.vt.layers[k], sw_dynamics=False, w=f.w.layers[k])  # fmt: skip
                cgrid[r].append(out)
                if out.divg_d is not None:
                    f.divgd.layers[k].data[...] = out.divg_d.data
                b = g.bd
                I, J = R(b.is_ - 1, b.ie + 1), R(b.js - 1, b.je + 1)
                f.omga.layers[k][I, J] = out.wc[I, J]
        if o.nord > 0:
            self._divg.update()
        for r, g in self.grids.items():
            f, b = self.fields[r], g.bd
            if first:
                f.zh.data[...] = f.gz.data
            else:
                f.gz.data[...] = f.zh.data
            nh_utils.update_dz_c(b.is_, b.ie, b.js, b.je, self.npz, dt2, self.dp_ref, FArray(self.zs[r], f.phis.lo),
                                 g.area, f.ut.layers, f.vt.layers, f.gz.layers, f.ws3, g.npx, g.npy, g)  # fmt: skip
            cols = np.s_[b.is_ - 1 - b.isd : b.ie + 2 - b.isd, b.js - 1 - b.jsd : b.je + 2 - b.jsd]
            I, J = R(b.is_ - 1, b.ie + 1), R(b.js - 1, b.je + 1)
            ptc = np.stack([c.ptc[I, J] for c in cgrid[r]], axis=-1)
            delpc = np.stack([c.delpc[I, J] for c in cgrid[r]], axis=-1)
            nh_utils.riem_solver_c(dt2, self.akap, self.ptop, f.phis.data[cols], f.omga.data[cols], ptc, delpc,
                                   f.gz.data[cols], f.pkc.data[cols], f.ws3.data[cols], nh.p_fac, nh.a_imp,
                                   self.rdgas, self.grav, self._rayleigh(dt2))  # fmt: skip
            p_grad_c(dt2, f.pkc.layers, f.gz.layers, f.uc.layers, f.vc.layers, g,
                     delpc=[c.delpc for c in cgrid[r]])  # fmt: skip
        self._cwinds.update()

    def d_grid_nh(self, last: bool, first: bool) -> None:
        o, nh, dt = self.options, self.nh, self.dt
        for r, g in self.grids.items():
            f, b = self.fields[r], g.bd
            for group in self.damping:
                for k in range(group.start, group.stop):
                    vertical = VerticalWind(f.w.layers[k], nord_w=0, damp_w=group.damp_w)
                    out = d_sw(f.delp.layers[k], f.u.layers[k], f.v.layers[k], f.uc.layers[k],
                               f.vc.layers[k], f.ua.layers[k], f.va.layers[k], f.divgd.layers[k],
                               dt, o.hord_dp, o.hord_mt, o.hord_vt, group.nord, o.dddmp,
                               group.d2_bg, o.d4_bg, g, pt=f.pt.layers[k], hord_tm=o.hord_tm,
                               vertical=vertical)  # fmt: skip
                    self.accumulate(f, b, k, out)
                    Ic, Jd = R(b.is_, b.ie + 1), R(b.jsd, b.jed)
                    Id, Jc = R(b.isd, b.ied), R(b.js, b.je + 1)
                    f.crx.layers[k][Ic, Jd], f.xfx.layers[k][Ic, Jd] = out.crx[Ic, Jd], out.xfx[Ic, Jd]
                    f.cry.layers[k][Id, Jc], f.yfx.layers[k][Id, Jc] = out.cry[Id, Jc], out.yfx[Id, Jc]
        self._scalars.update()
        for r, g in self.grids.items():
            f, b = self.fields[r], g.bd
            nh_utils.update_dz_d([min(2, o.nord)] * self.npz, [0.0] * self.npz, o.hord_tm, self.npz, g, self.dp_ref,
                                 self.zs[r], f.zh.data, f.crx.data, f.cry.data, f.xfx.data, f.yfx.data, f.ws.data,
                                 1.0 / dt)  # fmt: skip
            cols = np.s_[b.is_ - b.isd : b.ie + 1 - b.isd, b.js - b.jsd : b.je + 1 - b.jsd]
            nh_utils.riem_solver3(dt, self.akap, self.ptop, self.zs[r][cols], f.w.data[cols], f.delz.data[cols],
                                  f.pt.data[cols], f.delp.data[cols], f.zh.data[cols], f.pe.data[cols],
                                  f.peln.data[cols], f.pkc.data[cols], f.pk3.data[cols], f.pk.data[cols],
                                  f.ws.data[cols], nh.p_fac, nh.a_imp, nh.use_logp, last, False, nh.d2bg_zq,
                                  self.rdgas, self.grav, self._rayleigh(dt))  # fmt: skip
        self._solve.update()
        for r, g in self.grids.items():
            f, b = self.fields[r], g.bd
            if last:
                halo_pressures("pe_halo", b, self.npz, self.ptop, self.akap, f.pe.data, f.delp.data)
            halo_pressures("pln_halo" if nh.use_logp else "pk3_halo", b, self.npz, self.ptop, self.akap,
                           f.pk3.data, f.delp.data)  # fmt: skip
            ring = np.s_[b.is_ - 2 - b.isd : b.ie + 3 - b.isd, b.js - 2 - b.jsd : b.je + 3 - b.jsd]
            f.gz.data[ring] = f.zh.data[ring] * self.grav
            top = math.log(self.ptop) if nh.use_logp else self.ptop**self.akap
            split = (f.du.layers, f.dv.layers, 0.0 if first else o.beta) if o.beta > 0.0 else None
            nh_p_grad(f.u.layers, f.v.layers, f.pkc.layers, f.gz.layers, f.delp.layers, f.pk3.layers, dt, g, top,
                      split=split)  # fmt: skip
        (self._boundary if last else self._dwinds).update()

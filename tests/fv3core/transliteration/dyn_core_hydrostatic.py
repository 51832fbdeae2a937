"""FV3 ``dyn_core.F90`` for the hydrostatic 3-D core (FV3 built without ``SW_DYNAMICS``,
``hydrostatic = .true.``, dry: no ``q_con``, ``d_con = 0``, ``d_ext = 0``, no vorticity damping),
transliterated: the ``n_split`` acoustic steps of one remapping step with FV3's halo updates,
layer by layer as FV3's k-loops (``c_sw``, ``geopk``, ``p_grad_c``, ``d_sw`` with the sponge
layers' damping, ``one_grad_p``), the flux capacitor ``mfx``, ``mfy``, ``cx``, ``cy`` and FV3's
``pe``, ``peln``, ``pkz`` and (the last acoustic step) ``pk``.

Fields are 3-D NumPy arrays in FV3's bounds with one :class:`FArray` view per layer (top down),
so that the per-layer routines of :mod:`tests.fv3core.transliteration.sw_core` write through to the
arrays the halo updates of :class:`mapping.cluster.Communicator` exchange.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fv3core.dycore.options import DynCoreOptions, layer_damping
from mapping.cluster import Communicator, ScalarHalo, VectorHalo
from tests.fv3core.transliteration.dyn_core import (
    geopk_hydrostatic,
    grad1_p_update,
    one_grad_p,
    p_grad_c,
)
from tests.fv3core.transliteration.farray import FArray, R
from tests.fv3core.transliteration.grid import Grid
from tests.fv3core.transliteration.sw_core import c_sw, d_sw


@dataclass
class Field3D:
    """A 3-D array with FV3's horizontal bounds ``lo`` and its layers (or interfaces) as
    :class:`FArray` views, top down."""

    data: np.ndarray
    lo: tuple[int, int]
    layers: list[FArray] = field(init=False)

    def __post_init__(self) -> None:
        self.layers = [FArray(self.data[:, :, k], self.lo) for k in range(self.data.shape[2])]

    @classmethod
    def zeros(cls, g: Grid, nk: int, di: int = 0, dj: int = 0) -> Field3D:
        b = g.bd
        shape = (b.ied - b.isd + 1 + di, b.jed - b.jsd + 1 + dj, nk)
        return cls(np.zeros(shape), (b.isd, b.jsd))


@dataclass
class HydrostaticTileFields:
    """One rank's 3-D state (``npz`` layers, ``npz + 1`` interfaces) and FV3's persistent work
    arrays; ``pt`` is FV3's (virtual) potential temperature inside ``dyn_core``."""

    delp: Field3D
    pt: Field3D
    u: Field3D
    v: Field3D
    uc: Field3D
    vc: Field3D
    ua: Field3D
    va: Field3D
    ut: Field3D
    vt: Field3D
    divgd: Field3D
    pkc: Field3D
    gz: Field3D
    pe: Field3D
    peln: Field3D
    pk: Field3D
    pkz: Field3D
    mfx: Field3D
    mfy: Field3D
    cx: Field3D
    cy: Field3D
    du: Field3D
    dv: Field3D
    phis: FArray

    @classmethod
    def allocate(cls, g: Grid, npz: int) -> HydrostaticTileFields:
        def f(di: int = 0, dj: int = 0, nk: int = npz) -> Field3D:
            return Field3D.zeros(g, nk, di, dj)

        b = g.bd
        phis = FArray.full((b.isd, b.jsd), (b.ied, b.jed))
        return cls(delp=f(), pt=f(), u=f(0, 1), v=f(1, 0), uc=f(1, 0), vc=f(0, 1), ua=f(), va=f(),
                   ut=f(), vt=f(), divgd=f(1, 1), pkc=f(nk=npz + 1), gz=f(nk=npz + 1),
                   pe=f(nk=npz + 1), peln=f(nk=npz + 1), pk=f(nk=npz + 1), pkz=f(), mfx=f(1, 0),
                   mfy=f(0, 1), cx=f(1, 0), cy=f(0, 1), du=f(0, 1), dv=f(1, 0), phis=phis)  # fmt: skip


class HydrostaticCore:
    """FV3's hydrostatic ``dyn_core`` on every rank of ``communicator`` (all in this process):
    :meth:`step` is one call of ``dyn_core``, ``n_split`` acoustic steps of ``mdt / n_split``
    (``mdt``: FV3's remapping time step, ``dt_atmos / k_split``).  ``akap``, ``cp_air``,
    ``ptop``: FV3's kappa, heat capacity (J/kg/K) and model-top pressure (Pa)."""

    def __init__(self, grids: dict[int, Grid], fields: dict[int, HydrostaticTileFields],
                 options: DynCoreOptions, mdt: float, *, akap: float, cp_air: float, ptop: float,
                 communicator: Communicator) -> None:  # fmt: skip
        self.grids, self.fields, self.options = grids, fields, options
        self.dt = mdt / options.n_split
        self.akap, self.cp_air, self.ptop = akap, cp_air, ptop
        self.npz = next(iter(fields.values())).delp.data.shape[2]
        self.damping = layer_damping(options, self.npz)
        ranks = sorted(grids)
        h = grids[ranks[0]].bd.ng

        def updater(specs) -> object:
            return communicator.halo_updater({r: specs(fields[r]) for r in ranks}, packing="slicing")

        self._scalars = updater(lambda f: [ScalarHalo(f.delp.data, h), ScalarHalo(f.pt.data, h)])
        self._dwinds = updater(lambda f: [VectorHalo(f.u.data, f.v.data, h, grid="D", sync_edges=False)])
        self._cwinds = updater(lambda f: [VectorHalo(f.uc.data, f.vc.data, h, grid="C", sync_edges=False)])
        self._divg = updater(lambda f: [ScalarHalo(f.divgd.data, h, location="corner", sync_edges=False)])
        self._boundary = updater(lambda f: [VectorHalo(f.u.data, f.v.data, h, grid="D", sync_edges=True)])

    def step(self, init_step: bool) -> None:
        """One ``dyn_core`` call (``init_step``: FV3's first remapping step of ``fv_dynamics``,
        which zeroes ``beta``'s increments ``du``, ``dv``): the flux capacitor emptied, the
        halo updates of ``delp``, ``pt`` and the D-grid winds that ``fv_dynamics`` starts, then
        the acoustic steps."""
        self.begin(init_step)
        n = self.options.n_split
        for it in range(1, n + 1):
            self.c_grid()
            self.d_grid(last=it == n, first=it == 1)

    def begin(self, init_step: bool) -> None:
        """The flux capacitor (and, ``init_step``, ``du``, ``dv``) emptied; the halo updates of
        ``delp``, ``pt`` and the D-grid winds."""
        for f in self.fields.values():
            for a in (f.mfx, f.mfy, f.cx, f.cy) + ((f.du, f.dv) if init_step else ()):
                a.data[...] = 0.0
        self._scalars.update()
        self._dwinds.update()

    @staticmethod
    def accumulate(f: HydrostaticTileFields, b: object, k: int, out: object) -> None:
        """FV3's flux capacitor: layer ``k``'s Courant numbers (cx on is:ie+1, jsd:jed; cy on
        isd:ied, js:je+1) and mass fluxes (the compute faces) of one ``d_sw`` call added."""
        Ic, Jd = R(b.is_, b.ie + 1), R(b.jsd, b.jed)
        Id, Jc = R(b.isd, b.ied), R(b.js, b.je + 1)
        Jn, In = R(b.js, b.je), R(b.is_, b.ie)
        f.cx.layers[k][Ic, Jd] = f.cx.layers[k][Ic, Jd] + out.crx[Ic, Jd]
        f.mfx.layers[k][Ic, Jn] = f.mfx.layers[k][Ic, Jn] + out.fx[Ic, Jn]
        f.cy.layers[k][Id, Jc] = f.cy.layers[k][Id, Jc] + out.cry[Id, Jc]
        f.mfy.layers[k][In, Jc] = f.mfy.layers[k][In, Jc] + out.fy[In, Jc]

    def c_grid(self) -> None:
        """``c_sw`` per layer, the ``divg_d`` corner update (nord > 0), ``geopk`` and
        ``p_grad_c`` on the C grid, and the C-grid wind update."""
        o, dt2 = self.options, 0.5 * self.dt
        cgrid = {}
        for r, g in self.grids.items():
            f = self.fields[r]
            cgrid[r] = []
            for k in range(self.npz):
                out = c_sw(f.delp.layers[k], f.pt.layers[k], f.u.layers[k], f.v.layers[k], o.nord,
                           dt2, g, f.uc.layers[k], f.vc.layers[k], f.ua.layers[k], f.va.layers[k],
                           f.ut.layers[k], f.vt.layers[k], sw_dynamics=False)  # fmt: skip
                cgrid[r].append(out)
                if out.divg_d is not None:
                    f.divgd.layers[k].data[...] = out.divg_d.data
        if o.nord > 0:
            self._divg.update()
        for r, g in self.grids.items():
            f, b = self.fields[r], g.bd
            I, J = R(b.is_ - 1, b.ie + 1), R(b.js - 1, b.je + 1)
            geopk_hydrostatic([c.delpc for c in cgrid[r]], f.phis, [c.ptc for c in cgrid[r]],
                              f.pkc.layers, f.gz.layers, I, J, ptop=self.ptop, akap=self.akap,
                              cp=self.cp_air)  # fmt: skip
            p_grad_c(dt2, f.pkc.layers, f.gz.layers, f.uc.layers, f.vc.layers, g)
        self._cwinds.update()

    def d_grid(self, last: bool, first: bool) -> None:
        """``d_sw`` per layer (the sponge layers' damping), the flux capacitor, the halo update
        of ``delp`` and ``pt``, ``geopk`` on the D grid (with ``pe``, ``peln``, ``pkz``; the
        last acoustic step: ``pk`` := ``pkc``), ``one_grad_p`` (``beta > 0``:
        ``grad1_p_update``) and the D-grid wind update (``last``: FV3's ``mpp_get_boundary``)."""
        o, dt = self.options, self.dt
        for r, g in self.grids.items():
            f, b = self.fields[r], g.bd
            for group in self.damping:
                for k in range(group.start, group.stop):
                    out = d_sw(f.delp.layers[k], f.u.layers[k], f.v.layers[k], f.uc.layers[k],
                               f.vc.layers[k], f.ua.layers[k], f.va.layers[k], f.divgd.layers[k],
                               dt, o.hord_dp, o.hord_mt, o.hord_vt, group.nord, o.dddmp,
                               group.d2_bg, o.d4_bg, g, pt=f.pt.layers[k], hord_tm=o.hord_tm)  # fmt: skip
                    self.accumulate(f, b, k, out)
        self._scalars.update()
        ptk = self.ptop**self.akap
        for r, g in self.grids.items():
            f, b = self.fields[r], g.bd
            I, J = R(b.is_ - 2, b.ie + 2), R(b.js - 2, b.je + 2)
            geopk_hydrostatic(f.delp.layers, f.phis, f.pt.layers, f.pkc.layers, f.gz.layers, I, J,
                              ptop=self.ptop, akap=self.akap, cp=self.cp_air,
                              pressure=(f.pe.layers, f.peln.layers, f.pkz.layers), bd=b)  # fmt: skip
            if last:  # FV3's remap_step: pk(is:ie, js:je, :) = pkc
                Ic, Jc = R(b.is_, b.ie), R(b.js, b.je)
                for pk, pkc in zip(f.pk.layers, f.pkc.layers):
                    pk[Ic, Jc] = pkc[Ic, Jc]
            if o.beta > 0.0:
                grad1_p_update(f.u.layers, f.v.layers, f.pkc.layers, f.gz.layers, f.du.layers,
                               f.dv.layers, dt, 0.0 if first else o.beta, g, ptk=ptk)  # fmt: skip
            else:
                one_grad_p(f.u.layers, f.v.layers, f.pkc.layers, f.gz.layers, dt, g, ptk=ptk)
        (self._boundary if last else self._dwinds).update()

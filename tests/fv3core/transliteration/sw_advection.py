"""FV3's shallow-water core for ``test_case = 1`` (Williamson TC1, ``SW_DYNAMICS``): advection of
``delp`` by the prescribed C-grid winds, transliterated.

``sw_core.F90 d_sw``'s ``if (test_case == 1)`` branch makes the Courant numbers and swept areas
from ``uc``, ``vc`` directly (``uc``, ``vc`` are the face-normal winds of ``init_winds``
``defOnGrid = 1``), ``fv_tp_2d`` transports ``delp`` and ``delp`` takes the flux divergence;
everything after (kinetic energy, vorticity, damping, the wind update) sits in ``d_sw``'s
``if (test_case > 1)`` block.  ``dyn_core.F90``'s ``if (test_case > 1)`` blocks skip ``c_sw``, the
divergence and C-grid halo updates, ``geopk``/``p_grad_c``, ``one_grad_p``, ``mpp_get_boundary``
and the D-grid wind update; what runs per acoustic step is ``d_sw`` and the scalar halo update of
``delp``, so ``u``, ``v``, ``uc``, ``vc`` keep their initial values (``geopk`` on the D grid still
runs in FV3; its ``pkc``/``gz`` are read only by the skipped ``one_grad_p``, so it is left out).
The large step's ``delp`` and ``u``, ``v`` updates that ``fv_dynamics`` starts are completed
only inside ``dyn_core``'s ``test_case > 1`` block at ``it == 1``: for ``test_case = 1`` the halos
of ``delp`` are those of the previous acoustic step's update.  ``fv_tp_2d`` is called as for
``test_case > 1``, with the vorticity damping's ``nord_v``, ``damp_v`` (``deln_flux`` of ``delp``
when ``do_vort_damp`` and ``vtdm4 > 1e-4``).
"""

from __future__ import annotations

import numpy as np

from tests.fv3core.transliteration.deln_flux import (
    DELN_FLUX_THRESHOLD,
    damping_coefficient,
    deln_flux,
)
from tests.fv3core.transliteration.dyn_core import ShallowWaterCore
from tests.fv3core.transliteration.farray import FArray, R
from tests.fv3core.transliteration.grid import Grid
from tests.fv3core.transliteration.sw_core import DGridOutputs
from tests.fv3core.transliteration.tp_core import fv_tp_2d


def d_sw_advection(delp: FArray, uc: FArray, vc: FArray, dt: float, hord_dp: int, g: Grid, *,
                   nord_v: int = 0, damp_v: float = 0.0) -> DGridOutputs:  # fmt: skip
    """FV3 ``d_sw`` with ``test_case == 1``: ``delp`` updated in place by ``fv_tp_2d`` with the
    Courant numbers ``dt uc / sina_u * rdxa`` (upwind cell) and swept areas ``dy (dt uc / sina_u)
    sina_u`` (y: ``vc``, ``sina_v``, ``rdya``, ``dx``), and ``fv_tp_2d``'s ``deln_flux`` of order
    ``nord_v`` when ``damp_v > 1e-4`` (``dyn_core``'s vorticity damping); ``delp``'s cube-corner
    halo cells are overwritten by ``copy_corners``, as in FV3."""
    b = g.bd
    is_, ie, js, je, isd, ied, jsd, jed = b.is_, b.ie, b.js, b.je, b.isd, b.ied, b.jsd, b.jed
    Ii, Jd = R(is_, ie + 1), R(jsd, jed)
    xfx = FArray.full((is_, jsd), (ie + 1, jed))
    crx = FArray.full((is_, jsd), (ie + 1, jed))
    xfx[Ii, Jd] = dt * uc[Ii, Jd] / g.sina_u[Ii, Jd]
    crx[Ii, Jd] = np.where(xfx[Ii, Jd] > 0.0, xfx[Ii, Jd] * g.rdxa[Ii - 1, Jd],
                           xfx[Ii, Jd] * g.rdxa[Ii, Jd])  # fmt: skip
    xfx[Ii, Jd] = g.dy[Ii, Jd] * xfx[Ii, Jd] * g.sina_u[Ii, Jd]
    Id, Jj = R(isd, ied), R(js, je + 1)
    yfx = FArray.full((isd, js), (ied, je + 1))
    cry = FArray.full((isd, js), (ied, je + 1))
    yfx[Id, Jj] = dt * vc[Id, Jj] / g.sina_v[Id, Jj]
    cry[Id, Jj] = np.where(yfx[Id, Jj] > 0.0, yfx[Id, Jj] * g.rdya[Id, Jj - 1],
                           yfx[Id, Jj] * g.rdya[Id, Jj])  # fmt: skip
    yfx[Id, Jj] = g.dx[Id, Jj] * yfx[Id, Jj] * g.sina_v[Id, Jj]
    In, Jn = R(is_, ie), R(js, je)
    ra_x = FArray.full((is_, jsd), (ie, jed))
    ra_x[In, Jd] = g.area[In, Jd] + xfx[In, Jd] - xfx[In + 1, Jd]
    ra_y = FArray.full((isd, js), (ied, je))
    ra_y[Id, Jn] = g.area[Id, Jn] + yfx[Id, Jn] - yfx[Id, Jn + 1]
    fx, fy = fv_tp_2d(delp, crx, cry, hord_dp, xfx, yfx, ra_x, ra_y, g)
    if damp_v > DELN_FLUX_THRESHOLD:  # the end of fv_tp_2d(..., nord=nord_v, damp_c=damp_v)
        damp = damping_coefficient(damp_v, g.da_min, nord_v)
        deln_flux(nord_v, is_, ie, js, je, g.npx, g.npy, damp, delp, fx, fy, g)
    delp[In, Jn] = (
        delp[In, Jn] + (fx[In, Jn] - fx[In + 1, Jn] + fy[In, Jn] - fy[In, Jn + 1]) * g.rarea[In, Jn]
    )
    return DGridOutputs(crx, cry, xfx, yfx, fx, fy)


class AdvectionCore(ShallowWaterCore):
    """FV3's ``dyn_core`` for ``test_case = 1`` on every rank of the communicator (all in this
    process): ``step()`` is one large time step of ``n_split`` acoustic steps, each
    :func:`d_sw_advection` on every rank and the scalar halo update of ``delp``."""

    def step(self) -> None:
        """One large time step: ``n_split`` acoustic steps."""
        for _ in range(self.nml.n_split):
            self.advect()

    def advect(self) -> None:
        """One acoustic step: ``d_sw``'s advection of ``delp``, then its halo update."""
        nml = self.nml
        dt = nml.dt_atmos / nml.n_split
        for r, g in self.grids.items():
            f = self.fields[r]
            d_sw_advection(f.delp, f.uc, f.vc, dt, nml.hord_dp, g, nord_v=nml.nord_v,
                           damp_v=nml.damp_v)  # fmt: skip
        self._scalars.update()

"""FV3 ``d_sw``'s terms of the non-hydrostatic vertical velocity (``sw_core.F90``, ``.not.
hydrostatic``) in GTScript: :class:`DGridVerticalWind`.

In the D-grid step, after the ``delp`` fluxes: ``w`` damped by ``del6_vt_flux`` (order
``nord_w``, coefficient ``(damp_w da_min_c) ** (nord_w + 1)``, where ``damp_w > 1e-5``) with the
heating its kinetic energy loss gives (``heat_source = kgb |dt| - dw (w + dw / 2)``; FV3's
``prevent_diss_cooling`` keeps only the warming part; ``do_diss_est`` also writes ``diss_est``),
``w delp`` transported with ``hord_vt`` and the ``delp`` fluxes; after the ``delp`` update,
``w`` divided by the new ``delp`` plus the damping increment ``dw``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import __INLINED, PARALLEL, computation, interval

from fv3core.grid.subdomain import SubdomainSpec
from fv3core.stencils.deln_flux import DelnFlux, damping_coefficient
from fv3core.stencils.fv_tp_2d import FiniteVolumeTransport
from stencils.dims import CELL_DIMS, face_dims
from stencils.directions import X, Y
from stencils.factory import GridStencilFactory
from stencils.launch import Launch
from stencils.storage import zeros

FloatField = gtscript.Field[np.float64]
FloatFieldIJ = gtscript.Field[gtscript.IJ, np.float64]

#: FV3's threshold of the damping of w
DAMP_W_MIN = 1.0e-5


def damping_heat(w: FloatField, fx2: FloatField, fy2: FloatField, rarea: FloatFieldIJ, dw: FloatField,
                 heat_source: FloatField, diss_est: FloatField, dd8: float):  # fmt: skip
    """``dw``, the damping's increment of ``w``, and the heating of its kinetic energy loss."""
    from __externals__ import DISS_EST, PREVENT_DISS_COOLING

    with computation(PARALLEL), interval(...):
        dw = (fx2 - fx2[1, 0, 0] + fy2 - fy2[0, 1, 0]) * rarea
        tmp = dw * (w + 0.5 * dw)
        if __INLINED(PREVENT_DISS_COOLING):
            heat_source = dd8 - (tmp if tmp < 0.0 else 0.0)
            if __INLINED(DISS_EST):
                diss_est = dd8 - tmp
        else:
            heat_source = dd8 - dw * (w + 0.5 * dw)
            if __INLINED(DISS_EST):
                diss_est = heat_source


def no_heat(heat_source: FloatField, diss_est: FloatField):
    with computation(PARALLEL), interval(...):
        heat_source = 0.0
        diss_est = 0.0


def mass_weighted_w(w: FloatField, delp: FloatField, gx: FloatField, gy: FloatField, rarea: FloatFieldIJ):
    """``w delp`` plus the divergence of its fluxes (``delp`` before its update)."""
    with computation(PARALLEL), interval(...):
        w = delp * w + (gx - gx[1, 0, 0] + gy - gy[0, 1, 0]) * rarea


def w_from_mass(w: FloatField, delp: FloatField, dw: FloatField):
    """``w`` from ``w delp`` with the new ``delp``, plus the damping's ``dw`` (``DAMPED``)."""
    from __externals__ import DAMPED

    with computation(PARALLEL), interval(...):
        w = w / delp
        if __INLINED(DAMPED):
            w = w + dw


class DGridVerticalWind:
    """Equivalent of FV3 ``d_sw``'s ``.not. hydrostatic`` terms for one rank (see the module):
    ``dt`` the acoustic step, ``hord_vt``, ``nord_w``, ``damp_w``, ``kgb`` (``ke_bg``) FV3's."""

    def __init__(self, factory: GridStencilFactory, grid: Any, spec: SubdomainSpec, dt: float, hord_vt: int, *,
                 nord_w: int = 0, damp_w: float = 0.0, kgb: float = 0.0, prevent_diss_cooling: bool = False,
                 do_diss_est: bool = False) -> None:  # fmt: skip
        self.grid, self.dd8 = grid, float(kgb) * abs(float(dt))
        indexing, backend = factory.indexing, factory.backend
        self._transport = FiniteVolumeTransport(factory, grid, spec, hord_vt)
        self.gx, self.gy = (zeros(indexing.domain_of(face_dims(d)), backend) for d in (X, Y))
        self.damping = (DelnFlux(factory, grid, spec, nord_w, damping_coefficient(damp_w, grid.da_min_c, nord_w),
                                 add=False) if damp_w > DAMP_W_MIN else None)  # fmt: skip
        damped = self.damping is not None
        if damped:
            self.fx2, self.fy2 = (zeros(indexing.domain_of(face_dims(d)), backend) for d in (X, Y))
            self.dw = zeros(indexing.domain_of(CELL_DIMS), backend)
            self._heat = factory.from_dims(damping_heat, CELL_DIMS, name="fv3_d_sw_w_heat", externals={
                "PREVENT_DISS_COOLING": prevent_diss_cooling, "DISS_EST": do_diss_est})  # fmt: skip
        else:
            self._heat = factory.from_dims(no_heat, CELL_DIMS, name="fv3_d_sw_no_heat")
        self._mass = factory.from_dims(mass_weighted_w, CELL_DIMS, name="fv3_d_sw_w_delp")
        self._finish = factory.from_dims(w_from_mass, CELL_DIMS, externals={"DAMPED": damped},
                                         name="fv3_d_sw_w")  # fmt: skip

    def bind_transport(self, w: Any, delp: Any, fluxes: tuple[Any, Any, Any, Any], mass_fluxes: tuple[Any, Any],
                       heat_source: Any, diss_est: Any) -> list[Launch]:  # fmt: skip
        """Before ``delp``'s update: the damping and its heating (``heat_source``, ``diss_est``
        zero where undamped), then ``w delp`` transported (``fluxes``: ``crx``, ``cry``, ``xfx``,
        ``yfx``; ``mass_fluxes``: the ``delp`` fluxes)."""
        g = self.grid
        launches: list[Launch] = []
        if self.damping is not None:
            launches += self.damping.bind(w, self.fx2, self.fy2)
            launches.append(self._heat.bind(w=w, fx2=self.fx2, fy2=self.fy2, rarea=g.rarea, dw=self.dw,
                                            heat_source=heat_source, diss_est=diss_est, dd8=self.dd8))  # fmt: skip
        else:
            launches.append(self._heat.bind(heat_source=heat_source, diss_est=diss_est))
        launches += self._transport.bind(w, *fluxes, self.gx, self.gy, mass_fluxes=mass_fluxes).steps
        launches.append(self._mass.bind(w=w, delp=delp, gx=self.gx, gy=self.gy, rarea=g.rarea))
        return launches

    def bind_finish(self, w: Any, delp: Any) -> list[Launch]:
        """After ``delp``'s update: ``w`` itself again."""
        dw = self.dw if self.damping is not None else w  # unread without the damping
        return [self._finish.bind(w=w, delp=delp, dw=dw)]

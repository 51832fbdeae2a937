"""FV3's ``d_sw`` for ``test_case = 1`` (Williamson TC1, ``SW_DYNAMICS``) in GTScript: the advection
of ``delp`` by the prescribed C-grid winds, with FV3's order of floating-point operations.

``sw_core.F90``'s ``if (test_case == 1)`` branch of ``d_sw``: the Courant numbers and swept areas
come from the face-normal winds ``uc``, ``vc`` directly (:func:`normal_wind_courant`), ``fv_tp_2d``
transports ``delp`` (:class:`~fv3core.stencils.fv_tp_2d.FiniteVolumeTransport`) and ``delp``
takes the flux divergence, ``fv_tp_2d`` with the vorticity damping's ``deln_flux`` of ``delp``
(:class:`~fv3core.stencils.deln_flux.DelnFlux`) as for ``test_case > 1``; the rest of
``d_sw`` is its ``test_case > 1`` block.  The transliterated
reference is :func:`tests.fv3core.transliteration.sw_advection.d_sw_advection`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import PARALLEL, computation, interval

from fv3core.errors import FV3ConfigError
from fv3core.grid.subdomain import SubdomainSpec
from fv3core.stencils.deln_flux import DELN_FLUX_THRESHOLD, DelnFlux, damping_coefficient
from fv3core.stencils.flux_divergence import apply_flux_divergence
from fv3core.stencils.fv_tp_2d import FiniteVolumeTransport
from stencils.dims import CELL_DIMS, face_dims
from stencils.directions import DIRECTIONS, X, Y
from stencils.factory import GridStencilFactory
from stencils.launch import Launch
from stencils.storage import zeros

FloatField = gtscript.Field[np.float64]
FloatFieldIJ = gtscript.Field[gtscript.IJ, np.float64]


def normal_wind_courant(
    wind: FloatField,
    sina: FloatFieldIJ,
    rdxa: FloatFieldIJ,
    face_length: FloatFieldIJ,
    cr: FloatField,
    af: FloatField,
    dt: float,
):
    """``d_sw``'s ``test_case == 1`` Courant number ``cr`` and swept area ``af`` of the faces
    crossed along ``DI``/``DJ`` from the face-normal wind (``uc``/``vc``): ``af = dt wind / sina``,
    ``cr = af * rdxa`` of the upwind cell, then ``af = face_length * af * sina`` (FV3's
    ``xfx_adv``/``crx_adv`` with ``sina_u``, ``rdxa``, ``dy``; y: ``sina_v``, ``rdya``, ``dx``)."""
    from __externals__ import DI, DJ

    with computation(PARALLEL), interval(...):
        af = dt * wind / sina
        if af > 0.0:
            cr = af * rdxa[-DI, -DJ]
        else:
            cr = af * rdxa
        af = face_length * af * sina


class DelpAdvection:
    """Equivalent of FV3 subroutine ``d_sw`` with ``test_case == 1`` (``SW_DYNAMICS``) for one
    rank: ``delp`` advected by the prescribed C-grid winds.

    Namelist keys (``fv_core_nml``): ``hord_dp`` (the PPM variant of ``fv_tp_2d``'s ``delp``
    fluxes, FV3's ``hord_dp``); ``nord_v``, ``damp_v``: ``dyn_core``'s vorticity damping
    (``min(2, nord)`` and ``vtdm4`` when ``do_vort_damp``, else 0), the ``deln_flux`` of ``delp``
    when ``damp_v > 1e-4`` (below: not a launch more).  ``grid``: the rank's
    :class:`fv3core.grid.storages.GridStorages`; ``dt``: the acoustic time step (FV3's
    ``dt`` of ``d_sw``, ``bdt / n_split``).  The outputs :attr:`crx`, :attr:`cry` (Courant
    numbers), :attr:`xfx`, :attr:`yfx` (swept areas, m^2; FV3's ``crx_adv`` ... on
    ``is:ie+1, jsd:jed`` and ``isd:ied, js:je+1``) and :attr:`fx`, :attr:`fy` (the ``delp``
    fluxes) are allocated here."""

    def __init__(self, factory: GridStencilFactory, grid: Any, spec: SubdomainSpec, dt: float,
                 hord_dp: int, *, nord_v: int = 0, damp_v: float = 0.0) -> None:  # fmt: skip
        if not dt > 0.0:
            raise FV3ConfigError(f"d_sw dt={dt}: the acoustic time step must be positive")
        self._grid, self.dt = grid, float(dt)
        indexing = factory.indexing

        def alloc(d: Any) -> Any:
            return zeros(indexing.domain_of(face_dims(d)), factory.backend)

        self.crx, self.cry = alloc(X), alloc(Y)
        self.xfx, self.yfx = alloc(X), alloc(Y)
        self.fx, self.fy = alloc(X), alloc(Y)
        self._courant = {
            d: factory.from_dims(normal_wind_courant, face_dims(d), d.halo_across(3),
                                 externals=d.offsets(), name=f"fv3_tc1_courant_{d.name}")
            for d in DIRECTIONS
        }  # fmt: skip
        self._transport = FiniteVolumeTransport(factory, grid, spec, hord_dp)
        #: fv_tp_2d's deln_flux of delp (FV3's nord=nord_v, damp_c=damp_v), None when off
        self.delp_damping = (
            DelnFlux(factory, grid, spec, nord_v,
                        damping_coefficient(damp_v, grid.da_min, nord_v), add=True)
            if damp_v > DELN_FLUX_THRESHOLD else None)  # fmt: skip
        self._delp_update = factory.from_dims(apply_flux_divergence, CELL_DIMS,
                                              name="fv3_d_sw_delp")  # fmt: skip

    def bind(self, delp: Any, uc: Any, vc: Any) -> list[Launch]:
        """The launches of one ``d_sw`` of these storages, in order (fields are held, not copied).

        In/out: ``delp`` (cells, (nx+6, ny+6, nz); updated on the compute cells, its cube-corner
        halo cells overwritten by ``copy_corners``).  In: ``uc`` (x-faces), ``vc`` (y-faces), the
        face-normal C-grid winds (m/s) with valid halos along the faces (``j = jsd:jed`` of
        ``uc``, ``i = isd:ied`` of ``vc``)."""
        g = self._grid
        wind = {X: uc, Y: vc}
        sina = {X: g.sina_u, Y: g.sina_v}
        rcell = {X: g.rdxa, Y: g.rdya}
        face_length = {X: g.dy, Y: g.dx}
        courant = {X: self.crx, Y: self.cry}
        area_flux = {X: self.xfx, Y: self.yfx}
        launches: list[Launch] = [
            self._courant[d].bind(wind=wind[d], sina=sina[d], rdxa=rcell[d],
                                  face_length=face_length[d], cr=courant[d], af=area_flux[d],
                                  dt=self.dt)
            for d in DIRECTIONS
        ]  # fmt: skip
        fluxes = (self.crx, self.cry, self.xfx, self.yfx)
        launches += self._transport.bind(delp, *fluxes, self.fx, self.fy).steps
        if self.delp_damping is not None:
            launches += self.delp_damping.bind(delp, self.fx, self.fy)
        launches.append(self._delp_update.bind(q=delp, fx=self.fx, fy=self.fy, rarea=g.rarea))
        return launches

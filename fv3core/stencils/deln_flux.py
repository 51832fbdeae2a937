"""FV3's del-n diffusive fluxes of a cell-mean scalar in GTScript: :class:`DelnFlux`, the
equivalent of ``deln_flux`` (``tp_core.F90``, the form ``fv_tp_2d`` applies without ``mass``
and ``damp_Km``: ``d_sw``'s damping of ``delp``) and ``del6_vt_flux`` (``sw_core.F90``,
without ``damp_Km``: ``d_sw``'s damping of the relative vorticity), FV3 built without
``USE_SG`` (the ``del6_u``/``del6_v`` weights), cubed sphere.

Both routines compute the same fluxes: ``d2 = damp * q``, the del2 fluxes of ``d2`` through the
cell faces (``fx2 = del6_v (d2(i-1) - d2(i))``, :func:`deln_face_flux`, one definition for x and
y), then ``nord`` times the flux divergence over the cell area (:func:`deln_divergence`) and
its fluxes again (with the opposite difference, as FV3 writes it), over FV3's ranges that shrink
by one halo point per pass; FV3's ``copy_corners`` of ``d2`` before each x and y pass when
``nord > 0`` (:class:`~fv3core.stencils.fv_tp_2d.CornerCopy`, only on ranks with a cube vertex).
``deln_flux`` adds the last fluxes to the transport fluxes; ``del6_vt_flux`` returns them.

Namelist keys (``fv_core_nml``, read by ``dyn_core``): ``nord`` (the order is ``nord_v =
min(2, nord)``: 0 del2, 1 del4, 2 del6), ``do_vort_damp`` and ``vtdm4`` (``damp_v = vtdm4`` when
``do_vort_damp``, else 0); the coefficient is :func:`damping_coefficient`:
``(damp_v * da_min) ** (nord_v + 1)`` for ``delp`` (applied when ``damp_v > 1e-4``),
``(damp_v * da_min_c) ** (nord_v + 1)`` for the vorticity (when ``damp_v > 1e-5``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import __INLINED, PARALLEL, computation, interval

from fv3core.errors import FV3ConfigError
from fv3core.grid.subdomain import SubdomainSpec
from fv3core.stencils.flux_divergence import flux_divergence
from fv3core.stencils.fv_tp_2d import CornerCopy
from stencils.dims import CELL_DIMS, face_dims
from stencils.directions import DIRECTIONS, Direction, X, Y
from stencils.factory import GridStencilFactory
from stencils.launch import Launch
from stencils.storage import zeros

FloatField = gtscript.Field[np.float64]
FloatFieldIJ = gtscript.Field[gtscript.IJ, np.float64]

#: FV3's del-n orders of deln_flux and del6_vt_flux (nord = 3 needs more halo than FV3 has)
NORD_V = (0, 1, 2)
#: fv_tp_2d applies deln_flux when damp_c exceeds this
DELN_FLUX_THRESHOLD = 1.0e-4
#: d_sw applies del6_vt_flux when damp_v exceeds this
DEL6_VT_FLUX_THRESHOLD = 1.0e-5


def damping_coefficient(damp_c: float, da: float, nord: int) -> float:
    """FV3's ``(damp_c * da) ** (nord + 1)`` (``da``: ``da_min`` or ``da_min_c``, m^2):
    Fortran's integer power, by repeated multiplication (for ``nord + 1 <= 3`` the same bits as
    libgcc's ``__powidf2``)."""
    base = damp_c * da
    out = base
    for _ in range(nord):
        out = out * base
    return out


def scaled(q: FloatField, d2: FloatField, damp: float):
    """FV3's ``d2 = damp * q``."""
    with computation(PARALLEL), interval(...):
        d2 = damp * q


def deln_face_flux(d2: FloatField, weight: FloatFieldIJ, flux: FloatField):
    """The del2 flux of ``d2`` through the faces crossed along ``DI``/``DJ`` (``weight``:
    ``del6_v`` on x-faces, ``del6_u`` on y-faces): ``weight * (d2(i-1) - d2(i))`` on the first
    pass (external ``FIRST``), ``weight * (d2(i) - d2(i-1))`` after; written into ``flux``, or
    (external ``ADD``) added to it."""
    from __externals__ import ADD, DI, DJ, FIRST

    with computation(PARALLEL), interval(...):
        if __INLINED(FIRST):
            diffusive = weight * (d2[-DI, -DJ, 0] - d2)
        else:
            diffusive = weight * (d2 - d2[-DI, -DJ, 0])
        if __INLINED(ADD):
            flux = flux + diffusive
        else:
            flux = diffusive


def deln_divergence(fx2: FloatField, fy2: FloatField, rarea: FloatFieldIJ, d2: FloatField):
    """FV3's ``d2 = (fx2(i,j) - fx2(i+1,j) + fy2(i,j) - fy2(i,j+1)) * rarea``."""
    with computation(PARALLEL), interval(...):
        d2 = flux_divergence(fx2, fy2) * rarea


class DelnFlux:
    """Equivalent of FV3 subroutines ``deln_flux`` (``tp_core.F90``, no ``mass``/``damp_Km``) and
    ``del6_vt_flux`` (``sw_core.F90``, no ``damp_Km``) for one rank: the del-(2 nord + 2)
    diffusive fluxes of a cell-mean scalar ``q`` through the compute faces.

    ``nord``: FV3's ``nord_v`` (0, 1, 2); ``damp``: the coefficient FV3 passes in
    (:func:`damping_coefficient`, m^(2 nord + 2)); ``add``: True for ``deln_flux`` (the fluxes
    are added to the given ``fx``, ``fy``), False for ``del6_vt_flux`` (written into them).
    See the module docstring for the keys.

    Launches per :meth:`bind`: ``3 + 3 nord`` stencils (the scaling, two flux stencils per
    pass, a divergence before each pass but the first) and, when ``nord > 0`` on a rank with a
    cube vertex, ``2 nord + 2`` corner copies (before each x and y pass)."""

    def __init__(self, factory: GridStencilFactory, grid: Any, spec: SubdomainSpec, nord: int,
                 damp: float, *, add: bool) -> None:  # fmt: skip
        if nord not in NORD_V:
            raise FV3ConfigError(f"nord_v={nord}: FV3's deln_flux/del6_vt_flux have nord 0, 1, 2 "
                                 "(dyn_core passes min(2, nord))")  # fmt: skip
        if spec.n_halo != 3:
            raise FV3ConfigError(f"n_halo={spec.n_halo}: FV3's del-n fluxes need n_halo = 3")
        if not (np.isfinite(damp) and damp >= 0.0):
            raise FV3ConfigError(f"damp={damp}: the del-n coefficient must be finite and >= 0")
        self.nord, self.damp, self.add = nord, float(damp), add
        self._grid = grid
        self._scale = factory.from_dims(scaled, CELL_DIMS, nord + 1, name="fv3_deln_scaled")
        #: per pass (halo nt = nord, nord - 1, ..., 0): the flux stencils of x and y
        self._fluxes: list[dict[Direction, Any]] = []
        for nt in range(nord, -1, -1):
            self._fluxes.append({
                d: factory.from_dims(
                    deln_face_flux, face_dims(d), nt,
                    externals={**d.offsets(), "FIRST": nt == nord, "ADD": add and nt == 0},
                    name=f"fv3_deln_flux_{d.name}")
                for d in DIRECTIONS
            })  # fmt: skip
        #: the divergence before each pass but the first (halo nt + 1)
        self._divergences = [factory.from_dims(deln_divergence, CELL_DIMS, nt + 1,
                                               name="fv3_deln_divergence")
                             for nt in range(nord - 1, -1, -1)]  # fmt: skip
        vertex = (spec.on_west or spec.on_east) and (spec.on_south or spec.on_north)
        self._copies = ({d: CornerCopy(d, spec) for d in DIRECTIONS}
                        if nord > 0 and vertex else None)  # fmt: skip
        indexing = factory.indexing
        #: FV3's work arrays d2 (cells) and fx2, fy2 of the passes before the last
        self.d2 = zeros(indexing.domain_of(CELL_DIMS), factory.backend)
        self.fx2 = zeros(indexing.domain_of(face_dims(X)), factory.backend)
        self.fy2 = zeros(indexing.domain_of(face_dims(Y)), factory.backend)

    def bind(self, q: Any, fx: Any, fy: Any) -> list[Launch]:
        """The fluxes of these storages as launches, in order.  ``q`` (cells): read on
        ``is-1-nord:ie+1+nord, js-1-nord:je+1+nord`` (halo filled); ``fx`` (x-faces), ``fy``
        (y-faces): the diffusive fluxes (units of ``q`` times m^2) added to (``add``) or written
        into them on the compute faces ``is:ie+1, js:je`` and ``is:ie, js:je+1``."""
        g = self._grid
        weight = {X: g.del6_v, Y: g.del6_u}
        work = {X: self.fx2, Y: self.fy2}
        out = {X: fx, Y: fy}
        launches: list[Launch] = [self._scale.bind(q=q, d2=self.d2, damp=self.damp)]
        for n, fluxes in enumerate(self._fluxes):
            last = n == self.nord
            if n > 0:
                launches.append(self._divergences[n - 1].bind(fx2=self.fx2, fy2=self.fy2,
                                                              rarea=g.rarea, d2=self.d2))  # fmt: skip
            for d in DIRECTIONS:
                if self._copies is not None:
                    launches.append(self._copies[d].bind(self.d2))
                launches.append(fluxes[d].bind(d2=self.d2, weight=weight[d],
                                               flux=out[d] if last else work[d]))  # fmt: skip
        return launches

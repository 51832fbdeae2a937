"""FV3's ``nh_p_grad`` and ``split_p_grad`` (``dyn_core.F90``) in GTScript:
:class:`NonHydrostaticPressureGradient`, the D-grid winds' pressure gradient of the
non-hydrostatic core (``split_p_grad`` where ``beta > 0``).

The hydrostatic part is ``one_grad_p``'s finite-volume gradient of ``pk`` (Lin 1997), weighted by
``pk``'s layer difference; the non-hydrostatic part is the same gradient of the perturbation
pressure ``pp`` (the Riemann solver's ``ppe``), weighted by the layer's ``delp``. All of ``pp``,
``pk``, ``gz`` and ``delp`` are first interpolated to the cell corners (``a2b_ord4``; ``pp``,
``pk`` and ``gz`` in place, as FV3's ``replace``), ``pp`` at the top is 0 and ``pk`` there
``ptk`` (``log(ptop)`` with ``use_logp``). No ``q_con`` (FV3's ``GAS_HYDRO_P`` off).
``split_p_grad`` off-centres the hydrostatic part as ``grad1_p_update`` does: ``beta`` times the
previous acoustic step's increment (kept in ``du``, ``dv``) and ``1 - beta`` times this one's.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import PARALLEL, computation, interval

from fv3core.grid.storages import GridStorages
from fv3core.grid.subdomain import SubdomainSpec
from fv3core.stencils.a2b_ord4 import AGridToBGrid
from fv3core.stencils.divergence_damping import edge_dims
from fv3core.stencils.p_grad import set_value
from stencils.dims import X_INTERFACE_DIM, Y_INTERFACE_DIM, Z_DIM, Z_INTERFACE_DIM
from stencils.directions import DIRECTIONS
from stencils.factory import GridStencilFactory
from stencils.launch import Launch
from stencils.storage import zeros

FloatField = gtscript.Field[np.float64]
FloatFieldIJ = gtscript.Field[gtscript.IJ, np.float64]

CORNERS = (X_INTERFACE_DIM, Y_INTERFACE_DIM, Z_DIM)


def nonhydrostatic_pressure_gradient(wind: FloatField, pp: FloatField, pk: FloatField, gz: FloatField,
                                     wk1: FloatField, rd: FloatFieldIJ, dt: float):  # fmt: skip
    """``nh_p_grad``'s update of the D-grid wind along ``DI``, ``DJ`` (``u`` with ``rdx``,
    ``v`` with ``rdy``): the hydrostatic gradient of ``pk`` plus the non-hydrostatic one of
    ``pp``, both between the corner and the next along D (``wk1``: ``delp`` on the corners)."""
    from __externals__ import DI, DJ

    with computation(PARALLEL), interval(...):
        du1 = dt / ((pk[0, 0, 1] - pk) + (pk[DI, DJ, 1] - pk[DI, DJ, 0])) * (
            (gz[0, 0, 1] - gz[DI, DJ, 0]) * (pk[DI, DJ, 1] - pk)
            + (gz - gz[DI, DJ, 1]) * (pk[0, 0, 1] - pk[DI, DJ, 0]))  # fmt: skip
        wind = (wind + du1 + dt / (wk1 + wk1[DI, DJ, 0]) * (
            (gz[0, 0, 1] - gz[DI, DJ, 0]) * (pp[DI, DJ, 1] - pp)
            + (gz - gz[DI, DJ, 1]) * (pp[0, 0, 1] - pp[DI, DJ, 0]))) * rd  # fmt: skip


def split_pressure_gradient(wind: FloatField, increment: FloatField, pp: FloatField, pk: FloatField,
                            gz: FloatField, wk1: FloatField, rd: FloatFieldIJ, dt: float, beta: float):  # fmt: skip
    """``split_p_grad``'s update along ``DI``, ``DJ``: as :func:`nonhydrostatic_pressure_gradient`
    with the hydrostatic increment off-centred by ``beta`` (``increment``: FV3's ``du``/``dv``,
    replaced by this step's)."""
    from __externals__ import DI, DJ

    with computation(PARALLEL), interval(...):
        wind = wind + beta * increment
        increment = dt / ((pk[0, 0, 1] - pk) + (pk[DI, DJ, 1] - pk[DI, DJ, 0])) * (
            (gz[0, 0, 1] - gz[DI, DJ, 0]) * (pk[DI, DJ, 1] - pk)
            + (gz - gz[DI, DJ, 1]) * (pk[0, 0, 1] - pk[DI, DJ, 0]))  # fmt: skip
        wind = (wind + (1.0 - beta) * increment + dt / (wk1 + wk1[DI, DJ, 0]) * (
            (gz[0, 0, 1] - gz[DI, DJ, 0]) * (pp[DI, DJ, 1] - pp)
            + (gz - gz[DI, DJ, 1]) * (pp[0, 0, 1] - pp[DI, DJ, 0]))) * rd  # fmt: skip


class NonHydrostaticPressureGradient:
    """Equivalent of FV3's ``nh_p_grad`` (``dyn_core.F90``): ``u`` (``is..ie, js..je+1``) and
    ``v`` (``is..ie+1, js..je``) updated by the pressure gradient over ``dt`` and divided by
    ``dx``, ``dy``; ``pp``, ``pk``, ``gz`` (cells, interfaces) overwritten on the compute corners
    with their corner values. ``top_value``: FV3's ``ptk`` (``peln1`` with ``use_logp``);
    ``beta > 0``: ``split_p_grad``."""

    def __init__(self, factory: GridStencilFactory, grid: GridStorages, spec: SubdomainSpec, dt: float,
                 top_value: float, *, beta: float = 0.0) -> None:  # fmt: skip
        self.dt, self.top_value, self.beta, self._grid = float(dt), float(top_value), float(beta), grid
        origin, domain = factory.indexing.bounds(CORNERS)
        self._top = factory.from_origin_domain(set_value, origin, (domain[0], domain[1], 1),
                                               name="nh_p_grad_top")  # fmt: skip
        self._a2b_below_top = AGridToBGrid(factory, grid, spec, replace=True, z_dim=Z_INTERFACE_DIM, k_start=1)
        self._a2b_interfaces = AGridToBGrid(factory, grid, spec, replace=True, z_dim=Z_INTERFACE_DIM)
        self._a2b_layers = AGridToBGrid(factory, grid, spec)
        self._wk1 = zeros(factory.indexing.domain_of(CORNERS), factory.backend)
        definition, name = ((split_pressure_gradient, "split_p_grad") if self.beta > 0.0
                            else (nonhydrostatic_pressure_gradient, "nh_p_grad"))  # fmt: skip
        self._stencils = {d: factory.from_dims(definition, edge_dims(d), externals=d.offsets(),
                                               name=f"{name}_{d.name}")
                          for d in DIRECTIONS}  # fmt: skip

    def bind(self, u: Any, v: Any, pp: Any, gz: Any, delp: Any, pk: Any,
             increments: tuple[Any, Any] | None = None, first: bool = False) -> list[Launch]:  # fmt: skip
        """``u`` (u points), ``v`` (v points): ``nz`` layers, in place; ``pp``, ``pk``, ``gz``
        (cells, ``nz + 1`` interfaces, valid on ``is-2..ie+2, js-2..je+2``), ``delp`` (cells).
        ``beta > 0``: ``increments`` = FV3's ``du`` (u points), ``dv`` (v points), kept between
        the acoustic steps (zero at the large step's start); ``first``: the large step's first
        acoustic step (FV3's ``beta_d = 0``)."""
        g = self._grid
        winds, rd = {"x": u, "y": v}, {"x": g.rdx, "y": g.rdy}
        if self.beta > 0.0:
            if increments is None:
                raise ValueError("split_p_grad (beta > 0): pass the increments du, dv")
            inc, beta_d = {"x": increments[0], "y": increments[1]}, 0.0 if first else self.beta
            updates = [s.bind(wind=winds[d.name], increment=inc[d.name], pp=pp, pk=pk, gz=gz, wk1=self._wk1,
                              rd=rd[d.name], dt=self.dt, beta=beta_d) for d, s in self._stencils.items()]  # fmt: skip
        else:
            updates = [s.bind(wind=winds[d.name], pp=pp, pk=pk, gz=gz, wk1=self._wk1, rd=rd[d.name], dt=self.dt)
                       for d, s in self._stencils.items()]  # fmt: skip
        return [
            self._top.bind(q=pp, value=0.0),
            self._top.bind(q=pk, value=self.top_value),
            *self._a2b_below_top.bind(pp),
            *self._a2b_below_top.bind(pk),
            *self._a2b_interfaces.bind(gz),
            *self._a2b_layers.bind(delp, self._wk1),
            *updates,
        ]

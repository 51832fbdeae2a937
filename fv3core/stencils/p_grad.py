"""The hydrostatic pressure gradients of FV3's ``dyn_core.F90`` in GTScript:
:class:`CGridPressureGradient` (``p_grad_c``) and :class:`DGridPressureGradient` (``one_grad_p``;
with ``beta > 0`` FV3's off-centred ``grad1_p_update``), from the ``pk`` and ``gz`` of ``geopk``
(:mod:`fv3core.stencils.geopk`).

FV3 built with ``SW_DYNAMICS`` runs them on one layer with ``akap = 1``, ``ptop = 0`` and
``pt = 1``; the finite-volume pressure gradient of Lin (1997) accelerates the C-grid winds
(``p_grad_c``, half step ``dt2``) and, after ``a2b_ord4`` of pk and gz to the corners, the D-grid
winds (``one_grad_p``, which also divides d_sw's ``u dx``, ``v dy`` by the edge lengths).
Hydrostatic, no external-mode damping (``d_ext = 0``: FV3's ``wk1``, ``wk2`` and ``divg2`` are 0,
the ``0.0 +`` of the updates).  ``grad1_p_update`` (``beta > 0``) adds ``beta`` times the previous
acoustic step's increment and ``1 - beta`` times this one's; FV3 zeroes the increments at the
start of the large step and uses ``beta_d = 0`` in its first acoustic step.

``pk`` and ``gz`` are FV3's interface arrays ``pkc(isd:ied, jsd:jed, npz+1)``, ``gz(...,
npz+1)``: 3-D storages on ``Z_INTERFACE_DIM`` (level 0 the model top, level ``nz`` the surface).
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
from fv3core.stencils.geopk import AKAP_SW, PTOP_SW
from stencils.dims import (
    X_INTERFACE_DIM,
    Y_INTERFACE_DIM,
    Z_DIM,
    Z_INTERFACE_DIM,
    face_dims,
)
from stencils.directions import DIRECTIONS
from stencils.factory import GridStencilFactory
from stencils.launch import Launch

FloatField = gtscript.Field[np.float64]
FloatFieldIJ = gtscript.Field[gtscript.IJ, np.float64]



def cgrid_pressure_gradient(wind: FloatField, pk: FloatField, gz: FloatField,
                            rdc: FloatFieldIJ, dt2: float):  # fmt: skip
    """FV3 ``p_grad_c`` (hydrostatic) on the C-grid faces crossed along ``DI``, ``DJ`` (``uc``
    with ``rdxc``, ``vc`` with ``rdyc``): the finite-volume pressure gradient between the cell
    upstream (-D) and the cell of the face, ``wk = pk(k+1) - pk(k)``."""
    from __externals__ import DI, DJ

    with computation(PARALLEL), interval(...):
        wk_sum = (pk[-DI, -DJ, 1] - pk[-DI, -DJ, 0]) + (pk[0, 0, 1] - pk)
        wind = wind + dt2 * rdc / wk_sum * (
            (gz[-DI, -DJ, 1] - gz) * (pk[0, 0, 1] - pk[-DI, -DJ, 0])
            + (gz[-DI, -DJ, 0] - gz[0, 0, 1]) * (pk[-DI, -DJ, 1] - pk)
        )


def cgrid_nonhydrostatic_pressure_gradient(wind: FloatField, pk: FloatField, gz: FloatField,
                                           delpc: FloatField, rdc: FloatFieldIJ, dt2: float):  # fmt: skip
    """FV3 ``p_grad_c``, non-hydrostatic: as :func:`cgrid_pressure_gradient` on the full
    pressure ``pk`` (``Riem_Solver_c``'s), weighted by ``wk = delpc``."""
    from __externals__ import DI, DJ

    with computation(PARALLEL), interval(...):
        wk_sum = delpc[-DI, -DJ, 0] + delpc
        wind = wind + dt2 * rdc / wk_sum * (
            (gz[-DI, -DJ, 1] - gz) * (pk[0, 0, 1] - pk[-DI, -DJ, 0])
            + (gz[-DI, -DJ, 0] - gz[0, 0, 1]) * (pk[-DI, -DJ, 1] - pk)
        )


def dgrid_pressure_gradient(wind: FloatField, pk: FloatField, gz: FloatField,
                            rd: FloatFieldIJ, dt: float):  # fmt: skip
    """FV3 ``one_grad_p``'s D-grid update on the cell edges along ``DI``, ``DJ`` (``u`` with
    ``rdx``, ``v`` with ``rdy``): ``wind`` enters as d_sw leaves it (times the edge length),
    ``pk``/``gz`` on the corners (after ``a2b_ord4``) between the corner and the next along D."""
    from __externals__ import DI, DJ

    with computation(PARALLEL), interval(...):
        wk_sum = (pk[0, 0, 1] - pk) + (pk[DI, DJ, 1] - pk[DI, DJ, 0])
        wind = rd * (0.0 + wind + dt / wk_sum * (
            (gz[0, 0, 1] - gz[DI, DJ, 0]) * (pk[DI, DJ, 1] - pk)
            + (gz - gz[DI, DJ, 1]) * (pk[0, 0, 1] - pk[DI, DJ, 0])))  # fmt: skip


def offcentred_dgrid_pressure_gradient(wind: FloatField, increment: FloatField, pk: FloatField,
                                       gz: FloatField, rd: FloatFieldIJ, dt: float,
                                       beta: float):  # fmt: skip
    """FV3 ``grad1_p_update``'s D-grid update along ``DI``, ``DJ``: as
    :func:`dgrid_pressure_gradient`, with ``beta`` times the previous ``increment`` (FV3's
    ``du``/``dv``, replaced by this step's) and ``1 - beta`` times this step's."""
    from __externals__ import DI, DJ

    with computation(PARALLEL), interval(...):
        wind = wind + beta * increment
        wk_sum = (pk[0, 0, 1] - pk) + (pk[DI, DJ, 1] - pk[DI, DJ, 0])
        increment = dt / wk_sum * (
            (gz[0, 0, 1] - gz[DI, DJ, 0]) * (pk[DI, DJ, 1] - pk)
            + (gz - gz[DI, DJ, 1]) * (pk[0, 0, 1] - pk[DI, DJ, 0]))  # fmt: skip
        wind = (wind + 0.0 - 0.0 + (1.0 - beta) * increment) * rd


def set_value(q: FloatField, value: float):
    """``q = value`` (one_grad_p's ``pk(i, j, 1) = top_value``)."""
    with computation(PARALLEL), interval(...):
        q = value


class CGridPressureGradient:
    """Equivalent of FV3 subroutine ``p_grad_c``: ``uc`` on ``is..ie+1, js..je``
    and ``vc`` on ``is..ie, js..je+1`` accelerated by the pressure gradient of ``pk``/``gz``
    (cells, interfaces, valid on ``is-1..ie+1, js-1..je+1``: :class:`~fv3core.stencils.geopk.Geopotential` with
    ``cgrid=True``) over the half step ``dt2`` (s).  Two launches (x and y, one definition)."""

    def __init__(self, factory: GridStencilFactory, grid: GridStorages, dt2: float, *,
                 hydrostatic: bool = True) -> None:  # fmt: skip
        self.dt2, self._grid, self.hydrostatic = float(dt2), grid, bool(hydrostatic)
        definition, name = ((cgrid_pressure_gradient, "p_grad_c") if hydrostatic
                            else (cgrid_nonhydrostatic_pressure_gradient, "p_grad_c_nh"))  # fmt: skip
        self._stencils = {d: factory.from_dims(definition, face_dims(d),
                                               externals=d.offsets(), name=f"{name}_{d.name}")
                          for d in DIRECTIONS}  # fmt: skip

    def bind(self, uc: Any, vc: Any, pk: Any, gz: Any, delpc: Any = None) -> list[Launch]:
        """``uc`` (x faces), ``vc`` (y faces): ``nz`` layers, updated in place; non-hydrostatic
        (``hydrostatic=False``): ``pk`` the full pressure, ``delpc`` (cells) the weights."""
        if self.hydrostatic == (delpc is not None):
            raise ValueError(f"p_grad_c (hydrostatic={self.hydrostatic}): pass delpc exactly when "
                             "non-hydrostatic")  # fmt: skip
        g = self._grid
        winds, rdc = {"x": uc, "y": vc}, {"x": g.rdxc, "y": g.rdyc}
        weights = {} if delpc is None else {"delpc": delpc}
        return [s.bind(wind=winds[d.name], pk=pk, gz=gz, rdc=rdc[d.name], dt2=self.dt2, **weights)
                for d, s in self._stencils.items()]  # fmt: skip


class DGridPressureGradient:
    """Equivalent of FV3 subroutine ``one_grad_p`` (hydrostatic, ``d_ext = 0``) or, with
    ``beta > 0``, ``grad1_p_update``: ``pk`` at the top set to ``ptk`` on the corners
    ``is..ie+1, js..je+1``, ``pk`` (interfaces 2..npz+1) and ``gz`` (all interfaces)
    interpolated to those corners in place (``a2b_ord4`` with ``replace``), then the D-grid winds
    ``u`` (``is..ie, js..je+1``) and ``v`` (``is..ie+1, js..je``) updated by the pressure gradient
    over ``dt`` (s) and divided by ``dx``, ``dy`` (d_sw leaves them times the edge length).  Nine
    launches."""

    def __init__(self, factory: GridStencilFactory, grid: GridStorages, spec: SubdomainSpec,
                 dt: float, *, ptk: float = PTOP_SW**AKAP_SW, beta: float = 0.0) -> None:  # fmt: skip
        self.dt, self.ptk, self.beta, self._grid = float(dt), float(ptk), float(beta), grid
        origin, domain = factory.indexing.bounds((X_INTERFACE_DIM, Y_INTERFACE_DIM, Z_DIM))
        self._top = factory.from_origin_domain(set_value, origin, (domain[0], domain[1], 1),
                                               name="one_grad_p_top")  # fmt: skip
        self._a2b_pk = AGridToBGrid(factory, grid, spec, replace=True, z_dim=Z_INTERFACE_DIM,
                                    k_start=1)  # fmt: skip
        self._a2b_gz = AGridToBGrid(factory, grid, spec, replace=True, z_dim=Z_INTERFACE_DIM)
        definition, name = ((offcentred_dgrid_pressure_gradient, "grad1_p_update")
                            if self.beta > 0.0 else (dgrid_pressure_gradient, "one_grad_p"))  # fmt: skip
        self._stencils = {d: factory.from_dims(definition, edge_dims(d), externals=d.offsets(),
                                               name=f"{name}_{d.name}")
                          for d in DIRECTIONS}  # fmt: skip
        self._zero = ({d: factory.from_dims(set_value, edge_dims(d), name=f"zero_{name}_{d.name}")
                       for d in DIRECTIONS} if self.beta > 0.0 else {})  # fmt: skip

    def bind_reset(self, increments: tuple[Any, Any]) -> list[Launch]:
        """``beta > 0``: the start of FV3's large step (``init_step``), ``du``, ``dv`` := 0."""
        return [s.bind(q=q, value=0.0) for s, q in zip(self._zero.values(), increments)]

    def bind(self, u: Any, v: Any, pk: Any, gz: Any, increments: tuple[Any, Any] | None = None,
             first: bool = False) -> list[Launch]:  # fmt: skip
        """``u`` (u points), ``v`` (v points): ``nz`` layers, updated in place; ``pk``, ``gz``
        (cells, ``nz + 1`` interfaces, valid on ``is-2..ie+2, js-2..je+2``: :class:`~fv3core.stencils.geopk.Geopotential`
        on the D grid) are overwritten on the compute corners with their corner values.
        ``beta > 0``: ``increments`` = FV3's ``du`` (u points), ``dv`` (v points), kept between
        the acoustic steps; ``first``: the large step's first acoustic step (``beta_d = 0``)."""
        g = self._grid
        winds, rd = {"x": u, "y": v}, {"x": g.rdx, "y": g.rdy}
        corners = [self._top.bind(q=pk, value=self.ptk), *self._a2b_pk.bind(pk),
                   *self._a2b_gz.bind(gz)]  # fmt: skip
        if self.beta <= 0.0:
            return [*corners, *(s.bind(wind=winds[d.name], pk=pk, gz=gz, rd=rd[d.name], dt=self.dt)
                                for d, s in self._stencils.items())]  # fmt: skip
        if increments is None:
            raise ValueError("beta > 0: pass the increments du, dv")
        inc = {"x": increments[0], "y": increments[1]}
        beta_d = 0.0 if first else self.beta
        return [*corners, *(s.bind(wind=winds[d.name], increment=inc[d.name], pk=pk, gz=gz,
                                   rd=rd[d.name], dt=self.dt, beta=beta_d)
                            for d, s in self._stencils.items())]  # fmt: skip

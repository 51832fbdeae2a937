"""FV3's ``update_dz_c`` (``nh_utils.F90``) in GTScript: :class:`UpdateDzC`, the C grid's half
step of the interface heights of the non-hydrostatic core.

The heights ``gz`` of each interface are advected by the C grid's mass fluxes ``ut``, ``vt`` of
``c_sw`` (interpolated to the interface with the reference layer thicknesses ``dp0``; extrapolated
at the top and the bottom), upwind, as a finite-volume update weighted by the cell area; the
cube-corner halo points the sweeps read are FV3's ``fill_4corners`` copies (x before the x
fluxes, then y). The surface's vertical velocity ``ws`` follows from the bottom height's change,
and the heights are kept at least ``dz_min = 2`` m apart, bottom up.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import BACKWARD, PARALLEL, computation, interval

from fv3core.grid.storages import GridStorages
from fv3core.grid.subdomain import SubdomainSpec
from fv3core.stencils.c_sw import fill2_4corners_copies
from fv3core.stencils.d2a2c_vect import CornerFills
from stencils.dims import X_DIM, Y_DIM, Z_INTERFACE_DIM
from stencils.directions import X, Y
from stencils.factory import GridStencilFactory
from stencils.launch import Launch
from stencils.storage import from_numpy, zeros

FloatField = gtscript.Field[np.float64]
FloatFieldIJ = gtscript.Field[gtscript.IJ, np.float64]
FloatFieldK = gtscript.Field[gtscript.K, np.float64]

#: FV3's minimum layer thickness of update_dz_c and update_dz_d (m; 6 with -DDZ_MIN_6)
DZ_MIN = 2.0

INTERFACES = (X_DIM, Y_DIM, Z_INTERFACE_DIM)


def copy_interfaces(src: FloatField, dst: FloatField):
    with computation(PARALLEL), interval(...):
        dst = src


def advect_heights(gzx: FloatField, gzy: FloatField, ut: FloatField, vt: FloatField, area: FloatFieldIJ,
                   dp0: FloatFieldK, gz: FloatField, top_ratio: float, bot_ratio: float):  # fmt: skip
    """``update_dz_c``'s k loop: the upwind fluxes of the heights (``gzx``: x-corner-filled,
    ``gzy``: also y-filled) and the area-weighted update of ``gz``."""
    with computation(PARALLEL):
        with interval(0, 1):
            xfx = ut + (ut - ut[0, 0, 1]) * top_ratio
            yfx = vt + (vt - vt[0, 0, 1]) * top_ratio
        with interval(1, -1):
            xfx = (dp0 * ut[0, 0, -1] + dp0[-1] * ut) * (1.0 / (dp0[-1] + dp0))
            yfx = (dp0 * vt[0, 0, -1] + dp0[-1] * vt) * (1.0 / (dp0[-1] + dp0))
        with interval(-1, None):
            xfx = ut[0, 0, -1] + (ut[0, 0, -1] - ut[0, 0, -2]) * bot_ratio
            yfx = vt[0, 0, -1] + (vt[0, 0, -1] - vt[0, 0, -2]) * bot_ratio
    with computation(PARALLEL), interval(...):
        fx = xfx * (gzx[-1, 0, 0] if xfx > 0.0 else gzx)
        fy = yfx * (gzy[0, -1, 0] if yfx > 0.0 else gzy)
        gz = (gzy * area + fx - fx[1, 0, 0] + fy - fy[0, 1, 0]) / (
            area + xfx - xfx[1, 0, 0] + yfx - yfx[0, 1, 0])  # fmt: skip


def limit_heights(gz: FloatField, zs: FloatFieldIJ, ws: FloatFieldIJ, rdt: float, dz_min: float):
    """``update_dz_c``'s end: ``ws`` from the bottom height, and heights at least ``dz_min``
    apart, bottom up."""
    with computation(BACKWARD):
        with interval(-1, None):
            ws = (zs - gz) * rdt
        with interval(0, -1):
            gz = gz if gz > gz[0, 0, 1] + dz_min else gz[0, 0, 1] + dz_min


class UpdateDzC:
    """Equivalent of FV3's ``update_dz_c`` (``nh_utils.F90``) on ``is-1..ie+1, js-1..je+1`` of one
    rank: ``gz`` (interface heights, m) in and out, ``ws`` (m/s) out, from the C grid's ``ut``,
    ``vt`` (``c_sw``'s, cells) over the half step ``dt`` and the reference layer thicknesses
    ``dp0`` (FV3's ``dp_ref``, Pa)."""

    def __init__(self, factory: GridStencilFactory, grid: GridStorages, spec: SubdomainSpec, dp0: np.ndarray,
                 dt: float) -> None:  # fmt: skip
        indexing, backend = factory.indexing, factory.backend
        dp0 = np.asarray(dp0, dtype=np.float64)
        if dp0.shape != (indexing.nz,):
            raise ValueError(f"update_dz_c: dp0 has {dp0.shape} values, the grid {indexing.nz} levels")
        self.grid, self.rdt = grid, 1.0 / dt
        self.top_ratio = dp0[0] / (dp0[0] + dp0[1])
        self.bot_ratio = dp0[-1] / (dp0[-2] + dp0[-1])
        self._dp0 = from_numpy(np.append(dp0, 0.0), backend, (0,))
        self._gzx, self._gzy = (zeros(indexing.domain_of(INTERFACES), backend) for _ in range(2))
        self._copy = factory.from_dims(copy_interfaces, INTERFACES, indexing.n_halo)
        self._fill_x = CornerFills(spec, fill2_4corners_copies(spec, X, ("gz",)))
        self._fill_y = CornerFills(spec, fill2_4corners_copies(spec, Y, ("gz",)))
        self._advect = factory.from_dims(advect_heights, INTERFACES, 1)
        self._limit = factory.from_dims(limit_heights, INTERFACES, 1)

    def bind(self, gz: Any, ut: Any, vt: Any, zs: Any, ws: Any) -> list[Launch]:
        """``gz`` (interfaces), ``ut``, ``vt`` (cells), ``zs`` (surface height), ``ws`` (2-D)."""
        return [
            self._copy.bind(src=gz, dst=self._gzx),
            self._fill_x.bind(gz=self._gzx),
            self._copy.bind(src=self._gzx, dst=self._gzy),
            self._fill_y.bind(gz=self._gzy),
            self._advect.bind(gzx=self._gzx, gzy=self._gzy, ut=ut, vt=vt, area=self.grid.area, dp0=self._dp0,
                              gz=gz, top_ratio=self.top_ratio, bot_ratio=self.bot_ratio),
            self._limit.bind(gz=gz, zs=zs, ws=ws, rdt=self.rdt, dz_min=DZ_MIN),
        ]  # fmt: skip

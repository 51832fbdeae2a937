"""FV3's ``update_dz_d`` and its ``edge_profile`` (``nh_utils.F90``) in GTScript:
:class:`UpdateDzD`, the D grid's advection of the interface heights of the non-hydrostatic core.

``edge_profile`` reconstructs the D grid's Courant numbers and swept areas (``crx``, ``xfx``,
``cry``, ``yfx`` of the layers, ``d_sw``'s) on the interfaces: a cubic profile in the reference
layer thicknesses ``dp0`` (FV3's non-uniform form, no limiter), a tridiagonal solve down and up
each column. The interface heights ``zh`` are then transported by ``fv_tp_2d`` (``hord_tm``)
with those, as a finite-volume update; on the interfaces where ``damp_vt > 1e-5`` FV3 transports
a copy of ``zh`` and adds ``del6_vt_flux``'s diffusive fluxes (order ``nord_v``, coefficient
``damp_vt`` as FV3 passes it), elsewhere ``zh`` itself. The bottom interface takes the lowest
layer's damping. Then ``ws`` and the ``dz_min`` limiter, as in
:class:`~fv3core.stencils.update_dz_c.UpdateDzC`, on the compute columns.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import __INLINED, BACKWARD, FORWARD, PARALLEL, computation, interval

from fv3core.grid.storages import GridStorages
from fv3core.grid.subdomain import SubdomainSpec
from fv3core.stencils.deln_flux import DelnFlux
from fv3core.stencils.fv_tp_2d import FiniteVolumeTransport
from fv3core.stencils.update_dz_c import DZ_MIN, copy_interfaces, limit_heights
from stencils.dims import (
    CELL_DIMS,
    X_DIM,
    X_INTERFACE_DIM,
    Y_DIM,
    Y_INTERFACE_DIM,
    Z_DIM,
    Z_INTERFACE_DIM,
    GridIndexing,
)
from stencils.directions import X, Y
from stencils.factory import StencilFactory
from stencils.launch import Launch
from stencils.storage import from_numpy, zeros

FloatField = gtscript.Field[np.float64]
FloatFieldIJ = gtscript.Field[gtscript.IJ, np.float64]
FloatFieldK = gtscript.Field[gtscript.K, np.float64]

#: FV3's threshold of update_dz_d's damping
DAMP_MIN = 1.0e-5


def edge_profile(q1: FloatField, q2: FloatField, q1e: FloatField, q2e: FloatField, dp0: FloatFieldK,
                 xt1_top: float, bet_top: float, gam_top: float, gk_bot: float, a_bot: float,
                 xt1_bot: float):  # fmt: skip
    """FV3 ``edge_profile`` (``uniform_grid = .false.``, ``limiter = 0``) of the layer fields
    ``q1``, ``q2`` to the interfaces ``q1e``, ``q2e``; the scalars are FV3's ``xt1``, ``bet``,
    ``gam(1)`` of the top and ``gk``, ``a_bot``, ``xt1`` of the bottom."""
    with computation(FORWARD):
        with interval(0, 1):
            q1e = (xt1_top * q1 + q1[0, 0, 1]) / bet_top
            q2e = (xt1_top * q2 + q2[0, 0, 1]) / bet_top
            gam = gam_top
        with interval(1, -1):
            gk = dp0[-1] / dp0
            bet = 2.0 + 2.0 * gk - gam[0, 0, -1]
            q1e = (3.0 * (q1[0, 0, -1] + gk * q1) - q1e[0, 0, -1]) / bet
            q2e = (3.0 * (q2[0, 0, -1] + gk * q2) - q2e[0, 0, -1]) / bet
            gam = gk / bet
        with interval(-1, None):
            xt2 = gk_bot * (gk_bot + 0.5) - a_bot * gam[0, 0, -1]
            q1e = (xt1_bot * q1[0, 0, -1] + q1[0, 0, -2] - a_bot * q1e[0, 0, -1]) / xt2
            q2e = (xt1_bot * q2[0, 0, -1] + q2[0, 0, -2] - a_bot * q2e[0, 0, -1]) / xt2
    with computation(BACKWARD), interval(0, -1):
        q1e = q1e - gam * q1e[0, 0, 1]
        q2e = q2e - gam * q2e[0, 0, 1]


def height_update(zh: FloatField, z2: FloatField, fx: FloatField, fy: FloatField, fx2: FloatField,
                  fy2: FloatField, xfx: FloatField, yfx: FloatField, area: FloatFieldIJ,
                  rarea: FloatFieldIJ):  # fmt: skip
    """``update_dz_d``'s update of one interface: the transported ``z2`` (``zh`` itself without
    ``DAMPED``), with the diffusive fluxes ``fx2``, ``fy2`` where ``DAMPED``."""
    from __externals__ import DAMPED

    with computation(PARALLEL), interval(...):
        ra_x = area + xfx - xfx[1, 0, 0]
        ra_y = area + yfx - yfx[0, 1, 0]
        if __INLINED(DAMPED):
            zh = (z2 * area + fx - fx[1, 0, 0] + fy - fy[0, 1, 0]) / (ra_x + ra_y - area) + (
                fx2 - fx2[1, 0, 0] + fy2 - fy2[0, 1, 0]) * rarea  # fmt: skip
        else:
            zh = (zh * area + fx - fx[1, 0, 0] + fy - fy[0, 1, 0]) / (ra_x + ra_y - area)


def edge_profile_scalars(dp0: np.ndarray) -> dict[str, float]:
    """``edge_profile``'s top and bottom coefficients, in FV3's order of operations."""
    g0 = dp0[1] / dp0[0]
    bet = g0 * (g0 + 0.5)
    gk = dp0[-2] / dp0[-1]
    return {"xt1_top": 2.0 * g0 * (g0 + 1.0), "bet_top": bet, "gam_top": (1.0 + g0 * (g0 + 1.5)) / bet,
            "gk_bot": gk, "a_bot": 1.0 + gk * (gk + 1.5), "xt1_bot": 2.0 * gk * (gk + 1.0)}  # fmt: skip


def interface_damping(nord_v: Sequence[int], damp_vt: Sequence[float]) -> list[tuple[int, int, int, float]]:
    """FV3's per-layer ``nord_v``, ``damp_vt`` extended to the ``km + 1`` interfaces (the bottom
    takes the lowest layer's) and grouped into runs ``(start, stop, nord, damp)``; a run below
    FV3's threshold is undamped (``damp`` 0)."""
    per = [(int(n), float(d)) if d > DAMP_MIN else (0, 0.0) for n, d in zip(nord_v, damp_vt)]
    per.append(per[-1])
    runs: list[tuple[int, int, int, float]] = []
    for k, key in enumerate(per):
        if runs and runs[-1][2:] == key:
            runs[-1] = (runs[-1][0], k + 1, *key)
        else:
            runs.append((k, k + 1, *key))
    return runs


class UpdateDzD:
    """Equivalent of FV3's ``update_dz_d`` (``nh_utils.F90``) on one rank: ``zh`` (interface
    heights, m; valid on the data domain) transported on the compute cells, ``ws`` (m/s) on the
    compute columns, from ``d_sw``'s ``crx``, ``cry``, ``xfx``, ``yfx`` of the layers.
    ``dp0``: FV3's ``dp_ref`` (Pa); ``nord_v``, ``damp_vt``: FV3's per layer; ``rdt``: 1 / the
    acoustic step."""

    def __init__(self, factory: StencilFactory, grid: GridStorages, spec: SubdomainSpec, nz: int, *,
                 dp0: np.ndarray, hord_tm: int, nord_v: Sequence[int], damp_vt: Sequence[float],
                 rdt: float) -> None:  # fmt: skip
        dp0 = np.asarray(dp0, dtype=np.float64)
        if dp0.shape != (nz,) or len(nord_v) != nz or len(damp_vt) != nz:
            raise ValueError(f"update_dz_d: dp0, nord_v and damp_vt need {nz} values each")
        self.grid, self.rdt = grid, float(rdt)
        layers = factory.on_grid(GridIndexing(spec.nx, spec.ny, nz, spec.n_halo))
        backend, h = factory.backend, spec.n_halo
        self._profile_scalars = edge_profile_scalars(dp0)
        self._dp0 = from_numpy(np.append(dp0, 0.0), backend, (0,))
        self._profiles = {
            X: layers.from_dims(edge_profile, (X_INTERFACE_DIM, Y_DIM, Z_INTERFACE_DIM), (0, h), name="edge_profile_x"),
            Y: layers.from_dims(edge_profile, (X_DIM, Y_INTERFACE_DIM, Z_INTERFACE_DIM), (h, 0), name="edge_profile_y"),
        }  # fmt: skip
        #: interfaces as the levels of a grid of nz + 1
        interfaces = GridIndexing(spec.nx, spec.ny, nz + 1, h)
        every = factory.on_grid(interfaces)

        def face(d: Any) -> Any:
            return zeros(interfaces.domain_of((X_INTERFACE_DIM, Y_DIM, Z_DIM) if d is X
                                              else (X_DIM, Y_INTERFACE_DIM, Z_DIM)), backend)  # fmt: skip

        self.crx, self.xfx, self.fx, self.fx2 = (face(X) for _ in range(4))
        self.cry, self.yfx, self.fy, self.fy2 = (face(Y) for _ in range(4))
        self.z2 = zeros(interfaces.domain_of(CELL_DIMS), backend)
        self._copy = every.from_dims(copy_interfaces, CELL_DIMS, h)
        self._limit = layers.from_dims(limit_heights, (X_DIM, Y_DIM, Z_INTERFACE_DIM))
        self._runs = []
        for start, stop, nord, damp in interface_damping(nord_v, damp_vt):
            run = factory.on_grid(GridIndexing(spec.nx, spec.ny, stop - start, h))
            damped = damp > 0.0
            self._runs.append((
                slice(start, stop),
                FiniteVolumeTransport(run, grid, spec, hord_tm),
                DelnFlux(run, grid, spec, nord, damp, add=False) if damped else None,
                run.from_dims(height_update, CELL_DIMS, externals={"DAMPED": damped}),
            ))  # fmt: skip

    def bind(self, zh: Any, crx: Any, cry: Any, xfx: Any, yfx: Any, zs: Any, ws: Any) -> list[Launch]:
        """``zh`` (cells, interfaces), ``crx``, ``xfx`` (x faces), ``cry``, ``yfx`` (y faces; the
        layers'), ``zs`` (surface height), ``ws`` (2-D)."""
        g = self.grid
        launches = [
            self._profiles[X].bind(q1=crx, q2=xfx, q1e=self.crx, q2e=self.xfx, dp0=self._dp0, **self._profile_scalars),
            self._profiles[Y].bind(q1=cry, q2=yfx, q1e=self.cry, q2e=self.yfx, dp0=self._dp0, **self._profile_scalars),
        ]  # fmt: skip
        if any(deln is not None for _, _, deln, _ in self._runs):
            launches.append(self._copy.bind(src=zh, dst=self.z2))
        for k, transport, deln, update in self._runs:
            q = self.z2[:, :, k] if deln is not None else zh[:, :, k]
            launches.append(transport.bind(q, self.crx[:, :, k], self.cry[:, :, k], self.xfx[:, :, k],
                                           self.yfx[:, :, k], self.fx[:, :, k], self.fy[:, :, k]))  # fmt: skip
            if deln is not None:
                launches += deln.bind(self.z2[:, :, k], self.fx2[:, :, k], self.fy2[:, :, k])
            launches.append(update.bind(zh=zh[:, :, k], z2=self.z2[:, :, k], fx=self.fx[:, :, k], fy=self.fy[:, :, k],
                                        fx2=self.fx2[:, :, k], fy2=self.fy2[:, :, k], xfx=self.xfx[:, :, k],
                                        yfx=self.yfx[:, :, k], area=g.area, rarea=g.rarea))  # fmt: skip
        launches.append(self._limit.bind(gz=zh, zs=zs, ws=ws, rdt=self.rdt, dz_min=DZ_MIN))
        return launches

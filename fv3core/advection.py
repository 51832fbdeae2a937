"""Tracer advection on the cubed sphere with prescribed winds (FV3 fvtp2d): Williamson TC1."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from fv3core.grid.metric import MetricTerms
from fv3core.ranks import Rank
from fv3core.stencils.transport import (
    FiniteVolumeTransport,
    FluxPrep,
    TransportGrid,
    apply_flux_divergence,
)
from mapping.cluster import HaloExchange, ScalarHalo, VectorHalo

log = logging.getLogger(__name__)

#: f(lon, lat) -> values (radians in, numpy arrays out)
FieldFn = Callable[[np.ndarray, np.ndarray], np.ndarray]


def face_winds_from_stream_function(
    metric: MetricTerms, psi_corner: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Contravariant face winds (ut on x-faces, vt on y-faces) whose face fluxes are exact
    differences of the stream function at the face's end points (discretely non-divergent).

    The volume flux through a face toward +i is psi(start) - psi(end) for a face traversed
    toward +j (right-handed tiles), divided by its length and the upwind grid-angle sine."""
    sin = metric.sin_sg
    vn_x = (psi_corner[:, :-1] - psi_corner[:, 1:]) / metric.dy  # normal wind on x-faces
    vn_y = (psi_corner[1:, :] - psi_corner[:-1, :]) / metric.dx  # normal wind on y-faces
    ut = np.zeros_like(vn_x)
    vt = np.zeros_like(vn_y)
    # upwind cell: i-1 (its east edge, sin_sg3) for positive flow, i (west edge, sin_sg1) else
    ut[1:-1] = vn_x[1:-1] / np.where(vn_x[1:-1] > 0, sin[2][:-1], sin[0][1:])
    vt[:, 1:-1] = vn_y[:, 1:-1] / np.where(vn_y[:, 1:-1] > 0, sin[3][:, :-1], sin[1][:, 1:])
    return ut, vt


@dataclass(frozen=True)
class AdvectionConfig:
    hord: int = 8
    dt: float = 1800.0
    nz: int = 1


class RankAdvection:
    """One rank's state and routines for transport of a scalar by steady prescribed winds."""

    def __init__(
        self, factory: Any, rank: Rank, config: AdvectionConfig, psi_fn: FieldFn, q0_fn: FieldFn
    ) -> None:
        from stencils.storage import Domain, from_numpy, zeros

        self.rank, self.config = rank, config
        spec, metric, backend = rank.spec, rank.metric, factory.backend
        h, nx, ny, nz = spec.n_halo, spec.nx, spec.ny, config.nz
        self.grid = TransportGrid.from_metric(metric, backend)
        self.transport = FiniteVolumeTransport(factory, self.grid, spec, nz, config.hord)
        self._update = factory(apply_flux_divergence)
        stag = Domain(nx + 1, ny + 1, nz, h)
        self.q = zeros(Domain(nx, ny, nz, h), backend)
        self.fx = zeros(Domain(nx + 1, ny, nz, h), backend)
        self.fy = zeros(Domain(nx, ny + 1, nz, h), backend)
        self.crx, self.cry = zeros(stag, backend), zeros(stag, backend)
        self.xfx, self.yfx = zeros(stag, backend), zeros(stag, backend)
        lon_c, lat_c = metric.lonlat
        ut, vt = face_winds_from_stream_function(metric, psi_fn(lon_c, lat_c))
        ut3 = zeros(stag, backend)
        vt3 = zeros(stag, backend)
        ut3[: nx + 1 + 2 * h, : ny + 2 * h] = ut[..., None]
        vt3[: nx + 2 * h, : ny + 1 + 2 * h] = vt[..., None]
        FluxPrep(factory, self.grid, spec, nz)(ut3, vt3, config.dt, self.crx, self.cry, self.xfx, self.yfx)
        q0 = q0_fn(*metric.lonlat_agrid)
        self.q[:, :, :] = from_numpy(np.repeat(q0[..., None], nz, axis=2), backend)
        self.halo = ScalarHalo(self.q, n_halo=h, location="center")
        # the two ranks sharing a face must use one flux for it (exact mass conservation;
        # near the cube vertices their corner-filled stencils differ)
        self.flux_sync = VectorHalo(self.fx, self.fy, n_halo=h, grid="C", depth=1)
        self._bounds = {"origin": (h, h, 0), "domain": (nx, ny, nz)}

    def courant_max(self) -> float:
        h, nx, ny = self.rank.spec.n_halo, self.rank.spec.nx, self.rank.spec.ny
        cx = np.abs(np.asarray(self.crx)[h : h + nx + 1, h : h + ny]).max()
        cy = np.abs(np.asarray(self.cry)[h : h + nx, h : h + ny + 1]).max()
        return float(max(cx, cy))

    def fluxes(self) -> None:
        """fvtp2d, after the halo of q has been filled."""
        self.transport(self.q, self.crx, self.cry, self.xfx, self.yfx, self.fx, self.fy)

    def update(self) -> None:
        """Flux-form update, after the boundary fluxes have been synchronised."""
        self._update(q=self.q, fx=self.fx, fy=self.fy, rarea=self.grid.rarea, **self._bounds)

    def interior(self) -> np.ndarray:
        h, nx, ny = self.rank.spec.n_halo, self.rank.spec.nx, self.rank.spec.ny
        return np.asarray(self.q)[h : h + nx, h : h + ny, 0].copy()


class Advection:
    """All ranks this process runs; ``step()`` = halo exchange + fvtp2d + flux divergence."""

    def __init__(
        self, factory: Any, partitioner: Any, ranks: list[Rank], config: AdvectionConfig,
        psi_fn: FieldFn, q0_fn: FieldFn,
    ) -> None:  # fmt: skip
        self.ranks = [RankAdvection(factory, r, config, psi_fn, q0_fn) for r in ranks]
        self.exchanges = [
            HaloExchange(r.rank.comm, partitioner, [r.halo], packing="slicing") for r in self.ranks
        ]
        self.flux_exchanges = [
            HaloExchange(r.rank.comm, partitioner, [r.flux_sync], packing="slicing")
            for r in self.ranks
        ]

    @staticmethod
    def _exchange(exchanges: list[HaloExchange]) -> None:
        for ex in exchanges:
            ex.start()
        for ex in exchanges:
            ex.wait()

    def halo_update(self) -> None:
        self._exchange(self.exchanges)

    def step(self) -> None:
        self.halo_update()
        for r in self.ranks:
            r.fluxes()
        self._exchange(self.flux_exchanges)
        for r in self.ranks:
            r.update()

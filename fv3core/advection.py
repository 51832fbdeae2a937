"""Tracer transport on the cubed sphere with prescribed winds (FV3 ``fvtp2d``): Williamson TC1."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from fv3core.decomposition import Decomposition, Rank
from fv3core.grid.metric import MetricTerms
from fv3core.grid.storages import TransportGrid
from fv3core.stencils.flux_divergence import apply_flux_divergence
from fv3core.stencils.transport import FiniteVolumeTransport, FluxPrep
from mapping.cluster import ScalarHalo, VectorHalo
from stencils.dims import CELL_DIMS, CORNER_DIMS, GridIndexing, face_dims
from stencils.directions import DIRECTIONS, X, Y
from stencils.factory import StencilFactory
from stencils.storage import from_numpy, zeros

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
    """``hord``: FV3's PPM variant; ``dt``: time step (s); ``nz``: levels."""

    hord: int = 8
    dt: float = 1800.0
    nz: int = 1


class RankAdvection:
    """One rank's scalar ``q`` and its transport by steady prescribed winds."""

    def __init__(
        self, factory: StencilFactory, rank: Rank, config: AdvectionConfig, psi_fn: FieldFn,
        q0_fn: FieldFn,
    ) -> None:  # fmt: skip
        self.rank, self.config = rank, config
        spec, metric, backend = rank.spec, rank.metric, factory.backend
        h, nx, ny, nz = spec.n_halo, spec.nx, spec.ny, config.nz
        indexing = GridIndexing(nx, ny, nz, h)
        grid_factory = factory.on_grid(indexing)
        self.grid = TransportGrid.from_metric(metric, backend)
        corners = indexing.domain_of(CORNER_DIMS)
        self.q = zeros(indexing.domain_of(CELL_DIMS), backend)
        self.flux = {d: zeros(indexing.domain_of(face_dims(d)), backend) for d in DIRECTIONS}
        self.courant = {d: zeros(corners, backend) for d in DIRECTIONS}
        self.area_flux = {d: zeros(corners, backend) for d in DIRECTIONS}
        lon_c, lat_c = metric.lonlat
        ut, vt = face_winds_from_stream_function(metric, psi_fn(lon_c, lat_c))
        winds = {X: zeros(corners, backend), Y: zeros(corners, backend)}
        winds[X][: nx + 1 + 2 * h, : ny + 2 * h] = ut[..., None]
        winds[Y][: nx + 2 * h, : ny + 1 + 2 * h] = vt[..., None]
        FluxPrep(grid_factory, self.grid, h)(winds, config.dt, self.courant, self.area_flux)
        q0 = q0_fn(*metric.lonlat_agrid)
        self.q[:, :, :] = from_numpy(np.repeat(q0[..., None], nz, axis=2), backend)
        self.halo = ScalarHalo(self.q, n_halo=h, location="center")
        # the two ranks sharing a face must use one flux for it (exact mass conservation;
        # near the cube vertices their corner-filled stencils differ)
        self.flux_sync = VectorHalo(self.flux[X], self.flux[Y], n_halo=h, grid="C", depth=1)
        transport = FiniteVolumeTransport(grid_factory, self.grid, spec, config.hord)
        self.fluxes = transport.bind(self.q, self.courant[X], self.courant[Y], self.area_flux[X],
                                     self.area_flux[Y], self.flux[X], self.flux[Y])  # fmt: skip
        self.update = grid_factory.from_dims(apply_flux_divergence, CELL_DIMS).bind(
            q=self.q, fx=self.flux[X], fy=self.flux[Y], rarea=self.grid.rarea)

    def courant_max(self) -> float:
        """Largest |Courant number| on the compute faces."""
        h, nx, ny = self.rank.spec.n_halo, self.rank.spec.nx, self.rank.spec.ny
        cx = np.abs(np.asarray(self.courant[X])[h : h + nx + 1, h : h + ny]).max()
        cy = np.abs(np.asarray(self.courant[Y])[h : h + nx, h : h + ny + 1]).max()
        return float(max(cx, cy))

    def interior(self) -> np.ndarray:
        """The compute cells of ``q`` (first level, a copy)."""
        return self.rank.interior(np.asarray(self.q)[..., 0])


class Advection:
    """All ranks of this process; :meth:`step` = halo update of q, ``fvtp2d``, face-flux sync,
    flux-form update."""

    def __init__(
        self, factory: StencilFactory, decomposition: Decomposition, config: AdvectionConfig,
        psi_fn: FieldFn, q0_fn: FieldFn,
    ) -> None:  # fmt: skip
        self.ranks = [RankAdvection(factory, r, config, psi_fn, q0_fn) for r in decomposition.ranks]
        comm = decomposition.communicator
        self.halo = comm.halo_updater({r.rank.rank: [r.halo] for r in self.ranks},
                                      packing="slicing")  # fmt: skip
        self.flux_sync = comm.halo_updater({r.rank.rank: [r.flux_sync] for r in self.ranks},
                                           packing="slicing")  # fmt: skip

    def step(self) -> None:
        self.halo.update()
        for r in self.ranks:
            r.fluxes()
        self.flux_sync.update()
        for r in self.ranks:
            r.update()

"""The prognostic shallow-water state of one rank, its allocation and initial conditions.

Every field of a rank is allocated through one :data:`Allocate` callable by name and
staggering, so that the model can put the same field of all ranks of a process into one
buffer (:class:`stencils.storage.StackedStorages`) and move data between ranks with few copies.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from fv3core.grid.metric import MetricTerms
from fv3core.testcases.williamson import ShallowWaterCase
from stencils.dims import CELL_DIMS, Dims, GridIndexing, face_dims
from stencils.directions import Direction, X, Y
from stencils.storage import Domain, from_numpy, zeros

#: ``allocate(name, dims)``: the storage of the field ``name`` staggered as ``dims``
Allocate = Callable[[str, Dims], Any]

#: Gauss-Legendre points and weights on [0, 1] for edge-mean winds
_GAUSS_T = 0.5 + 0.5 * np.array([-np.sqrt(0.6), 0.0, np.sqrt(0.6)])
_GAUSS_W = np.array([5.0, 8.0, 5.0]) / 18.0


def field_allocator(
    indexing: GridIndexing, backend: str, stacked: Callable[[str, Domain], Any] | None = None
) -> Allocate:
    """An :data:`Allocate` for one rank: zero storages of ``indexing``'s shapes, or the rank's
    slice of a :class:`~stencils.storage.StackedStorages` allocation (``stacked``)."""

    def allocate(name: str, dims: Dims) -> Any:
        domain = indexing.domain_of(dims)
        return stacked(name, domain) if stacked is not None else zeros(domain, backend)

    return allocate


def edge_mean_tangential_wind(
    case: ShallowWaterCase, p0: np.ndarray, p1: np.ndarray
) -> np.ndarray:
    """Mean of the wind's component along the great-circle arc p0 -> p1 (3-point Gauss), i.e.
    the D-grid (covariant) wind of that edge: circulation / edge length."""
    theta = np.arccos(np.clip(np.sum(p0 * p1, axis=-1), -1.0, 1.0))[..., None]
    sin_t = np.sin(theta)
    out = np.zeros(p0.shape[:-1])
    for t, w in zip(_GAUSS_T, _GAUSS_W):
        a, b = np.sin((1.0 - t) * theta) / sin_t, np.sin(t * theta) / sin_t
        p = a * p0 + b * p1
        # d p / d s along the arc (unit tangent)
        tangent = (-np.cos((1.0 - t) * theta) * p0 + np.cos(t * theta) * p1) / sin_t
        tangent /= np.linalg.norm(tangent, axis=-1, keepdims=True)
        out += w * np.sum(case.wind_xyz(p) * tangent, axis=-1)
    return out


@dataclass(frozen=True)
class ShallowWaterState:
    """Fluid depth ``h`` (cell means, the shallow-water ``delp``) and FV3's covariant D-grid
    winds: ``u`` on the x-edges (y-faces, component along the edge), ``v`` on the y-edges
    (x-faces)."""

    h: Any
    u: Any
    v: Any

    def face_wind(self, d: Direction) -> Any:
        """The D-grid wind on the faces crossed along ``d`` (x-faces: ``v``, y-faces: ``u``)."""
        return self.v if d.axis == 0 else self.u

    @classmethod
    def allocate(cls, allocate: Allocate) -> ShallowWaterState:
        return cls(h=allocate("h", CELL_DIMS), u=allocate("u", face_dims(Y)),
                   v=allocate("v", face_dims(X)))  # fmt: skip

    @classmethod
    def initial(
        cls, case: ShallowWaterCase, metric: MetricTerms, allocate: Allocate, backend: str
    ) -> ShallowWaterState:
        """The state of ``case`` at t = 0: depth at cell centres (height minus topography), the
        D-grid winds as means along the edges."""
        state = cls.allocate(allocate)
        nz = state.h.shape[2]
        lon, lat = metric.lonlat_agrid
        depth = case.height(lon, lat) - case.surface(lon, lat)
        p = metric.xyz
        u0 = edge_mean_tangential_wind(case, p[:-1, :], p[1:, :])
        v0 = edge_mean_tangential_wind(case, p[:, :-1], p[:, 1:])
        for field, values in ((state.h, depth), (state.u, u0), (state.v, v0)):
            field[:, :, :] = from_numpy(np.repeat(values[..., None], nz, axis=2), backend)
        return state

"""FV3 ``del2_cubed``: flux-form del2 diffusion of a cell-centred scalar on the cubed sphere,
applied ``ntimes`` (1-3) times from one halo update, with FV3's cube-vertex treatment."""

from __future__ import annotations

from typing import Any

import numpy as np
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import PARALLEL, computation, interval

from fv3core.errors import FV3ConfigError
from fv3core.grid.metric import MetricTerms, SubdomainSpec
from fv3core.stencils.flux_divergence import flux_divergence
from fv3core.stencils.transport import CornerCopy
from stencils.dims import face_dims
from stencils.directions import DIRECTIONS, Direction, X, Y

FloatField = gtscript.Field[np.float64]
FloatFieldIJ = gtscript.Field[gtscript.IJ, np.float64]


def diffusive_flux(q: FloatField, del6: FloatFieldIJ, flux: FloatField):
    """Face flux del6 * (q_upstream - q) (x- or y-faces; direction from externals)."""
    from __externals__ import DI, DJ

    with computation(PARALLEL), interval(...):
        flux = del6 * (q[-DI, -DJ, 0] - q)


def diffusive_update(q: FloatField, fx: FloatField, fy: FloatField, rarea: FloatFieldIJ,
                     cd: float):  # fmt: skip
    with computation(PARALLEL), interval(...):
        q = q + cd * rarea * flux_divergence(fx, fy)


def del6_coefficients(metric: MetricTerms, d: Direction) -> np.ndarray:
    """FV3 ``del6_v`` (x-faces) or ``del6_u`` (y-faces): face length / centre distance times
    the mean grid-angle sine of the two cells sharing the face."""
    sin = metric.sin_sg
    near, far = (0, 2) if d.axis == 0 else (1, 3)
    inner = (slice(1, -1), slice(None)) if d.axis == 0 else (slice(None), slice(1, -1))
    high = (slice(1, None), slice(None)) if d.axis == 0 else (slice(None), slice(1, None))
    low = (slice(None, -1), slice(None)) if d.axis == 0 else (slice(None), slice(None, -1))
    distance = metric.centre_distance(d)
    out = np.zeros(distance.shape)
    out[inner] = 0.5 * (sin[near][high] + sin[far][low]) * metric.face_length(d)[inner] / distance[inner]
    return out


class Del2Cubed:
    """FV3 ``del2_cubed``: ``__call__(q, cd)`` makes q <- q + cd * (area-weighted del2 q),
    ``ntimes`` passes.

    ``q`` needs a filled halo (n_halo = 3); pass ``k`` uses the range extended by
    ``ntimes - k`` cells, so no halo update is needed between passes (as FV3)."""

    def __init__(self, factory: Any, metric: MetricTerms, spec: SubdomainSpec, nz: int,
                 ntimes: int = 1) -> None:  # fmt: skip
        from stencils.dims import CELL_DIMS, GridIndexing
        from stencils.storage import from_numpy, zeros

        if not 1 <= ntimes <= 3:
            raise FV3ConfigError(f"del2cubed ntimes={ntimes}: FV3 allows 1 to 3 passes")
        self._spec, self._ntimes = spec, ntimes
        backend = factory.backend
        indexing = GridIndexing(spec.nx, spec.ny, nz, spec.n_halo)
        grid = factory.on_grid(indexing)
        self._del6 = {d: from_numpy(del6_coefficients(metric, d), backend) for d in DIRECTIONS}
        self._rarea = from_numpy(metric.rarea, backend)
        self._flux = {d: zeros(indexing.domain_of(face_dims(d)), backend) for d in DIRECTIONS}
        self._corners = {d: CornerCopy(d, spec) for d in DIRECTIONS}
        #: per pass (range extended by ntimes - pass cells): each direction's flux, the update
        self._passes = [
            ({d: grid.from_dims(diffusive_flux, face_dims(d), ntimes - n, externals=d.offsets(),
                                name=f"del2_f{d.name}") for d in DIRECTIONS},
             grid.from_dims(diffusive_update, CELL_DIMS, ntimes - n))
            for n in range(1, ntimes + 1)
        ]  # fmt: skip

    def _average_vertices(self, q: Any) -> None:
        """FV3: at each cube vertex the corner cell and its two halo neighbours across the tile
        edges take their mean (the three cells meeting at the vertex)."""
        s, h = self._spec, self._spec.n_halo
        for flip_i, flip_j, on in ((False, False, s.on_west and s.on_south),
                                   (True, False, s.on_east and s.on_south),
                                   (False, True, s.on_west and s.on_north),
                                   (True, True, s.on_east and s.on_north)):  # fmt: skip
            if not on:
                continue
            v = q[:: -1 if flip_i else 1, :: -1 if flip_j else 1]
            mean = (v[h, h] + v[h - 1, h] + v[h, h - 1]) * (1.0 / 3.0)
            v[h, h] = mean
            v[h - 1, h] = mean
            v[h, h - 1] = mean

    def __call__(self, q: Any, cd: float) -> None:
        for fluxes, update in self._passes:
            self._average_vertices(q)
            for d in DIRECTIONS:
                self._corners[d](q)
                fluxes[d](q=q, del6=self._del6[d], flux=self._flux[d])
            update(q=q, fx=self._flux[X], fy=self._flux[Y], rarea=self._rarea, cd=float(cd))

"""FV3 ``del2_cubed``: flux-form del2 diffusion of a cell-centred scalar on the cubed sphere,
applied ``ntimes`` (1-3) times from one halo update, with FV3's cube-vertex treatment."""

from __future__ import annotations

from typing import Any

import numpy as np
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import PARALLEL, computation, interval

from fv3core.errors import FV3ConfigError
from fv3core.grid.metric import MetricTerms, SubdomainSpec
from fv3core.stencils.transport import CornerCopy
from stencils.directions import X, Y

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
        q = q + cd * rarea * (fx - fx[1, 0, 0] + fy - fy[0, 1, 0])


def del6_coefficients(metric: MetricTerms) -> tuple[np.ndarray, np.ndarray]:
    """FV3 ``del6_v`` (x-faces) and ``del6_u`` (y-faces): face length / centre distance times
    the mean grid-angle sine of the two cells sharing the face."""
    sin = metric.sin_sg
    del6_v = np.zeros(metric.dxc.shape)
    del6_u = np.zeros(metric.dyc.shape)
    del6_v[1:-1] = 0.5 * (sin[0][1:] + sin[2][:-1]) * metric.dy[1:-1] / metric.dxc[1:-1]
    del6_u[:, 1:-1] = 0.5 * (sin[1][:, 1:] + sin[3][:, :-1]) * metric.dx[:, 1:-1] / metric.dyc[:, 1:-1]
    return del6_v, del6_u


class Del2Cubed:
    """``__call__(q, cd)``: q <- q + cd * (area-weighted del2 q), ``ntimes`` passes.

    ``q`` needs a filled halo (n_halo = 3); pass ``k`` uses the range extended by
    ``ntimes - k`` cells, so no halo update is needed between passes (as FV3)."""

    def __init__(self, factory: Any, metric: MetricTerms, spec: SubdomainSpec, nz: int,
                 ntimes: int = 1) -> None:  # fmt: skip
        from stencils.storage import Domain, from_numpy, zeros

        if not 1 <= ntimes <= 3:
            raise FV3ConfigError(f"del2cubed ntimes={ntimes}: FV3 allows 1 to 3 passes")
        self._spec, self._ntimes, self._nz = spec, ntimes, nz
        backend = factory.backend
        del6_v, del6_u = del6_coefficients(metric)
        self._del6_v = from_numpy(del6_v, backend)
        self._del6_u = from_numpy(del6_u, backend)
        self._rarea = from_numpy(metric.rarea, backend)
        self._flux_x = factory(diffusive_flux, externals=X.offsets(), name="del2_fx")
        self._flux_y = factory(diffusive_flux, externals=Y.offsets(), name="del2_fy")
        self._update = factory(diffusive_update)
        self._fx = zeros(Domain(spec.nx + 1, spec.ny, nz, spec.n_halo), backend)
        self._fy = zeros(Domain(spec.nx, spec.ny + 1, nz, spec.n_halo), backend)
        self._corners_x = CornerCopy(X, spec)
        self._corners_y = CornerCopy(Y, spec)

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
        s, h, nz = self._spec, self._spec.n_halo, self._nz
        for n in range(1, self._ntimes + 1):
            nt = self._ntimes - n
            self._average_vertices(q)
            self._corners_x(q)
            self._flux_x(q=q, del6=self._del6_v, flux=self._fx, origin=(h - nt, h - nt, 0),
                         domain=(s.nx + 1 + 2 * nt, s.ny + 2 * nt, nz))  # fmt: skip
            self._corners_y(q)
            self._flux_y(q=q, del6=self._del6_u, flux=self._fy, origin=(h - nt, h - nt, 0),
                         domain=(s.nx + 2 * nt, s.ny + 1 + 2 * nt, nz))  # fmt: skip
            self._update(q=q, fx=self._fx, fy=self._fy, rarea=self._rarea, cd=float(cd),
                         origin=(h - nt, h - nt, 0), domain=(s.nx + 2 * nt, s.ny + 2 * nt, nz))  # fmt: skip

"""Horizontal finite-volume transport: FV3's ``fvtp2d`` (Lin & Rood 1996 splitting with PPM),
the Courant numbers and area fluxes of ``fxadv``, and the cubed-sphere corner fills."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import PARALLEL, computation, interval

from fv3core.errors import FV3ConfigError
from fv3core.grid.metric import SubdomainSpec
from fv3core.stencils.directions import Direction, X, Y
from fv3core.stencils.launch import BoundStencil
from fv3core.stencils.ppm import (
    SUPPORTED_HORD,
    ppm_flux_stencil,
    ppm_interface_stencil,
    ppm_slope_stencil,
)

FloatField = gtscript.Field[np.float64]
FloatFieldIJ = gtscript.Field[gtscript.IJ, np.float64]


def courant_and_area_flux(
    ut: FloatField,
    rdxa: FloatFieldIJ,
    face_length: FloatFieldIJ,
    sin_near: FloatFieldIJ,
    sin_far: FloatFieldIJ,
    crx: FloatField,
    xfx: FloatField,
    dt: float,
):
    """Courant number and area swept through each face in one step (``fxadv``), from the
    contravariant face-normal wind ``ut``; upwind cell's A-grid length and grid angle."""
    from __externals__ import DI, DJ

    with computation(PARALLEL), interval(...):
        if ut > 0.0:
            crx = dt * ut * rdxa[-DI, -DJ]
            xfx = dt * ut * face_length * sin_far[-DI, -DJ]
        else:
            crx = dt * ut * rdxa
            xfx = dt * ut * face_length * sin_near


def inner_advective_update(
    q: FloatField, area: FloatFieldIJ, flux: FloatField, area_flux: FloatField, q_out: FloatField
):
    """One-directional advective update used as input of the cross-direction sweep."""
    from __externals__ import DI, DJ

    with computation(PARALLEL), interval(...):
        q_out = (q * area + flux * area_flux - flux[DI, DJ, 0] * area_flux[DI, DJ, 0]) / (
            area + area_flux - area_flux[DI, DJ, 0]
        )


def average_flux(inner: FloatField, outer: FloatField, area_flux: FloatField):
    """Lin-Rood average of the two splitting orders, times the swept area: ``inner`` := flux."""
    with computation(PARALLEL), interval(...):
        inner = 0.5 * (inner + outer) * area_flux


def apply_flux_divergence(q: FloatField, fx: FloatField, fy: FloatField, rarea: FloatFieldIJ):
    """q += (fluxes in - fluxes out) / area (FV3 ``delp`` / tracer update without mass)."""
    with computation(PARALLEL), interval(...):
        q = q + (fx - fx[1, 0, 0] + fy - fy[0, 1, 0]) * rarea


class CornerCopy:
    """FV3 ``copy_corners``: fill the halo regions beyond the cube vertices of a tile.

    Before an x-sweep the south-west corner cell (-a, -b) takes the west-halo value
    (-b, a-1); before a y-sweep the south-halo value (b-1, -a); the other vertices are mirror
    images.  Only the vertices this subdomain touches are filled.  Works on CPU storages
    (numpy arrays), in place.
    """

    def __init__(self, direction: Direction, spec: SubdomainSpec) -> None:
        h = spec.n_halo
        a, b = np.meshgrid(np.arange(1, h + 1), np.arange(1, h + 1), indexing="ij")
        self._dst = (h - a, h - b)
        self._src = (h - b, h + a - 1) if direction.name == "x" else (h + b - 1, h - a)
        self._views = [
            flips
            for flips, on in (
                ((False, False), spec.on_west and spec.on_south),
                ((True, False), spec.on_east and spec.on_south),
                ((False, True), spec.on_west and spec.on_north),
                ((True, True), spec.on_east and spec.on_north),
            )
            if on
        ]

        self._index: dict[tuple[int, ...], tuple[np.ndarray, ...]] = {}

    def _indices(self, shape: tuple[int, ...]) -> tuple[np.ndarray, ...]:
        """(dst i, dst j, src i, src j) of all vertices at once, in q's own index space (the
        vertex regions never overlap each other's sources, so one gather/scatter does it)."""
        ni, nj = shape[0], shape[1]
        di, dj, si, sj = [], [], [], []
        for flip_i, flip_j in self._views:
            fi = (lambda i: ni - 1 - i) if flip_i else (lambda i: i)
            fj = (lambda j: nj - 1 - j) if flip_j else (lambda j: j)
            di.append(fi(self._dst[0]).ravel())
            dj.append(fj(self._dst[1]).ravel())
            si.append(fi(self._src[0]).ravel())
            sj.append(fj(self._src[1]).ravel())
        return tuple(np.concatenate(x) if x else np.zeros(0, int) for x in (di, dj, si, sj))

    def __call__(self, q: Any) -> None:
        if not self._views:
            return
        index = self._index.get(q.shape)
        if index is None:
            index = self._index[q.shape] = self._indices(q.shape)
        di, dj, si, sj = index
        q[di, dj] = q[si, sj]


@dataclass(frozen=True)
class TransportGrid:
    """The metric terms transport needs, as 2D storages (see :class:`MetricTerms`)."""

    area: Any
    rarea: Any
    dxa: Any
    dya: Any
    rdxa: Any
    rdya: Any
    dx: Any
    dy: Any
    sin_sg1: Any
    sin_sg2: Any
    sin_sg3: Any
    sin_sg4: Any

    @classmethod
    def from_metric(cls, metric: Any, backend: str) -> TransportGrid:
        from stencils.storage import from_numpy

        def s(a: np.ndarray) -> Any:
            return from_numpy(np.ascontiguousarray(a), backend)

        sin = metric.sin_sg
        return cls(
            area=s(metric.area), rarea=s(metric.rarea), dxa=s(metric.dxa), dya=s(metric.dya),
            rdxa=s(1.0 / metric.dxa), rdya=s(1.0 / metric.dya), dx=s(metric.dx), dy=s(metric.dy),
            sin_sg1=s(sin[0]), sin_sg2=s(sin[1]), sin_sg3=s(sin[2]), sin_sg4=s(sin[3]),
        )  # fmt: skip


def _ppm_externals(direction: Direction, spec: SubdomainSpec, hord: int) -> dict[str, Any]:
    h = spec.n_halo
    n = spec.nx if direction.name == "x" else spec.ny
    on = (spec.on_west, spec.on_east) if direction.name == "x" else (spec.on_south, spec.on_north)
    ext = {"iord": hord, **direction.offsets()}
    # all PPM calls of one direction start at the interior along that axis: origin h
    ext.update(direction.edge_regions((h, h, 0), h, h + n - 1, *on))
    return ext


class PiecewiseParabolic:
    """FV3 ``xppm`` / ``yppm`` (one class, built for a :class:`Direction`): face values of q.

    ``__call__(q, courant, flux, origin, domain)`` fills ``flux`` on the faces of the given
    range (origin along the direction must be the interior start, n_halo)."""

    def __init__(
        self, factory: Any, direction: Direction, spec: SubdomainSpec, nz: int, hord: int,
        dxa: Any,
    ) -> None:  # fmt: skip
        from stencils.storage import Domain, zeros

        self._hord, self._dxa, self._direction = hord, dxa, direction
        self._flux = factory(
            ppm_flux_stencil, externals=_ppm_externals(direction, spec, hord),
            name=f"{direction.name}ppm",
        )  # fmt: skip
        h = spec.n_halo
        shape = Domain(spec.nx + 1, spec.ny + 1, nz, h)
        self._dm = zeros(shape, factory.backend)
        self._al = zeros(shape, factory.backend)
        if hord >= 8:
            self._slope = factory(ppm_slope_stencil, externals=direction.offsets(), name="dm")
            self._interface = factory(ppm_interface_stencil, externals=direction.offsets(), name="al")

    def bind(
        self, q: Any, courant: Any, flux: Any, origin: tuple[int, int, int],
        domain: tuple[int, int, int],
    ) -> list[BoundStencil]:  # fmt: skip
        """The stencil calls of ``__call__`` with these arguments bound (for repeated use)."""
        calls = []
        if self._hord >= 8:
            ax = self._direction.axis
            # dm on cells [o-2, o+n], al on [o-1, o+n] along the direction
            o_dm, d_dm = list(origin), list(domain)
            o_dm[ax] -= 2
            d_dm[ax] += 3
            calls.append(BoundStencil(self._slope, tuple(o_dm), tuple(d_dm), q=q, dm=self._dm))
            o_dm[ax] += 1
            d_dm[ax] -= 1
            calls.append(BoundStencil(self._interface, tuple(o_dm), tuple(d_dm), q=q,
                                      dm=self._dm, al=self._al))  # fmt: skip
        calls.append(BoundStencil(self._flux, origin, domain, q=q, courant=courant, dxa=self._dxa,
                                  dm=self._dm, al_in=self._al, flux=flux))  # fmt: skip
        return calls

    def __call__(
        self, q: Any, courant: Any, flux: Any, origin: tuple[int, int, int],
        domain: tuple[int, int, int],
    ) -> None:  # fmt: skip
        for call in self.bind(q, courant, flux, origin, domain):
            call()


class FluxPrep:
    """Courant numbers and swept areas on C-grid faces from contravariant winds (``fxadv``)."""

    def __init__(self, factory: Any, grid: TransportGrid, spec: SubdomainSpec, nz: int) -> None:
        h, nx, ny = spec.n_halo, spec.nx, spec.ny
        self._grid = grid
        self._x = factory(courant_and_area_flux, externals=X.offsets(), name="fxadv_x")
        self._y = factory(courant_and_area_flux, externals=Y.offsets(), name="fxadv_y")
        self._x_bounds = {"origin": (1, 0, 0), "domain": (nx + 2 * h - 1, ny + 2 * h, nz)}
        self._y_bounds = {"origin": (0, 1, 0), "domain": (nx + 2 * h, ny + 2 * h - 1, nz)}

    def __call__(self, ut: Any, vt: Any, dt: float, crx: Any, cry: Any, xfx: Any, yfx: Any) -> None:
        g = self._grid
        self._x(ut=ut, rdxa=g.rdxa, face_length=g.dy, sin_near=g.sin_sg1, sin_far=g.sin_sg3,
                crx=crx, xfx=xfx, dt=float(dt), **self._x_bounds)  # fmt: skip
        self._y(ut=vt, rdxa=g.rdya, face_length=g.dx, sin_near=g.sin_sg2, sin_far=g.sin_sg4,
                crx=cry, xfx=yfx, dt=float(dt), **self._y_bounds)  # fmt: skip


class FiniteVolumeTransport:
    """FV3 ``fvtp2d``: fluxes of a cell-mean scalar q through the faces of the compute domain.

    ``fx`` (x-faces) and ``fy`` (y-faces) come out as q times the swept area (the Lin-Rood
    average of the x-then-y and y-then-x splittings); ``q`` must have valid halos
    (``n_halo`` = 3) and its vertex halo corners are overwritten (FV3 ``copy_corners``).
    """

    #: how many argument sets ``__call__`` keeps bound (a model calls with one or two)
    MAX_BOUND = 4

    def __init__(
        self, factory: Any, grid: TransportGrid, spec: SubdomainSpec, nz: int, hord: int
    ) -> None:
        if hord not in SUPPORTED_HORD:
            raise FV3ConfigError(f"hord={hord} is not implemented: use one of {SUPPORTED_HORD}")
        if spec.n_halo != 3:
            raise FV3ConfigError(f"n_halo={spec.n_halo}: FV3 transport needs n_halo = 3")
        from stencils.storage import Domain, zeros

        h, nx, ny = spec.n_halo, spec.nx, spec.ny
        self._grid = grid
        backend = factory.backend
        self._ppm_x = PiecewiseParabolic(factory, X, spec, nz, hord, grid.dxa)
        self._ppm_y = PiecewiseParabolic(factory, Y, spec, nz, hord, grid.dya)
        self._inner_x = factory(inner_advective_update, externals=X.offsets(), name="q_j")
        self._inner_y = factory(inner_advective_update, externals=Y.offsets(), name="q_i")
        self._average = factory(average_flux)
        self._corners_x = CornerCopy(X, spec)
        self._corners_y = CornerCopy(Y, spec)
        shape = Domain(nx + 1, ny + 1, nz, h)
        self._fx2 = zeros(shape, backend)
        self._fy2 = zeros(shape, backend)
        self._q_i = zeros(shape, backend)
        self._q_j = zeros(shape, backend)
        full_x, full_y = nx + 2 * h, ny + 2 * h
        self._b = {
            "fy2": {"origin": (0, h, 0), "domain": (full_x, ny + 1, nz)},
            "q_i": {"origin": (0, h, 0), "domain": (full_x, ny, nz)},
            "fx": {"origin": (h, h, 0), "domain": (nx + 1, ny, nz)},
            "fx2": {"origin": (h, 0, 0), "domain": (nx + 1, full_y, nz)},
            "q_j": {"origin": (h, 0, 0), "domain": (nx, full_y, nz)},
            "fy": {"origin": (h, h, 0), "domain": (nx, ny + 1, nz)},
        }
        self._bound: dict[tuple[int, ...], BoundTransport] = {}

    def bind(
        self, q: Any, crx: Any, cry: Any, xfx: Any, yfx: Any, fx: Any, fy: Any
    ) -> BoundTransport:
        """The ``fvtp2d`` of these storages, bound once (the one definition of the sequence;
        :class:`BoundTransport` runs it without per-call argument processing)."""
        g, b, bs = self._grid, self._b, BoundStencil
        return BoundTransport([
            partial(self._corners_y, q),
            *self._ppm_y.bind(q, cry, self._fy2, **b["fy2"]),
            bs(self._inner_y, q=q, area=g.area, flux=self._fy2, area_flux=yfx,
               q_out=self._q_i, **b["q_i"]),
            *self._ppm_x.bind(self._q_i, crx, fx, **b["fx"]),
            partial(self._corners_x, q),
            *self._ppm_x.bind(q, crx, self._fx2, **b["fx2"]),
            bs(self._inner_x, q=q, area=g.area, flux=self._fx2, area_flux=xfx,
               q_out=self._q_j, **b["q_j"]),
            *self._ppm_y.bind(self._q_j, cry, fy, **b["fy"]),
            bs(self._average, inner=fx, outer=self._fx2, area_flux=xfx, **b["fx"]),
            bs(self._average, inner=fy, outer=self._fy2, area_flux=yfx, **b["fy"]),
        ])  # fmt: skip

    def __call__(
        self, q: Any, crx: Any, cry: Any, xfx: Any, yfx: Any, fx: Any, fy: Any
    ) -> None:
        """:meth:`bind` these storages (once per distinct set, the last ``MAX_BOUND`` kept;
        a bound call holds its storages, so their ids stay unique) and run."""
        args = (q, crx, cry, xfx, yfx, fx, fy)
        key = tuple(map(id, args))
        bound = self._bound.get(key)
        if bound is None:
            if len(self._bound) >= self.MAX_BOUND:
                del self._bound[next(iter(self._bound))]
            bound = self._bound[key] = self.bind(*args)
        bound()


class BoundTransport:
    """One bound ``fvtp2d`` (see :meth:`FiniteVolumeTransport.bind`): corner fill for the y
    sweep, the y-then-x fluxes, corner fill for the x sweep, the x-then-y fluxes and the
    average, in order."""

    def __init__(self, steps: list[Callable[[], None]]) -> None:
        self._steps = steps

    def __call__(self) -> None:
        for step in self._steps:
            step()

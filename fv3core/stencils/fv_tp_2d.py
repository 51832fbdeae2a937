"""FV3's ``fv_tp_2d`` (``tp_core.F90``): horizontal finite-volume transport, the Lin & Rood
(1996) splitting with PPM, and the cubed-sphere corner fills (``copy_corners``).

One ``fvtp2d`` is four stencil launches (:class:`FiniteVolumeTransport`), each one whole PPM
sweep (slopes, interface values and profile are variables of the stencil, see
:mod:`fv3core.stencils.ppm`); the inner advective update of the Lin-Rood splitting is
computed inside the sweep that consumes it, and the Lin-Rood average inside the last sweep
that produces each flux (:func:`transport_sweep`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import (
    __INLINED,
    PARALLEL,
    computation,
    horizontal,
    interval,
    region,
)

from fv3core.errors import FV3ConfigError
from fv3core.grid.storages import GridStorages
from fv3core.grid.subdomain import SubdomainSpec
from fv3core.scheme_limits import SUPPORTED_HORD
from fv3core.stencils.ppm import ppm_face_flux, ppm_flux_stencil
from stencils.dims import CORNER_DIMS, face_dims
from stencils.directions import FAR, Direction, X, Y
from stencils.factory import GridStencilFactory

FloatField = gtscript.Field[np.float64]
FloatFieldIJ = gtscript.Field[gtscript.IJ, np.float64]


#: where :func:`transport_sweep` puts the Lin-Rood average (its ``average`` external)
NO_AVERAGE, AVERAGE_INTO_PARTNER, AVERAGE_INTO_FLUX = 0, 1, 2


@gtscript.function
def advective_update(q, area, flux_in, flux_out, area_flux_in, area_flux_out):
    """One-directional advective update of q (fluxes times swept areas through the two faces
    of the cell), the input of the cross-direction sweep."""
    return (q * area + flux_in * area_flux_in - flux_out * area_flux_out) / (
        area + area_flux_in - area_flux_out
    )


@gtscript.function
def lin_rood_average(inner, outer, area_flux):
    """Lin-Rood average of the two splitting orders' fluxes, times the swept area."""
    return 0.5 * (inner + outer) * area_flux


def transport_sweep(
    q: FloatField,
    area: FloatFieldIJ,
    cross_flux: FloatField,
    cross_area_flux: FloatField,
    courant: FloatField,
    dxa: FloatFieldIJ,
    partner_flux: FloatField,
    area_flux: FloatField,
    flux: FloatField,
):
    """One PPM sweep of ``fvtp2d`` along ``DI``/``DJ``: ``flux`` = :func:`ppm_face_flux` of q,
    or (external ``inner_update``) of q's :func:`advective_update` across (offsets ``CI``/``CJ``,
    fluxes ``cross_flux`` through swept areas ``cross_area_flux``), a variable of this stencil.

    ``average``: :data:`AVERAGE_INTO_FLUX` writes the :func:`lin_rood_average` of this flux and
    ``partner_flux`` (the other splitting order's flux on the same faces) into ``flux``;
    :data:`AVERAGE_INTO_PARTNER` writes it into ``partner_flux`` inside the region
    ``ba:bb, bc:bd`` and leaves the plain flux in ``flux``."""
    from __externals__ import CI, CJ, average, ba, bb, bc, bd, inner_update

    with computation(PARALLEL), interval(...):
        if __INLINED(inner_update):
            q_cross = advective_update(
                q, area, cross_flux, cross_flux[CI, CJ, 0], cross_area_flux,
                cross_area_flux[CI, CJ, 0],
            )  # fmt: skip
            sweep_flux = ppm_face_flux(q_cross, courant, dxa)
        else:
            sweep_flux = ppm_face_flux(q, courant, dxa)
        if __INLINED(average == AVERAGE_INTO_FLUX):
            flux = lin_rood_average(sweep_flux, partner_flux, area_flux)
        else:
            flux = sweep_flux
        if __INLINED(average == AVERAGE_INTO_PARTNER):
            with horizontal(region[ba:bb, bc:bd]):
                partner_flux = lin_rood_average(partner_flux, sweep_flux, area_flux)


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

    def indices(self, shape: tuple[int, ...]) -> tuple[np.ndarray, ...]:
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
            index = self._index[q.shape] = self.indices(q.shape)
        di, dj, si, sj = index
        q[di, dj] = q[si, sj]

    def bind(self, q: Any) -> Callable[[], None]:
        """``self(q)`` as a call without arguments; for NumPy storages one gather/scatter
        through flat indices into q's buffer (all levels; ~3x faster than 2-D fancy indexing
        of a GridTools-layout storage)."""
        if not self._views or not isinstance(q, np.ndarray):
            return partial(self, q)
        from stencils.storage import flat_locations

        (buffer,), ((_, index),) = flat_locations([("q", q)])
        di, dj, si, sj = self.indices(q.shape)
        return FlatCopy(buffer, index[di, dj].ravel(), index[si, sj].ravel(), corners=self, field=q)


class FlatCopy:
    """``buffer[dst] = buffer[src]`` (a bound :class:`CornerCopy`: ``corners`` applied to
    ``field``, kept for tools that translate the launch sequence, e.g. StencilFlow)."""

    def __init__(self, buffer: np.ndarray, dst: np.ndarray, src: np.ndarray,
                 corners: CornerCopy | None = None, field: Any = None) -> None:  # fmt: skip
        self._buffer, self._dst, self._src = buffer, dst, src
        self.corners, self.field = corners, field

    @property
    def point_copies(self) -> list[list[tuple[Any, tuple[int, int], Any, tuple[int, int], float]]]:
        """The copies as one batch of (dst array, (i, j), src array, (i, j), sign), for tools
        that translate the launch sequence (StencilFlow); empty without ``corners``."""
        if self.corners is None:
            return []
        q = self.field
        di, dj, si, sj = (a.tolist() for a in self.corners.indices(q.shape))
        return [[(q, (a, b), q, (c, d), 1.0) for a, b, c, d in zip(di, dj, si, sj)]]

    def __call__(self) -> None:
        self._buffer[self._dst] = self._buffer[self._src]


def _ppm_externals(direction: Direction, spec: SubdomainSpec, hord: int) -> dict[str, Any]:
    h, n = spec.n_halo, spec.cells(direction)
    ext = {"iord": hord, **direction.offsets()}
    # all PPM sweeps of one direction start at the interior along that axis: origin h
    ext.update(direction.edge_regions((h, h, 0), h, h + n - 1, *spec.on_edges(direction)))
    return ext


def _sweep_externals(
    direction: Direction, spec: SubdomainSpec, hord: int, inner_update: bool, average: int,
    band: dict[str, Any] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Externals of :func:`transport_sweep` along ``direction``."""
    offsets = direction.across.offsets()
    return {
        **_ppm_externals(direction, spec, hord), "CI": offsets["DI"], "CJ": offsets["DJ"],
        "inner_update": inner_update, "average": average, **(band or X.band(-FAR, 2 * FAR)),
    }  # fmt: skip


class FiniteVolumeTransport:
    """FV3 ``fvtp2d``: fluxes of a cell-mean scalar q through the faces of the compute domain.

    ``fx`` (x-faces) and ``fy`` (y-faces) come out as q times the swept area (the Lin-Rood
    average of the x-then-y and y-then-x splittings); ``q`` must have valid halos
    (``n_halo`` = 3) and its vertex halo corners are overwritten (FV3 ``copy_corners``).

    Four launches (see :meth:`bind`): the y-flux of q (``fy2``, corners filled for y); the
    x-flux of q's y-update (``fx``); corners filled for x, the x-flux of q (``fx2``), and ``fx``
    := the average of the two; the y-flux of q's x-update averaged with ``fy2`` (``fy``).

    ``hord``: FV3's; as in FV3 the sweeps of q itself (``fy2``, ``fx2``) use ``ord_in`` = 8 for
    hord 10 (``hord`` otherwise) and the sweeps of the updates (``fx``, ``fy``) ``hord``.

    FV3's two forms of the flux average (``fv_tp_2d``'s optional ``mfx``, ``mfy``):

    * without mass fluxes (FV3's transport of delp and vorticity): ``fx`` = the Lin-Rood average
      of the face values times ``xfx`` (the swept area, m^2), ``fy`` likewise with ``yfx``;
    * with ``mass_fluxes=(mfx, mfy)`` (FV3's transport of pt and tracers): the same face values
      times ``mfx`` (x-faces) and ``mfy`` (y-faces) instead, e.g. the mass fluxes (Pa m^2)
      ``d_sw`` accumulates or ``tracer_2d_1L`` scales, so ``fx``, ``fy`` are q times mass.

    The inner advective updates are the same in both forms: FV3's
    ``(q * area + fyy(j) - fyy(j+1)) / ra_y`` with ``fyy = yfx * fy2``, where every caller of
    ``fv_tp_2d`` (``d_sw``, ``tracer_2d_1L``, ``tracer_2d``) passes ``ra_y = area + yfx(j) -
    yfx(j+1)`` (``ra_x`` likewise); :func:`advective_update` computes that ``ra`` from the swept
    areas with the same operations in the same order, so no ``ra_x``/``ra_y`` is passed.
    ``deln_flux`` (FV3's ``nord``, ``damp_c``, ``mass``) is not part of this class.
    """

    #: how many argument sets ``__call__`` keeps bound (a model calls with one or two)
    MAX_BOUND = 4

    def __init__(
        self, factory: GridStencilFactory, grid: GridStorages, spec: SubdomainSpec, hord: int
    ) -> None:
        if hord not in SUPPORTED_HORD:
            raise FV3ConfigError(f"hord={hord} is not implemented: use one of {SUPPORTED_HORD}")
        if spec.n_halo != 3:
            raise FV3ConfigError(f"n_halo={spec.n_halo}: FV3 transport needs n_halo = 3")
        from stencils.storage import zeros

        h, ny = spec.n_halo, spec.ny
        ord_in, ord_ou = (8 if hord == 10 else hord), hord
        self._grid = grid
        # gt4py's OnTheFlyMerging would recompute the sweeps' temporaries at every offset they
        # are read at (C48: numpy step ~2x slower); without it each is computed once
        skip = ("OnTheFlyMerging",)
        x_faces, y_faces = face_dims(X), face_dims(Y)
        self._yppm = factory.from_dims(
            ppm_flux_stencil, y_faces, (h, 0), externals=_ppm_externals(Y, spec, ord_in),
            name="yppm", oir_skip=skip,
        )  # fmt: skip
        self._xppm_inner = factory.from_dims(
            transport_sweep, x_faces,
            externals=_sweep_externals(X, spec, ord_ou, True, NO_AVERAGE),
            name="xppm_inner", oir_skip=skip,
        )  # fmt: skip
        self._xppm_mean = factory.from_dims(
            transport_sweep, x_faces, (0, h),
            externals=_sweep_externals(X, spec, ord_in, False, AVERAGE_INTO_PARTNER,
                                       Y.band(h, ny)),
            name="xppm_mean", oir_skip=skip,
        )  # fmt: skip
        self._yppm_inner_mean = factory.from_dims(
            transport_sweep, y_faces,
            externals=_sweep_externals(Y, spec, ord_ou, True, AVERAGE_INTO_FLUX),
            name="yppm_inner_mean", oir_skip=skip,
        )  # fmt: skip
        self._corners_x = CornerCopy(X, spec)
        self._corners_y = CornerCopy(Y, spec)
        shape = factory.indexing.domain_of(CORNER_DIMS)
        self._fx2 = zeros(shape, factory.backend)
        self._fy2 = zeros(shape, factory.backend)
        self._bound: dict[tuple[int, ...], BoundTransport] = {}

    def bind(
        self, q: Any, crx: Any, cry: Any, xfx: Any, yfx: Any, fx: Any, fy: Any,
        *, mass_fluxes: tuple[Any, Any] | None = None,
    ) -> BoundTransport:  # fmt: skip
        """The ``fvtp2d`` of these storages, bound once (the one definition of the sequence;
        :class:`BoundTransport` runs it without per-call argument processing).

        ``q`` (cells, in/out: corner halos overwritten), ``crx`` / ``cry`` (x- / y-faces,
        Courant numbers), ``xfx`` / ``yfx`` (x- / y-faces, swept areas in m^2), ``fx`` / ``fy``
        (x- / y-faces, out: the fluxes on the compute domain's faces); all 3-D storages with
        the 3-point halo of the factory's grid.  ``mass_fluxes=(mfx, mfy)`` (x- / y-faces,
        read on the compute domain's faces): FV3's ``fv_tp_2d(..., mfx=mfx, mfy=mfy)``, the
        fluxes are the face values times ``mfx``/``mfy`` instead of ``xfx``/``yfx``."""
        g = self._grid
        mfx, mfy = (xfx, yfx) if mass_fluxes is None else mass_fluxes
        y_update = {"area": g.area, "cross_flux": self._fy2, "cross_area_flux": yfx}
        x_update = {"area": g.area, "cross_flux": self._fx2, "cross_area_flux": xfx}
        fx_mean = {"partner_flux": fx, "area_flux": mfx}
        fy_mean = {"partner_flux": self._fy2, "area_flux": mfy}
        # a variant without the update or the average still takes (and ignores) its fields
        return BoundTransport([
            self._corners_y.bind(q),
            self._yppm.bind(q=q, courant=cry, dxa=g.dya, flux=self._fy2),
            self._xppm_inner.bind(q=q, **y_update, courant=crx, dxa=g.dxa, **fx_mean, flux=fx),
            self._corners_x.bind(q),
            self._xppm_mean.bind(q=q, **y_update, courant=crx, dxa=g.dxa, **fx_mean,
                                 flux=self._fx2),
            self._yppm_inner_mean.bind(q=q, **x_update, courant=cry, dxa=g.dya, **fy_mean,
                                       flux=fy),
        ])  # fmt: skip

    def __call__(
        self, q: Any, crx: Any, cry: Any, xfx: Any, yfx: Any, fx: Any, fy: Any,
        *, mass_fluxes: tuple[Any, Any] | None = None,
    ) -> None:  # fmt: skip
        """:meth:`bind` these storages (once per distinct set, the last ``MAX_BOUND`` kept;
        a bound call holds its storages, so their ids stay unique) and run."""
        args = (q, crx, cry, xfx, yfx, fx, fy)
        key = tuple(map(id, args + tuple(mass_fluxes or ())))
        bound = self._bound.get(key)
        if bound is None:
            if len(self._bound) >= self.MAX_BOUND:
                del self._bound[next(iter(self._bound))]
            bound = self._bound[key] = self.bind(*args, mass_fluxes=mass_fluxes)
        bound()


class BoundTransport:
    """One bound ``fvtp2d`` (see :meth:`FiniteVolumeTransport.bind`): its corner fills and
    stencil launches, in order."""

    def __init__(self, steps: list[Callable[[], None]]) -> None:
        self._steps = steps

    @property
    def steps(self) -> tuple[Callable[[], None], ...]:
        """The corner fills and launches, in order (for schedules that interleave ranks)."""
        return tuple(self._steps)

    def __call__(self) -> None:
        for step in self._steps:
            step()

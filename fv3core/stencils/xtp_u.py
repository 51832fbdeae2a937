"""FV3's ``xtp_u`` and ``ytp_v`` (GFDL_atmos_cubed_sphere ``model/sw_core.F90``): the upwind
PPM values of the D-grid winds at the cell corners that ``d_sw`` multiplies into its kinetic
energy, in GTScript, written once for both directions.

``xtp_u`` interpolates ``u`` (on the y-faces) along i to the corners, ``ytp_v`` interpolates
``v`` (on the x-faces) along j; FV3 writes ``ytp_v`` as the mirror image of ``xtp_u`` statement
for statement, so both are :func:`xtp_flux` built with the offsets of
:class:`stencils.directions.Direction` ``X`` or ``Y``.  In the terms of :mod:`fv3core.stencils.ppm`
the wind's points along the direction are the "cells" and the corners the "faces" between them:
the corner ``i`` lies between ``u(i-1, j)`` and ``u(i, j)``.

``iord`` (FV3's ``hord_mt``) 8: the monotone PPM of Lin (2004) with FV3's tile-edge values
(one-sided non-uniform-grid extrapolations through the edge, ``pert_ppm`` on the third cell),
10: the same profile and edge values with Lin's modification of Huynh's constraint in place of
Lin's limiter (``xtp_u``'s own ``iord == 10`` block, which differs from ``xppm``'s in its
2-delta-x test), 5 and 6: the unlimited fourth-order profile with FV3's ``smt5``/``smt6``
smoothness switches and its edge values.  On the tile-edge lines across the direction (``j == 1 .or. j == npy`` in
``xtp_u``, ``i == 1 .or. i == npx`` in ``ytp_v``) the perturbations of the two cells next to the
edge are zero, as in FV3.  The expressions are FV3's, in FV3's order of operations.

:class:`DirectionalEdges` places FV3's tile-edge index conditions along and across a direction
as GTScript region externals (on :func:`fv3core.stencils.regions.edge_line`); :mod:`fv3core.stencils.d_sw`
uses it too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import (
    __INLINED,
    PARALLEL,
    I,
    J,
    computation,
    horizontal,
    interval,
    region,
)

from fv3core.errors import FV3ConfigError
from fv3core.grid.subdomain import SubdomainSpec
from fv3core.stencils.ppm import pert_ppm_standard_constraint, sign
from fv3core.stencils.regions import edge_line
from stencils.dims import CORNER_DIMS
from stencils.directions import FAR, Direction
from stencils.factory import GridStencilFactory
from stencils.launch import BoundStencil

FloatField = gtscript.Field[np.float64]
FloatFieldIJ = gtscript.Field[gtscript.IJ, np.float64]

# sw_core.F90's constants
R3 = 1.0 / 3.0
P1 = 7.0 / 12.0
P2 = -1.0 / 12.0
C1 = -2.0 / 14.0
C2 = 11.0 / 14.0
C3 = 5.0 / 14.0
S11 = 11.0 / 14.0
S14 = 4.0 / 7.0
S15 = 3.0 / 14.0
NEAR_ZERO = 1.0e-25

#: the ``iord`` values of ``xtp_u``/``ytp_v`` implemented here
SUPPORTED_IORD = (5, 6, 8, 10)

Line = Any  # a GTScript AxisIndex
Span = tuple[Line | None, Line | None] | None
#: the whole axis (a :data:`Span`); ``None`` is the empty span
WHOLE: Span = (None, None)


def at(ref: Line | None, k: int = 0, n: int = 1) -> Span:
    """The ``n`` points from ``ref + k`` (a :data:`Span`; empty where ``ref`` is None)."""
    return None if ref is None else (ref + k, ref + k + n)


def between(lo: Line | None, hi: Line | None) -> Span:
    """The points ``[lo, hi)``; a None bound is open (the tile edge is not on this rank)."""
    return (lo, hi)


def _axis_bounds(axis: Any, span: tuple[Line | None, Line | None]) -> tuple[Any, Any]:
    lo, hi = span
    return (axis[0] - FAR if lo is None else lo, axis[-1] + FAR if hi is None else hi)


@dataclass(frozen=True)
class DirectionalEdges:
    """FV3's tile-edge lines of one rank's launch along and across ``direction``, as GTScript
    ``AxisIndex`` values (:func:`fv3core.stencils.regions.edge_line`: relative to the
    launch domain's first point for the start edge and its last point for the end edge, so a
    build depends only on the tile edges the rank touches and the launch's halo):
    ``along_start`` is FV3's index 1 along the direction (``i`` for x, ``j`` for y),
    ``along_end`` FV3's ``npx - 1`` (the last cell; FV3's ``npx``, the far edge's face or corner,
    is ``along_end + 1``), ``across_*`` the same across it; None where the rank does not touch
    that tile edge."""

    direction: Direction
    along_start: Line | None
    along_end: Line | None
    across_start: Line | None
    across_end: Line | None

    @classmethod
    def of(cls, spec: SubdomainSpec, origin: tuple[int, ...], domain: tuple[int, ...],
           direction: Direction) -> DirectionalEdges:  # fmt: skip
        def line(axis: int, fortran: int) -> Line | None:
            on = ((spec.on_west, spec.on_east), (spec.on_south, spec.on_north))[axis]
            present = on[0] if fortran > 0 else on[1]
            return edge_line(axis, spec, origin, domain, fortran) if present else None

        a, c = direction.axis, 1 - direction.axis
        return cls(direction, line(a, 1), line(a, -2), line(c, 1), line(c, -2))

    def region(self, prefix: str, along: Span = WHOLE, across: Span = WHOLE) -> dict[str, Any]:
        """Externals ``{prefix}a``, ``{prefix}b``, ``{prefix}c``, ``{prefix}d`` of the rectangle
        ``along`` x ``across`` for ``region[{prefix}a:{prefix}b, {prefix}c:{prefix}d]``; an empty
        span puts the rectangle out of reach."""
        if along is None or across is None:
            bounds: tuple[Any, ...] = (I[0] - FAR, I[0] - FAR + 1, J[0] - FAR, J[0] - FAR + 1)
        else:
            axes = (I, J) if self.direction.axis == 0 else (J, I)
            a, c = _axis_bounds(axes[0], along), _axis_bounds(axes[1], across)
            bounds = (*a, *c) if self.direction.axis == 0 else (*c, *a)
        return dict(zip((f"{prefix}a", f"{prefix}b", f"{prefix}c", f"{prefix}d"), bounds))


def xtp_externals(direction: Direction, edges: DirectionalEdges, iord: int) -> dict[str, Any]:
    """Externals of :func:`xtp_flux` along ``direction``: offsets, ``iord``, and the regions of
    the three cells at each tile edge along it (``b0``-``b2``: FV3's cells 0, 1, 2; ``f2``-``f0``:
    ``npx-2``, ``npx-1``, ``npx``) and of the two cells next to each edge on the tile-edge lines
    across it (``zb1``, ``zb2``, ``zf1``, ``zf2``), where the perturbations are zero."""
    if iord not in SUPPORTED_IORD:
        raise FV3ConfigError(f"xtp_u/ytp_v iord={iord} is not implemented: use one of "
                             f"{SUPPORTED_IORD}")  # fmt: skip
    e = edges
    lines = (at(e.across_start), at(e.across_end, 1))
    ext: dict[str, Any] = {**direction.offsets(), "iord": iord}
    for prefix, span in (
        ("b0", at(e.along_start, -1)), ("b1", at(e.along_start)), ("b2", at(e.along_start, 1)),
        ("f2", at(e.along_end, -1)), ("f1", at(e.along_end)), ("f0", at(e.along_end, 1)),
    ):  # fmt: skip
        ext.update(e.region(prefix, along=span))
    for side, span in (("b", at(e.along_start, -1, 2)), ("f", at(e.along_end, 0, 2))):
        for k, line in enumerate(lines, start=1):
            ext.update(e.region(f"z{side}{k}", along=span, across=line))
    return ext


@gtscript.function
def x0_extrapolation(dxa, dxb, ua, ub):
    """FV3's ``x0L``/``x0R``: half the second-order extrapolation of the wind from the cell
    ``a`` and its neighbour ``b`` away from the edge to the edge beside ``a``."""
    return 0.5 * ((2.0 * dxa + dxb) * ua - dxa * ub) / (dxa + dxb)


@gtscript.function
def edge_extrapolation(dxa, dxb, ua, ub):
    """The ``iord < 8`` form: the whole extrapolation (FV3 halves the sum of two)."""
    return ((2.0 * dxa + dxb) * ua - dxa * ub) / (dxa + dxb)


@gtscript.function
def xtp_huynh_perturbations(um2, um1, u, up1, up2, al, alp1, dmm1, dm, dmp1):
    """``xtp_u`` ``iord == 10``: ``bl``, ``br`` of the interface values ``al``, ``alp1``, zero
    at a 2-delta-x structure (``dm`` and its two neighbours vanish), Lin's modification of
    Huynh's second constraint where the profile is not smooth (``dq`` = forward difference)."""
    bl = al - u
    br = alp1 - u
    if abs(dm) < NEAR_ZERO:
        if abs(dmm1) + abs(dmp1) < NEAR_ZERO:
            bl = 0.0
            br = 0.0
    elif abs(3.0 * (bl + br)) > abs(bl - br):
        pmp_1 = -2.0 * (up1 - u)
        lac_1 = pmp_1 + 1.5 * (up2 - up1)
        bl = min(max(max(0.0, pmp_1), lac_1), max(bl, min(min(0.0, pmp_1), lac_1)))
        pmp_2 = 2.0 * (u - um1)
        lac_2 = pmp_2 - 1.5 * (um1 - um2)
        br = min(max(max(0.0, pmp_2), lac_2), max(br, min(min(0.0, pmp_2), lac_2)))
    return bl, br


@gtscript.function
def xtp_flux(courant, u, dx, rdx):
    """FV3 ``xtp_u`` (along ``DI``/``DJ``; ``ytp_v`` along j): the upwind PPM value of ``u`` at
    the face between cells ``-DI`` and 0 for the Courant number ``courant`` (a length: divided by
    the upwind cell's ``dx``)."""
    from __externals__ import (
        DI,
        DI2,
        DJ,
        DJ2,
        b0a,
        b0b,
        b0c,
        b0d,
        b1a,
        b1b,
        b1c,
        b1d,
        b2a,
        b2b,
        b2c,
        b2d,
        f0a,
        f0b,
        f0c,
        f0d,
        f1a,
        f1b,
        f1c,
        f1d,
        f2a,
        f2b,
        f2c,
        f2d,
        iord,
        zb1a,
        zb1b,
        zb1c,
        zb1d,
        zb2a,
        zb2b,
        zb2c,
        zb2d,
        zf1a,
        zf1b,
        zf1c,
        zf1d,
        zf2a,
        zf2b,
        zf2c,
        zf2d,
    )  # fmt: skip

    um2 = u[-DI2, -DJ2, 0]
    um1 = u[-DI, -DJ, 0]
    up1 = u[DI, DJ, 0]
    up2 = u[DI2, DJ2, 0]
    if __INLINED(iord >= 8):
        xt = 0.25 * (up1 - um1)
        dm = sign(min(min(abs(xt), max(max(um1, u), up1) - u), u - min(min(um1, u), up1)), xt)
        dmm1 = dm[-DI, -DJ, 0]
        dmp1 = dm[DI, DJ, 0]
        al = 0.5 * (um1 + u) + R3 * (dmm1 - dm)
        alp1 = al[DI, DJ, 0]
        if __INLINED(iord == 10):
            bl, br = xtp_huynh_perturbations(um2, um1, u, up1, up2, al, alp1, dmm1, dm, dmp1)
        else:
            xt = 2.0 * dm
            bl = -sign(min(abs(xt), abs(al - u)), xt)
            br = sign(min(abs(xt), abs(alp1 - u)), xt)
        # the start edge: FV3's cells 2, 1, 0 (is == 1)
        with horizontal(region[b2a:b2b, b2c:b2d]):
            br = alp1 - u
            bl = S15 * um1 + S11 * u - S14 * dm - u
        with horizontal(region[b1a:b1b, b1c:b1d]):
            br = S15 * u + S11 * up1 - S14 * dmp1 - u
            bl = (x0_extrapolation(dx[-DI, -DJ], dx[-DI2, -DJ2], um1, um2)
                  + x0_extrapolation(dx, dx[DI, DJ], u, up1) - u)  # fmt: skip
        with horizontal(region[b0a:b0b, b0c:b0d]):
            bl = S14 * dmm1 - S11 * (u - um1)
            br = (x0_extrapolation(dx, dx[-DI, -DJ], u, um1)
                  + x0_extrapolation(dx[DI, DJ], dx[DI2, DJ2], up1, up2) - u)  # fmt: skip
        # the end edge: FV3's cells npx-2, npx-1, npx (ie + 1 == npx)
        with horizontal(region[f2a:f2b, f2c:f2d]):
            bl = al - u
            br = S15 * up1 + S11 * u + S14 * dm - u
        with horizontal(region[f1a:f1b, f1c:f1d]):
            bl = S15 * u + S11 * um1 + S14 * dmm1 - u
            br = (x0_extrapolation(dx, dx[-DI, -DJ], u, um1)
                  + x0_extrapolation(dx[DI, DJ], dx[DI2, DJ2], up1, up2) - u)  # fmt: skip
        with horizontal(region[f0a:f0b, f0c:f0d]):
            br = S11 * (up1 - u) - S14 * dmp1
            bl = (x0_extrapolation(dx[-DI, -DJ], dx[-DI2, -DJ2], um1, um2)
                  + x0_extrapolation(dx, dx[DI, DJ], u, up1) - u)  # fmt: skip
        with horizontal(region[zb1a:zb1b, zb1c:zb1d], region[zb2a:zb2b, zb2c:zb2d],
                        region[zf1a:zf1b, zf1c:zf1d], region[zf2a:zf2b, zf2c:zf2d]):  # fmt: skip
            bl = 0.0
            br = 0.0
        with horizontal(region[b2a:b2b, b2c:b2d], region[f2a:f2b, f2c:f2d]):
            bl, br = pert_ppm_standard_constraint(bl, br)
        if courant > 0.0:
            cfl = courant * rdx[-DI, -DJ]
            flux = um1 + (1.0 - cfl) * (br[-DI, -DJ, 0] - cfl * (bl[-DI, -DJ, 0] + br[-DI, -DJ, 0]))
        else:
            cfl = courant * rdx
            flux = u + (1.0 + cfl) * (bl + cfl * (bl + br))
    else:
        al = P1 * (um1 + u) + P2 * (um2 + up1)
        alp1 = al[DI, DJ, 0]
        bl = al - u
        br = alp1 - u
        with horizontal(region[b2a:b2b, b2c:b2d]):
            bl = C3 * um1 + C2 * u + C1 * up1 - u
        with horizontal(region[b1a:b1b, b1c:b1d]):
            br = C3 * u + C2 * up1 + C1 * up2 - u
            bl = 0.5 * (edge_extrapolation(dx[-DI, -DJ], dx[-DI2, -DJ2], um1, um2)
                        + edge_extrapolation(dx, dx[DI, DJ], u, up1)) - u  # fmt: skip
        with horizontal(region[b0a:b0b, b0c:b0d]):
            bl = C1 * um2 + C2 * um1 + C3 * u - u
            br = 0.5 * (edge_extrapolation(dx, dx[-DI, -DJ], u, um1)
                        + edge_extrapolation(dx[DI, DJ], dx[DI2, DJ2], up1, up2)) - u  # fmt: skip
        with horizontal(region[f2a:f2b, f2c:f2d]):
            br = C1 * um1 + C2 * u + C3 * up1 - u
        with horizontal(region[f1a:f1b, f1c:f1d]):
            bl = C1 * um2 + C2 * um1 + C3 * u - u
            br = 0.5 * (edge_extrapolation(dx, dx[-DI, -DJ], u, um1)
                        + edge_extrapolation(dx[DI, DJ], dx[DI2, DJ2], up1, up2)) - u  # fmt: skip
        with horizontal(region[f0a:f0b, f0c:f0d]):
            bl = 0.5 * (edge_extrapolation(dx[-DI, -DJ], dx[-DI2, -DJ2], um1, um2)
                        + edge_extrapolation(dx, dx[DI, DJ], u, up1)) - u  # fmt: skip
            br = C3 * u + C2 * up1 + C1 * up2 - u
        with horizontal(region[zb1a:zb1b, zb1c:zb1d], region[zb2a:zb2b, zb2c:zb2d],
                        region[zf1a:zf1b, zf1c:zf1d], region[zf2a:zf2b, zf2c:zf2d]):  # fmt: skip
            bl = 0.0
            br = 0.0
        b0 = bl + br
        if __INLINED(iord == 5):
            smt = 1.0 if bl * br < 0.0 else 0.0
        else:
            smt = 1.0 if 3.0 * abs(b0) < abs(bl - br) else 0.0
            with horizontal(region[b0a:b0b, b0c:b0d], region[b1a:b1b, b1c:b1d],
                            region[f1a:f1b, f1c:f1d], region[f0a:f0b, f0c:f0d]):  # fmt: skip
                smt = 1.0 if bl * br < 0.0 else 0.0
        if courant > 0.0:
            cfl = courant * rdx[-DI, -DJ]
            fx0 = (1.0 - cfl) * (br[-DI, -DJ, 0] - cfl * b0[-DI, -DJ, 0])
            flux = um1
        else:
            cfl = courant * rdx
            fx0 = (1.0 + cfl) * (bl + cfl * b0)
            flux = u
        if smt[-DI, -DJ, 0] > 0.5 or smt > 0.5:
            flux = flux + fx0
    return flux


def xtp_flux_stencil(courant: FloatField, u: FloatField, dx: FloatFieldIJ, rdx: FloatFieldIJ,
                     flux: FloatField):  # fmt: skip
    """``flux`` = :func:`xtp_flux` on the cell corners (FV3 ``xtp_u``/``ytp_v`` on their own)."""
    with computation(PARALLEL), interval(...):
        flux = xtp_flux(courant, u, dx, rdx)


class WindCornerFlux:
    """Equivalent of FV3 subroutines ``xtp_u`` (``direction`` X: ``u`` along i) and ``ytp_v``
    (Y: ``v`` along j), ``iord`` = FV3's ``hord_mt`` (5, 6, 8 or 10), for one rank.

    :meth:`bind` makes one launch computing ``flux`` on the cell corners of the compute domain
    (FV3 ``flux(is:ie+1, js:je+1)``) from ``courant`` (FV3's ``c``: ``ub``/``vb``, m) and the wind
    (``u`` on the y-faces, (nx+6, ny+7, nz); ``v`` on the x-faces, (nx+7, ny+6, nz)); ``grid``
    supplies ``dx``/``rdx`` (x) or ``dy``/``rdy`` (y)
    (:class:`fv3core.grid.storages.GridStorages`)."""

    def __init__(self, factory: GridStencilFactory, grid: Any, spec: SubdomainSpec,
                 direction: Direction, iord: int) -> None:  # fmt: skip
        if spec.n_halo != 3:
            raise FV3ConfigError(f"n_halo={spec.n_halo}: FV3's xtp_u/ytp_v need n_halo = 3")
        self.direction = direction
        origin, domain = factory.indexing.bounds(CORNER_DIMS)
        edges = DirectionalEdges.of(spec, origin, domain, direction)
        self._stencil = factory.from_dims(
            xtp_flux_stencil, CORNER_DIMS, externals=xtp_externals(direction, edges, iord),
            name=f"{'xtp_u' if direction.axis == 0 else 'ytp_v'}",
        )  # fmt: skip
        self._dx = grid.dx if direction.axis == 0 else grid.dy
        self._rdx = grid.rdx if direction.axis == 0 else grid.rdy

    def bind(self, courant: Any, wind: Any, flux: Any) -> BoundStencil:
        """The launch of ``flux`` from ``courant`` and ``wind`` (fields held, not copied)."""
        return self._stencil.bind(courant=courant, u=wind, dx=self._dx, rdx=self._rdx, flux=flux)

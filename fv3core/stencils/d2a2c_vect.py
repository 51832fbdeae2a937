"""FV3 ``d2a2c_vect`` (``sw_core.F90``; cubed sphere, ``grid_type = 0``, ``dord4 = .true.``)
in GTScript: from the D-grid winds ``u``, ``v`` the A-grid contravariant winds ``ua``, ``va``, the
C-grid covariant winds ``uc``, ``vc`` and their contravariant components ``ut``, ``vt``, 4th
order with FV3's tile-edge and cube-corner treatment (:class:`DGridToCGridWinds`).

Also the pieces :mod:`fv3core.stencils.c_sw` shares: FV3's tile-global index conditions
as region externals of one rank's stencil (:class:`IndexRegions`), and FV3's corner fills as
point copies on flat indices (:class:`CornerFills`).

FV3's index conditions come in two kinds, and both are kept as FV3 writes them: conditions on
the tile-global index of the point (``j == 1``, ``i <= npt - 1``) hold wherever that index lies
in the rank's range, also for a rank that does not touch the tile edge (``edge=None`` of
:meth:`IndexRegions.span`); conditions on the rank (``is == 1``, ``sw_corner``) hold only on
a rank that touches the tile edge (``edge="start"``/``"end"``).  For ranks at least 6 cells away
from every tile edge they do not touch, the two kinds select the same points.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
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
from fv3core.grid.storages import GridStorages
from fv3core.grid.subdomain import SubdomainSpec
from stencils.dims import CELL_DIMS, face_dims
from stencils.directions import DIRECTIONS, FAR, Direction, X, Y
from stencils.factory import GridStencilFactory
from stencils.launch import Launch
from stencils.storage import zeros

FloatField = gtscript.Field[np.float64]
FloatFieldIJ = gtscript.Field[gtscript.IJ, np.float64]

#: FV3's ``big_number`` (double precision): the D-grid-to-cell winds where FV3 computes none
BIG_NUMBER = 1.0e30
#: FV3's 4-point Lagrange interpolation weights (``a1``, ``a2``)
A1, A2 = 0.5625, -0.0625
#: FV3's one-sided 3-point weights at the tile edges (``c1``, ``c2``, ``c3``)
C1, C2, C3 = -2.0 / 14.0, 11.0 / 14.0, 5.0 / 14.0
#: FV3's ``npt``: cells next to a tile edge that d2a2c_vect averages with two points
NPT = 4
#: region bounds further than this from a stencil's compute domain are placed out of reach, so
#: ranks whose regions differ only out there share a build
MARGIN = 8


# --------------------------------------------------------------------------------------------
# FV3's index conditions as region externals


class IndexRegions:
    """FV3's tile-global indices as GTScript region bounds for one rank's stencil called at
    ``origin`` with ``domain``.

    FV3's index ``k`` (1 = the first cell or face of the tile, ``npx = resolution + 1``) along an
    axis sits at array index ``k - (i0 + 1) + n_halo``.  Bounds near the tile start are given
    relative to the domain start (``I[0] + p``), those near the tile end relative to the domain
    end (``I[-1] + p``), and bounds more than :data:`MARGIN` points outside the domain are placed
    at ``FAR``: a rank's externals then depend on which tile edges it touches, not on its size
    (C12 and C24 tiles share builds)."""

    def __init__(self, spec: SubdomainSpec, origin: Sequence[int], domain: Sequence[int]) -> None:
        self.spec = spec
        self.origin = tuple(origin)
        self.domain = tuple(domain)
        self.npx = spec.resolution + 1

    @staticmethod
    def _symbol(axis: int) -> Any:
        return I if axis == 0 else J

    def touches(self, axis: int, edge: str) -> bool:
        """Whether the rank touches the tile's ``edge`` (``"start"``: west/south, ``"end"``:
        east/north) along ``axis``."""
        s = self.spec
        if edge not in ("start", "end"):
            raise ValueError(f"edge {edge!r}: use 'start' or 'end'")
        if axis == 0:
            return s.on_west if edge == "start" else s.on_east
        return s.on_south if edge == "start" else s.on_north

    def _out(self, axis: int) -> tuple[Any, Any]:
        a = self._symbol(axis)
        return a[0] - FAR, a[0] - FAR + 1

    def _position(self, axis: int, index: int) -> int:
        lo = self.spec.i0 if axis == 0 else self.spec.j0
        return index - (lo + 1) + self.spec.n_halo - self.origin[axis]

    def bound(self, axis: int, index: int, edge: str | None = None) -> Any:
        """The ``AxisIndex`` of FV3's index ``index`` along ``axis``; with ``edge``, out of reach
        unless the rank touches that tile edge."""
        a = self._symbol(axis)
        if edge is not None and not self.touches(axis, edge):
            return a[0] - FAR
        p, last = self._position(axis, index), self.domain[axis] - 1
        if p < -MARGIN:
            return a[0] - FAR
        if p > last + MARGIN:
            return a[-1] + FAR
        return a[0] + p if 2 * index <= self.npx else a[-1] + (p - last)

    def span(self, axis: int, lo: int | None, hi: int | None, edge: str | None = None) -> tuple:
        """(start, stop) bounds of FV3's indices ``lo..hi`` (inclusive; ``None``: unbounded)
        along ``axis``; with ``edge``, empty unless the rank touches that tile edge."""
        a = self._symbol(axis)
        if edge is not None and not self.touches(axis, edge):
            return self._out(axis)
        last = self.domain[axis] - 1
        p_lo = -2 * FAR if lo is None else self._position(axis, lo)
        p_hi = 2 * FAR if hi is None else self._position(axis, hi + 1)
        if p_lo >= p_hi or p_hi <= -MARGIN or p_lo > last + MARGIN:
            return self._out(axis)
        start = a[0] - FAR if lo is None else self.bound(axis, lo)
        stop = a[-1] + FAR if hi is None else self.bound(axis, hi + 1)
        return start, stop

    def band(self, d: Direction, lo: int | None, hi: int | None, prefix: str,
             edge: str | None = None) -> dict[str, Any]:  # fmt: skip
        """Region externals ``{prefix}a..{prefix}d``: FV3's indices ``lo..hi`` along ``d``
        (:meth:`span`), the whole other axis."""
        along = self.span(d.axis, lo, hi, edge)
        b = self._symbol(1 - d.axis)
        whole = (b[0] - FAR, b[-1] + FAR)
        bounds = (*along, *whole) if d.axis == 0 else (*whole, *along)
        return dict(zip((f"{prefix}a", f"{prefix}b", f"{prefix}c", f"{prefix}d"), bounds))

    def rank_edges(self) -> dict[str, Any]:
        """``i_start``, ``i_end``, ``j_start``, ``j_end``: FV3's index 1 and ``npx - 1`` on a rank
        that touches that tile edge (out of reach otherwise): ``region[i_start, j_start]`` is
        FV3's ``if (sw_corner)`` point (1, 1), ``i_end + 1`` is ``npx``."""
        n = self.npx - 1
        return {
            "i_start": self.bound(0, 1, "start"), "i_end": self.bound(0, n, "end"),
            "j_start": self.bound(1, 1, "start"), "j_end": self.bound(1, n, "end"),
        }  # fmt: skip


def check_subdomain(spec: SubdomainSpec, routine: str) -> None:
    """FV3's routines need the three halo cells and a tile of at least 2 * npt cells."""
    if spec.n_halo != 3:
        raise FV3ConfigError(f"{routine}: n_halo={spec.n_halo}; FV3's routines need n_halo = 3")
    if spec.resolution < 2 * NPT:
        raise FV3ConfigError(f"{routine}: C{spec.resolution} is below FV3's smallest tile "
                             f"(2 npt = {2 * NPT} cells)")  # fmt: skip


def across_offsets(d: Direction) -> dict[str, int]:
    """``AI, AJ`` (one step across ``d``) and ``A2I, A2J`` (two steps)."""
    o = d.across.offsets()
    return {"AI": o["DI"], "AJ": o["DJ"], "A2I": o["DI2"], "A2J": o["DJ2"]}


# --------------------------------------------------------------------------------------------
# FV3's corner fills: point copies on flat indices


@dataclass(frozen=True)
class PointCopy:
    """``dst(di, dj) = sign * src(si, sj)`` at FV3's tile-global indices of one rank."""

    dst: str
    di: int
    dj: int
    src: str
    si: int
    sj: int
    sign: float = 1.0


class CornerFills:
    """A set of FV3's cube-corner point copies (``fill2_4corners``, d2a2c_vect's corner
    blocks), all levels, run as one NumPy gather/scatter per (destination, source) buffer pair.

    FV3 runs each set point by point; here all sources are read before any destination is
    written, which is the same because no point of a set is both (checked)."""

    def __init__(self, spec: SubdomainSpec, copies: Sequence[PointCopy]) -> None:
        dsts = {(c.dst, c.di, c.dj) for c in copies}
        both = dsts & {(c.src, c.si, c.sj) for c in copies}
        if both:
            raise ValueError(f"corner fill reads points it writes: {sorted(both)}")
        if len(dsts) != len(copies):
            raise ValueError("corner fill writes a point twice")
        self.spec = spec
        self.copies = tuple(copies)

    def _index(self, i: int, j: int) -> tuple[int, int]:
        h = self.spec.n_halo
        return i - (self.spec.i0 + 1) + h, j - (self.spec.j0 + 1) + h

    def bind(self, **fields: Any) -> Launch:
        """The copies on these storages (one per field name the copies use)."""
        if not self.copies:
            return _nothing
        names = sorted({c.dst for c in self.copies} | {c.src for c in self.copies})
        missing = [n for n in names if n not in fields]
        if missing:
            raise ValueError(f"corner fill needs the fields {missing}")
        if not all(isinstance(fields[n], np.ndarray) for n in names):
            return partial(_indexed_copies, fields, self._rows())
        from stencils.storage import flat_locations

        buffers, located = flat_locations([(n, fields[n]) for n in names])
        where = dict(zip(names, located))
        groups: dict[tuple[int, int, float], tuple[list, list]] = defaultdict(lambda: ([], []))
        for c in self.copies:
            (bd, xd), (bs, xs) = where[c.dst], where[c.src]
            dst, src = groups[(bd, bs, c.sign)]
            dst.append(xd[self._index(c.di, c.dj)])
            src.append(xs[self._index(c.si, c.sj)])
        return FlatPointCopies([
            (buffers[bd], np.concatenate(dst).ravel(), buffers[bs], np.concatenate(src).ravel(),
             sign)
            for (bd, bs, sign), (dst, src) in groups.items()
        ], [(fields[dst], di, fields[src], si, sign)
            for dst, di, src, si, sign in self._rows()])  # fmt: skip

    def _rows(self) -> list[tuple[str, tuple[int, int], str, tuple[int, int], float]]:
        return [(c.dst, self._index(c.di, c.dj), c.src, self._index(c.si, c.sj), c.sign)
                for c in self.copies]  # fmt: skip


def _nothing() -> None:
    return None


def _indexed_copies(fields: Mapping[str, Any], rows: list) -> None:
    """The copies on storages that are not NumPy arrays (e.g. cupy): gather, then scatter."""
    values = [fields[src][si[0], si[1]] for _, _, src, si, _ in rows]
    for (dst, di, _, _, sign), value in zip(rows, values):
        fields[dst][di[0], di[1]] = value if sign > 0 else -value


class FlatPointCopies:
    """``dst[d] = sign * src[s]`` for each (dst buffer, indices, src buffer, indices, sign):
    a bound :class:`CornerFills`."""

    def __init__(
        self, parts: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]],
        rows: list[tuple[Any, tuple[int, int], Any, tuple[int, int], float]] | None = None,
    ) -> None:
        self._parts = parts
        self._rows = rows or []

    @property
    def point_copies(self) -> list[list[tuple[Any, tuple[int, int], Any, tuple[int, int], float]]]:
        """The copies as one batch of (dst array, (i, j), src array, (i, j), sign), for tools
        that translate the launch sequence (StencilFlow)."""
        return [self._rows]

    def __call__(self) -> None:
        values = [src[s] if sign > 0 else -src[s] for _, _, src, s, sign in self._parts]
        for (dst, d, _, _, _), value in zip(self._parts, values):
            dst[d] = value


def d2a2c_corner_copies(spec: SubdomainSpec) -> list[PointCopy]:
    """d2a2c_vect's corner blocks (FV3 indices) of the corners this rank has: ``utmp`` from
    ``vtmp`` and back ("A -> C, fix the edges"), ``ua`` from ``va`` and back."""
    n = spec.resolution
    npx = npy = n + 1
    ie, je = npx - 1, npy - 1
    P = PointCopy
    out: list[PointCopy] = []
    sw, se = spec.on_west and spec.on_south, spec.on_east and spec.on_south
    ne, nw = spec.on_east and spec.on_north, spec.on_west and spec.on_north
    if sw:
        out += [P("utmp", i, 0, "vtmp", 0, 1 - i, -1.0) for i in range(-2, 1)]
        out += [P("vtmp", 0, j, "utmp", 1 - j, 0, -1.0) for j in range(-2, 1)]
        out += [P("ua", -1, 0, "va", 0, 2, -1.0), P("ua", 0, 0, "va", 0, 1, -1.0),
                P("va", 0, -1, "ua", 2, 0, -1.0), P("va", 0, 0, "ua", 1, 0, -1.0)]  # fmt: skip
    if se:
        out += [P("utmp", npx + i, 0, "vtmp", npx, i + 1) for i in range(0, 3)]
        out += [P("vtmp", npx, j, "utmp", ie + j, 0) for j in range(-2, 1)]
        out += [P("ua", npx, 0, "va", npx, 1), P("ua", npx + 1, 0, "va", npx, 2),
                P("va", npx, 0, "ua", npx - 1, 0), P("va", npx, -1, "ua", npx - 2, 0)]  # fmt: skip
    if ne:
        out += [P("utmp", npx + i, npy, "vtmp", npx, je - i, -1.0) for i in range(0, 3)]
        out += [P("vtmp", npx, npy + j, "utmp", ie - j, npy, -1.0) for j in range(0, 3)]
        out += [P("ua", npx, npy, "va", npx, npy - 1, -1.0),
                P("ua", npx + 1, npy, "va", npx, npy - 2, -1.0),
                P("va", npx, npy, "ua", npx - 1, npy, -1.0),
                P("va", npx, npy + 1, "ua", npx - 2, npy, -1.0)]  # fmt: skip
    if nw:
        out += [P("utmp", i, npy, "vtmp", 0, je + i) for i in range(-2, 1)]
        out += [P("vtmp", 0, npy + j, "utmp", j + 1, npy) for j in range(0, 3)]
        out += [P("ua", -1, npy, "va", 0, npy - 2), P("ua", 0, npy, "va", 0, npy - 1),
                P("va", 0, npy, "ua", 1, npy), P("va", 0, npy + 1, "ua", 2, npy)]  # fmt: skip
    return out


# --------------------------------------------------------------------------------------------
# GTScript


@gtscript.function
def contravariant(a, b, cosa, rsin):
    """FV3's contravariant component ``(a - b cosa) rsin`` of the covariant pair (a, b)."""
    return (a - b * cosa) * rsin


@gtscript.function
def lagrange4(qm1, q, qp1, qp2):
    """FV3's 4-point Lagrange interpolation to the midpoint between ``q`` and ``qp1``."""
    return A2 * (qm1 + qp2) + A1 * (q + qp1)


@gtscript.function
def edge_interpolate4(q0, q1, q2, q3, d0, d1, d2, d3):
    """FV3 ``edge_interpolate4``: the value at the edge between the 2nd and 3rd of four cells
    (values ``q``, widths ``d``), the mean of the two one-sided extrapolations."""
    t1 = d0 + d1
    t2 = d2 + d3
    return 0.5 * (((t1 + d1) * q1 - d1 * q0) / t1 + ((t2 + d2) * q2 - d2 * q3) / t2)


def d2a2c_cell_wind(w: FloatField, tmp: FloatField):
    """d2a2c_vect's ``utmp`` (x: from ``u``) / ``vtmp`` (y: from ``v``): the D-grid wind at the
    cell centre, interpolated along the face (across the direction): FV3's 4-point formula on
    the rank's compute cells +- 1 across (band ``i*``), two points where FV3's i or j is within
    ``npt - 1`` of a tile edge (``i < xlo``, ``i >= xhi``, ``j < ylo``, ``j >= yhi``),
    ``big_number`` elsewhere."""
    from __externals__ import A2I, A2J, AI, AJ, ia, ib, ic, id, xhi, xlo, yhi, ylo

    with computation(PARALLEL), interval(...):
        tmp = BIG_NUMBER
        with horizontal(region[ia:ib, ic:id]):
            tmp = lagrange4(w[-AI, -AJ, 0], w, w[AI, AJ, 0], w[A2I, A2J, 0])
        with horizontal(region[:xlo, :], region[xhi:, :], region[:, :ylo], region[:, yhi:]):
            tmp = 0.5 * (w + w[AI, AJ, 0])


def d2a2c_agrid_winds(
    utmp: FloatField,
    vtmp: FloatField,
    cosa_s: FloatFieldIJ,
    rsin2: FloatFieldIJ,
    ua: FloatField,
    va: FloatField,
):
    """d2a2c_vect's contravariant A-grid winds from the cell-centre covariant ones."""
    with computation(PARALLEL), interval(...):
        ua = contravariant(utmp, vtmp, cosa_s, rsin2)
        va = contravariant(vtmp, utmp, cosa_s, rsin2)


def d2a2c_cgrid_wind(
    tmp: FloatField,
    wind_a: FloatField,
    w_across: FloatField,
    dxa: FloatFieldIJ,
    cosa: FloatFieldIJ,
    rsin: FloatFieldIJ,
    sin_near: FloatFieldIJ,
    sin_far: FloatFieldIJ,
    c: FloatField,
    ct: FloatField,
):
    """d2a2c_vect's C-grid wind ``c`` (``uc``/``vc``) and its contravariant component ``ct``
    (``ut``/``vt``) on the faces crossed along ``DI``/``DJ``: the 4-point interpolation of the
    corner-filled ``tmp`` (``utmp``/``vtmp``) in band ``i*``; at FV3's faces 0, 2, npx - 1,
    npx + 1 (band ``s*`` is face 1, ``e*`` face npx) the one-sided 3-point formulas, at faces 1
    and npx ``edge_interpolate4`` of the A-grid ``wind_a`` (``ua``/``va``) and the upwind
    cell's ``sin_sg``; ``w_across`` is the other D-grid wind on these faces (``v``/``u``).
    ``reversed_ghost``: FV3 sums face npx + 1 from the tile side (its x sweep) rather than as
    face 2 (its y sweep)."""
    from __externals__ import (
        DI,
        DI2,
        DJ,
        DJ2,
        ea,
        eb,
        ec,
        ed,
        ia,
        ib,
        ic,
        id,
        reversed_ghost,
        sa,
        sb,
        sc,
        sd,
    )

    with computation(PARALLEL), interval(...):
        with horizontal(region[ia:ib, ic:id]):
            c = lagrange4(tmp[-DI2, -DJ2, 0], tmp[-DI, -DJ, 0], tmp, tmp[DI, DJ, 0])
            ct = contravariant(c, w_across, cosa, rsin)
        with horizontal(region[sa - DI : sb - DI, sc - DJ : sd - DJ],
                        region[ea - DI : eb - DI, ec - DJ : ed - DJ]):  # fmt: skip
            c = C1 * tmp[-DI2, -DJ2, 0] + C2 * tmp[-DI, -DJ, 0] + C3 * tmp
            ct = contravariant(c, w_across, cosa, rsin)
        with horizontal(region[sa:sb, sc:sd], region[ea:eb, ec:ed]):
            ct = edge_interpolate4(
                wind_a[-DI2, -DJ2, 0], wind_a[-DI, -DJ, 0], wind_a, wind_a[DI, DJ, 0],
                dxa[-DI2, -DJ2], dxa[-DI, -DJ], dxa, dxa[DI, DJ],
            )  # fmt: skip
            c = ct * sin_far[-DI, -DJ] if ct > 0.0 else ct * sin_near
        with horizontal(region[sa + DI : sb + DI, sc + DJ : sd + DJ]):
            c = C1 * tmp[DI, DJ, 0] + C2 * tmp + C3 * tmp[-DI, -DJ, 0]
            ct = contravariant(c, w_across, cosa, rsin)
        with horizontal(region[ea + DI : eb + DI, ec + DJ : ed + DJ]):
            if __INLINED(reversed_ghost):
                c = C3 * tmp[-DI, -DJ, 0] + C2 * tmp + C1 * tmp[DI, DJ, 0]
            else:
                c = C1 * tmp[DI, DJ, 0] + C2 * tmp + C3 * tmp[-DI, -DJ, 0]
            ct = contravariant(c, w_across, cosa, rsin)


# --------------------------------------------------------------------------------------------
# the routine


def _cell_wind_externals(d: Direction, regions: IndexRegions) -> dict[str, Any]:
    s, npx = regions.spec, regions.npx
    lo, hi = (s.j0, s.j1 + 1) if d.axis == 0 else (s.i0, s.i1 + 1)  # FV3 js-1..je+1 across
    two_point = {}
    # FV3's two-point rows: index <= npt - 1 and >= npx - npt + 1
    for axis, name in ((0, "x"), (1, "y")):
        two_point[f"{name}lo"] = regions.bound(axis, NPT)
        two_point[f"{name}hi"] = regions.bound(axis, npx - NPT + 1)
    return {**across_offsets(d), **regions.band(d.across, lo, hi, "i"), **two_point}


def _cgrid_wind_externals(d: Direction, regions: IndexRegions) -> dict[str, Any]:
    npx = regions.npx
    if d.axis == 0:
        # FV3's x sweep: 4-point faces max(3, is-1)..min(npx-2, ie+2); the edge faces only on
        # a rank with is == 1 / ie + 1 == npx
        interior = regions.band(d, 3, npx - 2, "i")
        edges = {**regions.band(d, 1, 1, "s", "start"), **regions.band(d, npx, npx, "e", "end")}
    else:
        # FV3's y sweep: the faces by their tile-global j alone
        interior = regions.band(d, None, None, "i")
        edges = {**regions.band(d, 1, 1, "s"), **regions.band(d, npx, npx, "e")}
    return {**d.offsets(), **interior, **edges, "reversed_ghost": d.axis == 0}


class DGridToCGridWinds:
    """Equivalent of FV3 subroutine ``d2a2c_vect`` (cubed sphere, ``dord4 = .true.``) for one
    rank.

    :meth:`bind` returns six steps: ``utmp`` and ``vtmp`` (two stencils), ``ua``, ``va`` on the
    compute cells + 2, FV3's corner blocks ("A -> C, fix the edges" of ``utmp``/``vtmp`` and the
    ``ua``/``va`` corners; a NumPy point copy, :class:`CornerFills`), then ``uc``, ``ut`` on the
    x-faces + 1 and ``vc``, ``vt`` on the y-faces + 1 (one stencil each, written once).  Nothing
    differs from FV3; the points FV3 does not write stay untouched.

    FV3's x and y sweeps are not mirror images and are built as FV3 has them: the x edge
    formulas run on a rank with ``is == 1`` (``ie + 1 == npx``), the y ones by the tile-global
    ``j``; FV3 sums the 3-point formula of face ``npx + 1`` in opposite orders in x and y."""

    def __init__(
        self, factory: GridStencilFactory, grid: GridStorages, spec: SubdomainSpec
    ) -> None:
        check_subdomain(spec, "d2a2c_vect")
        self.spec, self.grid = spec, grid
        indexing = factory.indexing
        if (indexing.nx, indexing.ny, indexing.n_halo) != (spec.nx, spec.ny, spec.n_halo):
            raise FV3ConfigError(f"d2a2c_vect: the factory's subdomain {indexing} is not {spec}")
        cells = indexing.domain_of(CELL_DIMS)
        #: d2a2c_vect's ``utmp``, ``vtmp`` (cell centres, data domain)
        self.utmp = zeros(cells, factory.backend)
        self.vtmp = zeros(cells, factory.backend)
        h = spec.n_halo
        self._tmp = {}
        for d in DIRECTIONS:
            bounds = indexing.bounds(CELL_DIMS, h)
            ext = _cell_wind_externals(d, IndexRegions(spec, *bounds))
            self._tmp[d] = factory.from_dims(d2a2c_cell_wind, CELL_DIMS, h, externals=ext,
                                             name=f"d2a2c_tmp_{d.name}")  # fmt: skip
        self._agrid = factory.from_dims(d2a2c_agrid_winds, CELL_DIMS, h - 1, name="d2a2c_agrid")
        self._cgrid = {}
        for d in DIRECTIONS:
            bounds = indexing.bounds(face_dims(d), 1)
            ext = _cgrid_wind_externals(d, IndexRegions(spec, *bounds))
            self._cgrid[d] = factory.from_dims(d2a2c_cgrid_wind, face_dims(d), 1, externals=ext,
                                               name=f"d2a2c_cgrid_{d.name}")  # fmt: skip
        self._corners = CornerFills(spec, d2a2c_corner_copies(spec))

    def bind(
        self, u: Any, v: Any, ua: Any, va: Any, uc: Any, vc: Any, ut: Any, vt: Any
    ) -> list[Launch]:
        """The steps on these storages (FV3's names and staggering: ``u`` y-faces, ``v``
        x-faces, ``ua``, ``va``, ``ut``, ``vt`` cells, ``uc`` x-faces, ``vc`` y-faces); ``ua``,
        ``va`` over the compute cells + 2 (corner points included), ``uc``/``ut`` over the
        x-faces + 1, ``vc``/``vt`` over the y-faces + 1."""
        g = self.grid
        wind = {X: u, Y: v}
        tmp = {X: self.utmp, Y: self.vtmp}
        across = {X: v, Y: u}
        a_wind, c_wind, ct_wind = {X: ua, Y: va}, {X: uc, Y: vc}, {X: ut, Y: vt}
        metric = {
            X: dict(dxa=g.dxa, cosa=g.cosa_u, rsin=g.rsin_u, sin_near=g.sin_sg1, sin_far=g.sin_sg3),
            Y: dict(dxa=g.dya, cosa=g.cosa_v, rsin=g.rsin_v, sin_near=g.sin_sg2, sin_far=g.sin_sg4),
        }  # fmt: skip
        return [
            *(self._tmp[d].bind(w=wind[d], tmp=tmp[d]) for d in DIRECTIONS),
            self._agrid.bind(utmp=self.utmp, vtmp=self.vtmp, cosa_s=g.cosa_s, rsin2=g.rsin2,
                             ua=ua, va=va),
            self._corners.bind(utmp=self.utmp, vtmp=self.vtmp, ua=ua, va=va),
            *(self._cgrid[d].bind(tmp=tmp[d], wind_a=a_wind[d], w_across=across[d],
                                  c=c_wind[d], ct=ct_wind[d], **metric[d])
              for d in DIRECTIONS),
        ]  # fmt: skip

"""FV3 ``a2b_edge.F90`` ``a2b_ord4`` on the cubed sphere (``grid_type < 3``): a cell-centre
(A-grid) scalar interpolated to the cell corners (B grid), 4th order, with FV3's tile-edge and
cube-vertex treatment, in GTScript (:class:`AGridToBGrid`).

FV3 builds the corner value in four steps: ``qx`` (``qy``), the PPM volume-mean value of q at the
faces crossed along x (y), one-sided next to the tile edges; ``qxx`` (``qyy``), the 4-point
Lagrange interpolation of ``qx`` along y (``qy`` along x) to the corners, compact cubic next to
the edges; the corner value ``0.5 (qxx + qyy)``; on the tile-edge lines the edge-weighted mean of
the two-cell averages across the edge (``edge_w``, ``edge_e``, ``edge_s``, ``edge_n``), and at the
cube vertices the mean of three linear extrapolations along great circles (``extrap_corner``).

Here that is three launches: :func:`a2b_directional` built for x and for y from one definition
(``qx`` and its edge rows are temporaries; the output ``qxx`` also carries FV3's corner values on
the tile edges the interpolation runs across, and, in the x build, the cube-vertex values), then
:func:`a2b_combine`, which writes the corners ``is..ie+1, js..je+1`` of ``qout`` -- or of ``qin``
itself for FV3's ``replace = .true.``, since the combine reads only the two work fields.

The extrapolation weights ``x1 / (x2 - x1)`` of ``extrap_corner`` are constants of the grid:
computed once in NumPy (:func:`corner_extrapolation_weights`) from the great-circle distances of
``grid``/``agrid`` with the C library's ``sin``, ``cos``, ``asin`` (as
:mod:`fv3core.grid.metric_terms`, what gfortran calls); the stencil evaluates
``q1 + w (q1 - q2)``, FV3's expression, so the corner values keep FV3's rounding.
"""

from __future__ import annotations

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

from fv3core.grid.metric_terms import great_circle_dist
from fv3core.grid.storages import GridStorages
from fv3core.grid.subdomain import SubdomainSpec
from fv3core.stencils.regions import line_band, tile_edges
from stencils.dims import X_INTERFACE_DIM, Y_INTERFACE_DIM, Z_DIM
from stencils.directions import Direction, X, Y
from stencils.factory import GridStencilFactory
from stencils.launch import Launch
from stencils.storage import from_numpy, zeros

FloatField = gtscript.Field[np.float64]
FloatFieldIJ = gtscript.Field[gtscript.IJ, np.float64]

R3 = 1.0 / 3.0
# 4-point Lagrange interpolation
A1, A2 = 0.5625, -0.0625
# PPM volume mean
B1, B2 = 7.0 / 12.0, -1.0 / 12.0
# compact 4-point cubic
C1, C2 = 2.0 / 3.0, -1.0 / 6.0


@gtscript.function
def ppm_volume_mean(qin):
    """FV3's interior ``qx``: the PPM volume-mean value at the face between the cells -D, 0."""
    from __externals__ import DI, DI2, DJ, DJ2

    return B2 * (qin[-DI2, -DJ2, 0] + qin[DI, DJ, 0]) + B1 * (qin[-DI, -DJ, 0] + qin)


@gtscript.function
def one_sided_extrapolation(q_near, q_far, g):
    """One side of FV3's tile-edge ``qx``: the edge value extrapolated from two cells of one
    tile (``g``: the ratio of their widths, far / near)."""
    return ((2.0 + g) * q_near - q_far) / (1.0 + g)


@gtscript.function
def tile_edge_face_value(qin, da):
    """FV3's ``qx`` on a tile edge: the mean of the one-sided extrapolations from both tiles
    (the face between the cells -D and 0); FV3 writes the west and east variants with the sides
    in the other order, the same sum."""
    from __externals__ import DI, DI2, DJ, DJ2

    g_plus = da[DI, DJ] / da
    g_minus = da[-DI2, -DJ2] / da[-DI, -DJ]
    return 0.5 * (one_sided_extrapolation(qin, qin[DI, DJ, 0], g_plus)
                  + one_sided_extrapolation(qin[-DI, -DJ, 0], qin[-DI2, -DJ2, 0], g_minus))  # fmt: skip


@gtscript.function
def next_to_edge_face_value(q_adj, q_far, da_adj, da_far, q_edge, q_inner):
    """FV3's ``qx`` one face inside a tile edge, from the cells beside it (``q_adj`` the one at
    the edge), the edge face value and the next interior face value."""
    g = da_far / da_adj
    return (3.0 * (g * q_adj + q_far) - (g * q_edge + q_inner)) / (2.0 + 2.0 * g)


@gtscript.function
def extrapolated(q_near, q_far, weight):
    """FV3 ``extrap_corner``: ``q_near`` extrapolated linearly along the great circle from
    ``q_far`` to the cube vertex, ``weight = x1 / (x2 - x1)`` of their distances to it."""
    return q_near + weight * (q_near - q_far)


def a2b_directional(
    qin: FloatField,
    da: FloatFieldIJ,
    da_across: FloatFieldIJ,
    edge_start: FloatFieldIJ,
    edge_end: FloatFieldIJ,
    w1: FloatFieldIJ,
    w2: FloatFieldIJ,
    w3: FloatFieldIJ,
    qdd: FloatField,
):
    """FV3's ``qx`` (offsets ``DI``, ``DJ``: x; ``qy`` for y) and ``qxx`` (``qyy``) of
    ``a2b_ord4``: ``qdd`` on the corners is the 4th-order interpolation, along the other
    direction (``CI``, ``CJ``), of the face values ``qd`` (a temporary) of ``qin``.

    ``da``/``da_across``: FV3's ``dxa``/``dya`` (x build) or ``dya``/``dxa`` (y build).
    Regions (FV3 index lines): ``qd`` uses the tile-edge formulas on the lines 1, 2, npx-1, npx
    along D (``e0``, ``e1``, ``f1``, ``f0``); ``qdd`` the compact cubic on the lines 2, npy-1
    across (``g1``, ``h1``), and on the tile-edge lines across (``g0``, ``h0``) it holds FV3's
    corner value there, ``edge_start`` (line 1) / ``edge_end`` (line npy) weighting the two-cell
    averages across the edge.  ``cube_corners``: also the cube-vertex values (the three
    extrapolations, weights ``w1, w2, w3`` in FV3's order at each vertex)."""
    from __externals__ import (
        CI,
        CI2,
        CJ,
        CJ2,
        DI,
        DJ,
        cube_corners,
        e0a,
        e0b,
        e0c,
        e0d,
        e1a,
        e1b,
        e1c,
        e1d,
        f0a,
        f0b,
        f0c,
        f0d,
        f1a,
        f1b,
        f1c,
        f1d,
        g0a,
        g0b,
        g0c,
        g0d,
        g1a,
        g1b,
        g1c,
        g1d,
        h0a,
        h0b,
        h0c,
        h0d,
        h1a,
        h1b,
        h1c,
        h1d,
        i_end,
        i_start,
        j_end,
        j_start,
    )

    with computation(PARALLEL), interval(...):
        # qx: PPM volume mean, FV3's one-sided values on and next to the tile edges along D
        q_inner = ppm_volume_mean(qin)
        q_edge = tile_edge_face_value(qin, da)
        q_edge_before = q_edge[-DI, -DJ, 0]
        q_edge_after = q_edge[DI, DJ, 0]
        q_inner_before = q_inner[-DI, -DJ, 0]
        q_inner_after = q_inner[DI, DJ, 0]
        qd = q_inner
        with horizontal(region[e0a:e0b, e0c:e0d], region[f0a:f0b, f0c:f0d]):
            qd = q_edge
        with horizontal(region[e1a:e1b, e1c:e1d]):
            qd = next_to_edge_face_value(qin[-DI, -DJ, 0], qin, da[-DI, -DJ], da, q_edge_before,
                                         q_inner_after)  # fmt: skip
        with horizontal(region[f1a:f1b, f1c:f1d]):
            qd = next_to_edge_face_value(qin, qin[-DI, -DJ, 0], da, da[-DI, -DJ], q_edge_after,
                                         q_inner_before)  # fmt: skip
        # the corner values on the tile edges across: edge-weighted two-cell averages
        q_mean = (qin[-CI, -CJ, 0] * da_across + qin * da_across[-CI, -CJ]) / (
            da_across[-CI, -CJ] + da_across
        )
        q_mean_before = q_mean[-DI, -DJ, 0]
        corner_on_edge = edge_start * q_mean_before + (1.0 - edge_start) * q_mean
        with horizontal(region[h0a:h0b, h0c:h0d]):
            corner_on_edge = edge_end * q_mean_before + (1.0 - edge_end) * q_mean
        # qxx: 4-point Lagrange along C, the compact cubic next to the tile edges across
        q_lagrange = A2 * (qd[-CI2, -CJ2, 0] + qd[CI, CJ, 0]) + A1 * (qd[-CI, -CJ, 0] + qd)
        edge_before = corner_on_edge[-CI, -CJ, 0]
        edge_after = corner_on_edge[CI, CJ, 0]
        lagrange_before = q_lagrange[-CI, -CJ, 0]
        lagrange_after = q_lagrange[CI, CJ, 0]
        qd_before = qd[-CI, -CJ, 0]
        qdd = q_lagrange
        with horizontal(region[g1a:g1b, g1c:g1d]):
            qdd = C1 * (qd_before + qd) + C2 * (edge_before + lagrange_after)
        with horizontal(region[h1a:h1b, h1c:h1d]):
            qdd = C1 * (qd_before + qd) + C2 * (edge_after + lagrange_before)
        with horizontal(region[g0a:g0b, g0c:g0d], region[h0a:h0b, h0c:h0d]):
            qdd = corner_on_edge
        if __INLINED(cube_corners):
            with horizontal(region[i_start, j_start]):
                qdd = (extrapolated(qin, qin[1, 1, 0], w1)
                       + extrapolated(qin[-1, 0, 0], qin[-2, 1, 0], w2)
                       + extrapolated(qin[0, -1, 0], qin[1, -2, 0], w3)) * R3  # fmt: skip
            with horizontal(region[i_end + 1, j_start]):
                qdd = (extrapolated(qin[-1, 0, 0], qin[-2, 1, 0], w1)
                       + extrapolated(qin[-1, -1, 0], qin[-2, -2, 0], w2)
                       + extrapolated(qin, qin[1, 1, 0], w3)) * R3  # fmt: skip
            with horizontal(region[i_end + 1, j_end + 1]):
                qdd = (extrapolated(qin[-1, -1, 0], qin[-2, -2, 0], w1)
                       + extrapolated(qin[0, -1, 0], qin[1, -2, 0], w2)
                       + extrapolated(qin[-1, 0, 0], qin[-2, 1, 0], w3)) * R3  # fmt: skip
            with horizontal(region[i_start, j_end + 1]):
                qdd = (extrapolated(qin[0, -1, 0], qin[1, -2, 0], w1)
                       + extrapolated(qin[-1, -1, 0], qin[-2, -2, 0], w2)
                       + extrapolated(qin, qin[1, 1, 0], w3)) * R3  # fmt: skip


def a2b_combine(qxx: FloatField, qyy: FloatField, qout: FloatField):
    """FV3's corner values: ``0.5 (qxx + qyy)`` inside the tile, on the tile-edge lines (and at
    the cube vertices) the values :func:`a2b_directional` left in ``qyy`` (west, east lines) and
    ``qxx`` (south, north lines and vertices)."""
    from __externals__ import i_end, i_start, j_end, j_start

    with computation(PARALLEL), interval(...):
        qout = 0.5 * (qxx + qyy)
        with horizontal(region[i_start, :], region[i_end + 1, :]):
            qout = qyy
        with horizontal(region[:, j_start], region[:, j_end + 1]):
            qout = qxx


#: FV3's three extrapolations at each cube vertex, in its order: the (near, far) A-grid cells
#: as offsets from the vertex (corner index (i, j) and cell index (i, j) share an array index);
#: :func:`a2b_directional` writes the same offsets
VERTEX_TERMS: dict[str, tuple[tuple[tuple[int, int], tuple[int, int]], ...]] = {
    "sw": (((0, 0), (1, 1)), ((-1, 0), (-2, 1)), ((0, -1), (1, -2))),
    "se": (((-1, 0), (-2, 1)), ((-1, -1), (-2, -2)), ((0, 0), (1, 1))),
    "ne": (((-1, -1), (-2, -2)), ((0, -1), (1, -2)), ((-1, 0), (-2, 1))),
    "nw": (((0, -1), (1, -2)), ((-1, -1), (-2, -2)), ((0, 0), (1, 1))),
}


def cube_vertices(spec: SubdomainSpec) -> dict[str, tuple[int, int]]:
    """The cube vertices of ``spec``'s rank (FV3's ``sw_corner`` ...) at their array index."""
    h, n = spec.n_halo, spec.resolution
    west, east = h - spec.i0, h + n - spec.i0
    south, north = h - spec.j0, h + n - spec.j0
    out = {}
    if spec.on_west and spec.on_south:
        out["sw"] = (west, south)
    if spec.on_east and spec.on_south:
        out["se"] = (east, south)
    if spec.on_east and spec.on_north:
        out["ne"] = (east, north)
    if spec.on_west and spec.on_north:
        out["nw"] = (west, north)
    return out


def corner_extrapolation_weights(
    grid: GridStorages,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``w1, w2, w3`` (corner shape): at each cube vertex of the rank, FV3's ``extrap_corner``
    factor ``x1 / (x2 - x1)`` of its three terms (:data:`VERTEX_TERMS`), x1/x2 the great-circle
    distances (``great_circle_dist``, C-library ``sin``/``cos``/``asin``) of the near/far
    cell centre to the vertex; 0 elsewhere."""
    m = grid.metric
    weights = [np.zeros(grid.shape) for _ in range(3)]
    for name, (ci, cj) in cube_vertices(m.spec).items():
        p0 = (m.grid[ci, cj, 0], m.grid[ci, cj, 1])
        for w, ((ni, nj), (fi, fj)) in zip(weights, VERTEX_TERMS[name]):
            near = (m.agrid[ci + ni, cj + nj, 0], m.agrid[ci + ni, cj + nj, 1])
            far = (m.agrid[ci + fi, cj + fj, 0], m.agrid[ci + fi, cj + fj, 1])
            x1 = float(great_circle_dist(near, p0))
            x2 = float(great_circle_dist(far, p0))
            w[ci, cj] = x1 / (x2 - x1)
    return weights[0], weights[1], weights[2]


def directional_externals(d: Direction, spec: SubdomainSpec, origin: tuple[int, ...],
                          domain: tuple[int, ...]) -> dict[str, Any]:  # fmt: skip
    """Externals of :func:`a2b_directional` along ``d`` for a launch at ``origin``/``domain``."""
    c = d.across
    lines = {"e0": (d, 1), "e1": (d, 2), "f1": (d, -2), "f0": (d, -1),
             "g0": (c, 1), "g1": (c, 2), "h1": (c, -2), "h0": (c, -1)}  # fmt: skip
    across = {f"C{k[1:]}": v for k, v in c.offsets().items()}  # CI, CJ, CI2, CJ2
    ext: dict[str, Any] = {**d.offsets(), **across, "cube_corners": d.axis == 0,
                           **tile_edges(spec, origin, domain)}  # fmt: skip
    for prefix, (direction, line) in lines.items():
        ext.update(line_band(direction, spec, origin, domain, line, prefix))
    return ext


class AGridToBGrid:
    """Equivalent of FV3 subroutine ``a2b_ord4`` (``a2b_edge.F90``, cubed sphere): the A-grid
    scalar ``qin`` interpolated to the corners ``is..ie+1, js..je+1``, 4th order, with FV3's
    tile-edge formulas (``edge_w``/``edge_e``/``edge_s``/``edge_n``, one-sided ``qx``/``qy``)
    and the three-way extrapolation at the cube vertices.

    ``replace``: FV3's ``replace = .true.``, the corner values are written into ``qin`` itself
    (over ``is..ie+1, js..je+1``; :meth:`bind` takes no ``qout``).  ``z_dim``: the vertical
    staggering of ``qin`` (``Z_DIM`` or ``Z_INTERFACE_DIM``); ``k_start``: first level
    interpolated (FV3's ``one_grad_p`` interpolates pk from its second interface on).  Three
    launches per :meth:`bind`, no NumPy at run time."""

    def __init__(
        self,
        factory: GridStencilFactory,
        grid: GridStorages,
        spec: SubdomainSpec,
        *,
        replace: bool = False,
        z_dim: str = Z_DIM,
        k_start: int = 0,
    ) -> None:
        indexing = factory.indexing
        origin, domain = indexing.bounds((X_INTERFACE_DIM, Y_INTERFACE_DIM, z_dim))
        if not 0 <= k_start < domain[2]:
            raise ValueError(f"k_start={k_start} is outside the {domain[2]} levels of {z_dim}")
        origin = (origin[0], origin[1], k_start)
        domain = (domain[0], domain[1], domain[2] - k_start)
        self.replace, self._grid = replace, grid
        self._sweeps = {
            d: factory.from_origin_domain(a2b_directional, origin, domain,
                                          externals=directional_externals(d, spec, origin, domain),
                                          name=f"a2b_ord4_{d.name}")
            for d in (X, Y)
        }  # fmt: skip
        self._combine = factory.from_origin_domain(
            a2b_combine, origin, domain, externals=tile_edges(spec, origin, domain),
            name="a2b_ord4_combine",
        )  # fmt: skip
        work = indexing.domain_of((X_INTERFACE_DIM, Y_INTERFACE_DIM, z_dim))
        self._qxx, self._qyy = zeros(work, factory.backend), zeros(work, factory.backend)
        w = corner_extrapolation_weights(grid)
        self._weights = [from_numpy(a, factory.backend) for a in w]

    def bind(self, qin: Any, qout: Any = None) -> list[Launch]:
        """The launches of ``a2b_ord4(qin, qout)``: ``qin`` a cell field (valid over
        ``is-2..ie+2, js-2..je+2``, allocated with the 3-cell halo), ``qout`` a corner field
        written over ``is..ie+1, js..je+1`` (with ``replace``: ``qin`` is written there)."""
        if self.replace == (qout is not None):
            need = "no qout (replace writes qin)" if self.replace else "a qout field"
            raise ValueError(f"AGridToBGrid(replace={self.replace}).bind needs {need}")
        g = self._grid
        w1, w2, w3 = self._weights
        sweep_x = self._sweeps[X].bind(qin=qin, da=g.dxa, da_across=g.dya, edge_start=g.edge_s,
                                       edge_end=g.edge_n, w1=w1, w2=w2, w3=w3, qdd=self._qxx)  # fmt: skip
        sweep_y = self._sweeps[Y].bind(qin=qin, da=g.dya, da_across=g.dxa, edge_start=g.edge_w,
                                       edge_end=g.edge_e, w1=w1, w2=w2, w3=w3, qdd=self._qyy)  # fmt: skip
        combine = self._combine.bind(qxx=self._qxx, qyy=self._qyy,
                                     qout=qin if self.replace else qout)  # fmt: skip
        return [sweep_x, sweep_y, combine]

"""The divergence damping of FV3's ``d_sw`` (``sw_core.F90``, "Compute divergence damping"),
in GTScript: :class:`DivergenceDamping` adds FV3's damping term to the corner kinetic energy
``ke`` (the D-grid wind update then takes its gradient).

Namelist keys (``fv_core_nml``, FV3's meaning): ``nord`` -- 0: del2 damping of the divergence of
the D-grid winds at the corners; 1, 2, 3: del4, del6, del8 (``nord`` Laplacians of the corner
divergence ``divg_d`` that ``c_sw`` computed); ``dddmp`` -- the dimensionless coefficient of the
Smagorinsky-type del2 part, ``da_min_c * min(0.2, dddmp |D| dt)`` (nord = 0; for nord > 0 with
``|D|`` replaced by ``|dt| sqrt(D^2 + zeta^2)``, zeta the relative vorticity at the corners,
``a2b_ord4`` of d_sw's ``wk``; skipped when ``dddmp < 1e-5``); ``d2_bg`` -- the background del2
coefficient (a lower bound of that part); ``d4_bg`` -- the background coefficient of the
higher-order part, ``dd8 = (da_min_c * d4_bg) ** (nord + 1)`` (Fortran's integer power:
repeated multiplication).

nord = 0 is one stencil (:func:`del2_divergence_damping`).  nord > 0 runs FV3's loop: per
Laplacian, the gradients of ``divg_d`` along the cell edges into FV3's work arrays ``vc`` (x) and
``uc`` (y) (:func:`divergence_gradient`, one definition for both), their dual-cell divergence back
into ``divg_d`` (:func:`corner_divergence`), over FV3's ranges that shrink by one halo point per
Laplacian, with FV3's ``fill_corners`` of ``divg_d`` (B-grid scalar, x then y) and of
``(vc, uc)`` (D-grid vector) before all but the last (:class:`CornerFill`: halo copies, NumPy
flat-index copies).  ``uc``, ``vc`` and ``divg_d`` are left as FV3 leaves them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
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
    sqrt,
)

from fv3core.errors import FV3ConfigError
from fv3core.grid.storages import GridStorages
from fv3core.grid.subdomain import SubdomainSpec
from fv3core.stencils.a2b_ord4 import AGridToBGrid
from fv3core.stencils.regions import tile_edges
from stencils.dims import (
    CORNER_DIMS,
    X_DIM,
    X_INTERFACE_DIM,
    Y_DIM,
    Y_INTERFACE_DIM,
    Z_DIM,
    Dims,
)
from stencils.directions import Direction, X, Y
from stencils.factory import GridStencilFactory
from stencils.launch import Launch
from stencils.storage import zeros

FloatField = gtscript.Field[np.float64]
FloatFieldIJ = gtscript.Field[gtscript.IJ, np.float64]

#: FV3 skips the Smagorinsky-type part of the nord > 0 damping below this dddmp
DDDMP_OFF = 1.0e-5


@gtscript.function
def skewed_edge_flux(wind, a_before, a_after, cosa, dc, sina):
    """FV3's del2 flux term through a dual-cell face inside a tile: the covariant D-grid wind
    less the skew part of the A-grid wind across (mean of the two cells), times the face
    length and the sine of the grid angle."""
    return (wind - 0.5 * (a_before + a_after) * cosa) * dc * sina


@gtscript.function
def upwind_edge_flux(c_wind, wind, dc, sin_before, sin_after):
    """The same term on a tile edge (no skew part), with the grid-angle sine of the upwind cell
    by the sign of the C-grid wind ``c_wind``."""
    return wind * dc * sin_before if c_wind > 0 else wind * dc * sin_after


def del2_divergence_damping(
    u: FloatField,
    v: FloatField,
    ua: FloatField,
    va: FloatField,
    uc: FloatField,
    vc: FloatField,
    dxc: FloatFieldIJ,
    dyc: FloatFieldIJ,
    cosa_u: FloatFieldIJ,
    cosa_v: FloatFieldIJ,
    sina_u: FloatFieldIJ,
    sina_v: FloatFieldIJ,
    sin_sg1: FloatFieldIJ,
    sin_sg2: FloatFieldIJ,
    sin_sg3: FloatFieldIJ,
    sin_sg4: FloatFieldIJ,
    rarea_c: FloatFieldIJ,
    ke: FloatField,
    dt: float,
    dddmp: float,
    d2_bg: float,
    da_min_c: float,
):
    """``d_sw``'s ``nord = 0`` branch: the divergence of the D-grid winds at the corners (FV3's
    ``ptc`` on the u points, ``vort`` on the v points, upwind grid-angle sines on the tile
    edges, the duplicate dual-cell term at the cube vertices removed) and
    ``ke += da_min_c max(d2_bg, min(0.2, dddmp |D dt|)) D``."""
    from __externals__ import i_end, i_start, j_end, j_start

    with computation(PARALLEL), interval(...):
        ptc = skewed_edge_flux(u, va[0, -1, 0], va, cosa_v, dyc, sina_v)
        with horizontal(region[:, j_start], region[:, j_end + 1]):
            ptc = upwind_edge_flux(vc, u, dyc, sin_sg4[0, -1], sin_sg2)
        vort = skewed_edge_flux(v, ua[-1, 0, 0], ua, cosa_u, dxc, sina_u)
        with horizontal(region[i_start, :], region[i_end + 1, :]):
            vort = upwind_edge_flux(uc, v, dxc, sin_sg3[-1, 0], sin_sg1)
        vort_south = vort[0, -1, 0]
        delpc = vort_south - vort + ptc[-1, 0, 0] - ptc
        with horizontal(region[i_start, j_start], region[i_end + 1, j_start]):
            delpc = delpc - vort_south
        with horizontal(region[i_start, j_end + 1], region[i_end + 1, j_end + 1]):
            delpc = delpc + vort
        delpc = rarea_c * delpc
        damp = da_min_c * max(d2_bg, min(0.20, dddmp * abs(delpc * dt)))
        ke = ke + damp * delpc


def divergence_gradient(divg_d: FloatField, weight: FloatFieldIJ, gradient: FloatField):
    """One Laplacian of FV3's nord > 0 damping: the difference of the corner divergence along
    the cell edge from the corner to the next along ``DI``, ``DJ``, times FV3's ``divg_u``
    (x: into ``vc``) or ``divg_v`` (y: into ``uc``)."""
    from __externals__ import DI, DJ

    with computation(PARALLEL), interval(...):
        gradient = (divg_d[DI, DJ, 0] - divg_d) * weight


def corner_divergence(uc: FloatField, vc: FloatField, rarea_c: FloatFieldIJ, divg_d: FloatField):
    """The dual-cell divergence of the edge gradients ``vc`` (x), ``uc`` (y) back at the
    corners, the duplicate term at the cube vertices removed (FV3: "Remove the extra term at the
    corners"), over the dual-cell area."""
    from __externals__ import i_end, i_start, j_end, j_start

    with computation(PARALLEL), interval(...):
        uc_south = uc[0, -1, 0]
        d = uc_south - uc + vc[-1, 0, 0] - vc
        with horizontal(region[i_start, j_start], region[i_end + 1, j_start]):
            d = d - uc_south
        with horizontal(region[i_start, j_end + 1], region[i_end + 1, j_end + 1]):
            d = d + uc
        divg_d = d * rarea_c


def copy_field(q: FloatField, out: FloatField):
    """``out = q`` (FV3 keeps the divergence in ``delpc`` before the Laplacians)."""
    with computation(PARALLEL), interval(...):
        out = q


def high_order_damping(
    delpc: FloatField,
    vort: FloatField,
    divg_d: FloatField,
    ke: FloatField,
    dt: float,
    dddmp: float,
    d2_bg: float,
    da_min_c: float,
    dd8: float,
):
    """The end of ``d_sw``'s nord > 0 branch: ``ke += damp2 D + dd8 L^nord(D)``, ``damp2 =
    da_min_c max(d2_bg, min(0.2, dddmp |dt| sqrt(D^2 + zeta^2)))`` (``smagorinsky``: else FV3's
    ``vort = 0``); ``delpc`` = D, ``vort`` = zeta at the corners, ``divg_d`` = L^nord(D)."""
    from __externals__ import smagorinsky

    with computation(PARALLEL), interval(...):
        if __INLINED(smagorinsky):
            smag = abs(dt) * sqrt(delpc * delpc + vort * vort)
        else:
            smag = 0.0
        damp2 = da_min_c * max(d2_bg, min(0.20, dddmp * smag))
        ke = ke + (damp2 * delpc + dd8 * divg_d)


def edge_dims(d: Direction) -> Dims:
    """The staggering of the cell edges running along ``d`` (x: FV3's u points, (X_DIM,
    Y_INTERFACE_DIM); y: the v points)."""
    return (X_DIM, Y_INTERFACE_DIM, Z_DIM) if d.axis == 0 else (X_INTERFACE_DIM, Y_DIM, Z_DIM)


@dataclass(frozen=True)
class _Moves:
    """One batch of halo copies: ``fields[dst][di, dj] = sign * fields[src][si, sj]``."""

    dst: int
    src: int
    negate: bool
    index: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


class CornerFill:
    """FV3 ``fv_mp_mod`` ``fill_corners`` on the halo regions beyond the cube vertices, in
    place: ``bgrid(X or Y)`` is ``fill_corners(q, FILL=XDir|YDir, BGRID=.true.)`` of a corner
    (B-grid) scalar; ``dgrid_vector()`` is ``fill_corners(x, y, VECTOR=.true., DGRID=.true.)``
    of a D-grid vector (``x`` on the u points, ``y`` on the v points).

    Each is FV3's rule at the south-west vertex (y: the rule transposed), mirrored to the
    other vertices the rank touches (a mirror maps corner index f to npx + 1 - f, cell index f
    to npx - f; a vector component changes sign where FV3's ``sign`` applies, at the
    south-west and north-east vertices); :meth:`bind` makes the copies one flat-index copy per
    batch (as :meth:`fv3core.stencils.fv_tp_2d.CornerCopy.bind`)."""

    def __init__(self, spec: SubdomainSpec, n_fields: int, moves: list[_Moves]) -> None:
        self.spec, self.n_fields, self.moves = spec, n_fields, moves

    @classmethod
    def bgrid(cls, d: Direction, spec: SubdomainSpec) -> CornerFill:
        """``fill_corners(q, FILL=XDir|YDir, BGRID=.true.)``: for i, j = 1..ng, the south-west
        corner point (1-i, 1-j) takes (1-j, i+1) along x; along y, (1-j, 1-i) takes
        (i+1, 1-j)."""
        dst, src = [], []
        for i, j in _pairs(spec.n_halo):
            dst.append((1 - i, 1 - j))
            src.append((1 - j, i + 1))
        rule = (_transpose(dst, d), _transpose(src, d))
        return cls(spec, 1, cls._mirrored(spec, [(0, 0, False, rule, (True, True), (True, True))]))

    @classmethod
    def dgrid_vector(cls, spec: SubdomainSpec) -> CornerFill:
        """``fill_corners(x, y, VECTOR=.true., DGRID=.true.)`` (``sign = -1``): at the
        south-west vertex ``x(1-i, 1-j) = -y(1-j, i)``, then ``y(1-i, 1-j) = -x(j, 1-i)``
        (the first rule transposed, x and y exchanged); fields ``(x, y)``."""
        dst, src = [], []
        for i, j in _pairs(spec.n_halo):
            dst.append((1 - i, 1 - j))
            src.append((1 - j, i))
        u_points, v_points = (False, True), (True, False)  # (staggered along i, along j)
        x_from_y = (0, 1, True, (dst, src), u_points, v_points)
        y_from_x = (1, 0, True, (_transpose(dst, Y), _transpose(src, Y)), v_points, u_points)
        return cls(spec, 2, cls._mirrored(spec, [x_from_y, y_from_x]))

    @staticmethod
    def _mirrored(spec: SubdomainSpec, rules: list[tuple]) -> list[_Moves]:
        """Array indices of ``rules`` ((dst field, src field, sign at the south-west vertex,
        (dst points, src points) in FV3 indices, dst staggering, src staggering)) at every cube
        vertex of ``spec``, rule by rule."""
        n, h = spec.resolution, spec.n_halo
        vertices = [(mi, mj) for (mi, mj), on in (
            ((False, False), spec.on_west and spec.on_south),
            ((True, False), spec.on_east and spec.on_south),
            ((False, True), spec.on_west and spec.on_north),
            ((True, True), spec.on_east and spec.on_north)) if on]  # fmt: skip

        def mirror(f: int, flip: bool, staggered: bool) -> int:
            return (n + 2 - f if staggered else n + 1 - f) if flip else f

        def array(points: list[tuple[int, int]], mi: bool, mj: bool, stag: tuple[bool, bool]
                  ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
            fi = np.array([mirror(p[0], mi, stag[0]) for p in points]) - (spec.i0 + 1) + h
            fj = np.array([mirror(p[1], mj, stag[1]) for p in points]) - (spec.j0 + 1) + h
            return fi, fj

        out = []
        for dst_field, src_field, sign_sw, (dst, src), dst_stag, src_stag in rules:
            for negate in (False, True):
                batch = [(mi, mj) for mi, mj in vertices if sign_sw and (mi == mj) == negate
                         or not sign_sw and not negate]  # fmt: skip
                if not batch:
                    continue
                parts = [(*array(dst, mi, mj, dst_stag), *array(src, mi, mj, src_stag))
                         for mi, mj in batch]  # fmt: skip
                index = tuple(np.concatenate([p[k] for p in parts]) for k in range(4))
                out.append(_Moves(dst_field, src_field, negate, index))  # type: ignore[arg-type]
        return out

    def bind(self, *fields: Any) -> Launch:
        """The fill of ``fields`` (B grid: ``q``; D grid: ``x, y``) as a call without
        arguments; NumPy storages (CPU backends) through flat indices into their buffers."""
        if len(fields) != self.n_fields:
            raise ValueError(f"CornerFill.bind takes {self.n_fields} field(s), got {len(fields)}")
        if not self.moves:
            return _nothing
        if not all(isinstance(f, np.ndarray) for f in fields):
            return _IndexedFill(fields, self.moves)
        from stencils.storage import flat_locations

        buffers, located = flat_locations([(f"field{k}", f) for k, f in enumerate(fields)])
        batches = []
        for m in self.moves:
            (db, dflat), (sb, sflat) = located[m.dst], located[m.src]
            di, dj, si, sj = m.index
            batches.append((buffers[db], dflat[di, dj].ravel(), buffers[sb], sflat[si, sj].ravel(),
                            m.negate))  # fmt: skip
        rows = [[(fields[m.dst], (a, b), fields[m.src], (c, d), -1.0 if m.negate else 1.0)
                 for a, b, c, d in zip(*(x.tolist() for x in m.index))] for m in self.moves]  # fmt: skip
        return _FlatFill(batches, rows)


def _pairs(ng: int) -> list[tuple[int, int]]:
    return [(i, j) for j in range(1, ng + 1) for i in range(1, ng + 1)]


def _transpose(points: list[tuple[int, int]], d: Direction) -> list[tuple[int, int]]:
    return list(points) if d.axis == 0 else [(b, a) for a, b in points]


def _nothing() -> None:
    return None


class _FlatFill:
    """Bound :class:`CornerFill`: ``dst_buffer[dst] = (-)src_buffer[src]`` per batch."""

    def __init__(self, batches: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, bool]],
                 rows: list[list[tuple[Any, tuple[int, int], Any, tuple[int, int], float]]] | None = None,
                 ) -> None:  # fmt: skip
        self._batches = batches
        self._rows = rows or []

    @property
    def point_copies(self) -> list[list[tuple[Any, tuple[int, int], Any, tuple[int, int], float]]]:
        """Per batch, in order (each reads what the one before wrote): the copies as (dst array,
        (i, j), src array, (i, j), sign), for tools that translate the launch sequence."""
        return self._rows

    def __call__(self) -> None:
        for dst_buffer, dst, src_buffer, src, negate in self._batches:
            if negate:
                dst_buffer[dst] = -src_buffer[src]
            else:
                dst_buffer[dst] = src_buffer[src]


class _IndexedFill:
    """Bound :class:`CornerFill` for storages that are not NumPy arrays (e.g. cupy)."""

    def __init__(self, fields: tuple[Any, ...], moves: list[_Moves]) -> None:
        self._fields, self._moves = fields, moves

    def __call__(self) -> None:
        for m in self._moves:
            di, dj, si, sj = m.index
            values = self._fields[m.src][si, sj]
            self._fields[m.dst][di, dj] = -values if m.negate else values


class DivergenceDamping:
    """Equivalent of the divergence-damping block of FV3's ``d_sw`` (``sw_core.F90``) for one
    rank: ``ke`` (corner kinetic energy, times dt as d_sw has it) gets FV3's damping term on the
    corners ``is..ie+1, js..je+1``.  Keys ``nord``, ``dddmp``, ``d2_bg``, ``d4_bg`` as in the
    module docstring; ``dt``: d_sw's (acoustic) time step in s.

    Launches per :meth:`bind`: nord = 0: 1.  nord > 0: the copy of D, per Laplacian 3 stencils
    (plus, before each but the last and only on ranks with a cube vertex, FV3's three corner fills,
    NumPy), ``a2b_ord4`` of ``wk`` (3, when ``dddmp >= 1e-5``) and the final update (1)."""

    def __init__(
        self,
        factory: GridStencilFactory,
        grid: GridStorages,
        spec: SubdomainSpec,
        nord: int,
        dddmp: float,
        d2_bg: float,
        d4_bg: float,
        dt: float,
    ) -> None:
        if nord not in (0, 1, 2, 3):
            raise FV3ConfigError(f"nord={nord}: FV3's divergence damping has nord 0, 1, 2, 3")
        if spec.n_halo != 3:
            raise FV3ConfigError(f"n_halo={spec.n_halo}: FV3's d_sw needs n_halo = 3")
        self.nord, self.dddmp, self.d2_bg, self.d4_bg, self.dt = nord, dddmp, d2_bg, d4_bg, dt
        self._grid, self._spec = grid, spec
        indexing = factory.indexing
        scalars = {"dt": float(dt), "dddmp": float(dddmp), "d2_bg": float(d2_bg),
                   "da_min_c": float(grid.da_min_c)}  # fmt: skip

        def corners(definition: Callable[..., None], halo: int, **externals: Any) -> Any:
            origin, domain = indexing.bounds(CORNER_DIMS, halo)
            return factory.from_dims(definition, CORNER_DIMS, halo,
                                     externals={**tile_edges(spec, origin, domain), **externals})  # fmt: skip

        if nord == 0:
            self._del2 = corners(del2_divergence_damping, 0)
            self._scalars = scalars
            return
        #: dd8 = (da_min_c * d4_bg) ** (nord + 1), Fortran's integer power
        base = grid.da_min_c * d4_bg
        dd8 = base
        for _ in range(nord):
            dd8 = dd8 * base
        self.dd8 = dd8
        self._scalars = {**scalars, "dd8": float(dd8)}
        self._smagorinsky = dddmp >= DDDMP_OFF
        self._copy = factory.from_dims(copy_field, CORNER_DIMS)
        self._final = factory.from_dims(high_order_damping, CORNER_DIMS,
                                        externals={"smagorinsky": self._smagorinsky})  # fmt: skip
        self._gradients = []
        self._divergences = []
        for n in range(1, nord + 1):
            nt = nord - n
            self._gradients.append({
                d: factory.from_dims(divergence_gradient, edge_dims(d),
                                     (1 + nt, nt) if d.axis == 0 else (nt, 1 + nt),
                                     externals=d.offsets(), name=f"divergence_gradient_{d.name}")
                for d in (X, Y)
            })  # fmt: skip
            self._divergences.append(corners(corner_divergence, nt))
        self._fill_b = {d: CornerFill.bgrid(d, spec) for d in (X, Y)}
        self._fill_d = CornerFill.dgrid_vector(spec)
        work = indexing.domain_of(CORNER_DIMS)
        self._delpc, self._vort = zeros(work, factory.backend), zeros(work, factory.backend)
        self._a2b = AGridToBGrid(factory, grid, spec) if self._smagorinsky else None

    def bind(self, u: Any, v: Any, ua: Any, va: Any, uc: Any, vc: Any, divg_d: Any, ke: Any,
             wk: Any) -> list[Launch]:  # fmt: skip
        """The damping of these storages (FV3's names; 3-D, allocated with the 3-cell halo as
        ``GridIndexing.domain_of`` of their staggering), launches in order:

        * ``u`` (u points), ``v`` (v points): the covariant D-grid winds; ``ua``, ``va`` (cells):
          the A-grid contravariant winds; ``uc`` (x faces), ``vc`` (y faces): the C-grid winds --
          all read by nord = 0 (on ``is-1..ie+1`` / ``js-1..je+1`` around the compute
          corners); for nord > 0 ``uc``, ``vc`` are FV3's work arrays, overwritten over FV3's
          ranges (``vc`` on ``is-1-nt..ie+1+nt, js-nt..je+1+nt``, ``uc`` transposed, for the
          largest ``nt = nord - 1``) and left as FV3 leaves them;
        * ``divg_d`` (corners), nord > 0: c_sw's corner divergence on the compute corners and
          its halo (FV3's corner-point halo update: ``nord`` rings are read), overwritten with
          the Laplacians (del^(2 nord) D on the compute corners);
        * ``ke`` (corners): the damping term added on ``is..ie+1, js..je+1``;
        * ``wk`` (cells): d_sw's relative vorticity, read on ``is-2..ie+2, js-2..je+2`` for
          nord > 0 when ``dddmp >= 1e-5``."""
        g = self._grid
        if self.nord == 0:
            return [self._del2.bind(
                u=u, v=v, ua=ua, va=va, uc=uc, vc=vc, dxc=g.dxc, dyc=g.dyc, cosa_u=g.cosa_u,
                cosa_v=g.cosa_v, sina_u=g.sina_u, sina_v=g.sina_v, sin_sg1=g.sin_sg1,
                sin_sg2=g.sin_sg2, sin_sg3=g.sin_sg3, sin_sg4=g.sin_sg4, rarea_c=g.rarea_c, ke=ke,
                **self._scalars,
            )]  # fmt: skip
        launches: list[Launch] = [self._copy.bind(q=divg_d, out=self._delpc)]
        for n, (gradients, divergence) in enumerate(zip(self._gradients, self._divergences), 1):
            fill = n < self.nord
            if fill:
                launches.append(self._fill_b[X].bind(divg_d))
            launches.append(gradients[X].bind(divg_d=divg_d, weight=g.divg_u, gradient=vc))
            if fill:
                launches.append(self._fill_b[Y].bind(divg_d))
            launches.append(gradients[Y].bind(divg_d=divg_d, weight=g.divg_v, gradient=uc))
            if fill:
                launches.append(self._fill_d.bind(vc, uc))
            launches.append(divergence.bind(uc=uc, vc=vc, rarea_c=g.rarea_c, divg_d=divg_d))
        if self._a2b is not None:
            launches.extend(self._a2b.bind(wk, self._vort))
        scalars = {k: self._scalars[k] for k in ("dt", "dddmp", "d2_bg", "da_min_c", "dd8")}
        launches.append(self._final.bind(delpc=self._delpc, vort=self._vort, divg_d=divg_d, ke=ke,
                                         **scalars))  # fmt: skip
        return [launch for launch in launches if launch is not _nothing]

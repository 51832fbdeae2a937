"""The cube-vertex fixes of the shallow-water step, for all ranks of this process at once.

At each of the 8 cube vertices three tiles meet; a rank's halo there has a cell that does not
exist, and two index-space faces/dual-cell edges that stand for one real face.  Two fixes
(NumPy, a few points per rank) run between the stencils:

* :meth:`CubeVertexFixes.faces` (in ``c_sw``, after the C-grid normal winds): the halo cells B
  (across the x-edge) and C (across the y-edge) share a face that appears twice in the local index
  space, each time next to the missing cell; both copies get the flux between B and C (FV3 fills
  the missing cell from B or C for the same effect).
* :meth:`CubeVertexFixes.vertices` (after the corner potential): the dual cell of the vertex is a
  triangle A (interior), B, C whose face between B and C appears only next to the missing cell;
  its flux uses the mean wind of B and C on that face's normal (FV3's ``delpc`` corner rule keeps
  one of the two duplicate edges for the same effect).

Every rank's geometry is computed once; the fields of all ranks are read and written through
flat indices into their allocations (one per field when the ranks' fields are slices of one
buffer, :class:`stencils.storage.StackedStorages`), so a fix costs a few NumPy operations per
step whatever the number of ranks.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fv3core.grid.metric import MetricTerms
from fv3core.grid.shallow_water_geometry import CubeVertex
from fv3core.grid.storages import DynamicsGrid
from stencils.directions import Direction, X, Y
from stencils.storage import flat_locations


class _Points:
    """Chosen points of one field over all ranks: ``get()`` their values (rows x levels, or
    rows), ``set(values)`` them."""

    def __init__(
        self, fields: Sequence[Any], rows: list[tuple[int, int, int]], levels: bool
    ) -> None:
        buffers, located = flat_locations(
            [(f"rank {n}", np.asarray(f)) for n, f in enumerate(fields)]
        )
        groups: dict[int, tuple[list[int], list[Any]]] = defaultdict(lambda: ([], []))
        for position, (n, i, j) in enumerate(rows):
            b, index = located[n]
            groups[b][0].append(position)
            groups[b][1].append(index[i, j] if levels else index[i, j, 0])
        self._parts = [(buffers[b], np.array(p), np.array(x)) for b, (p, x) in groups.items()]
        self._shape = (len(rows),) + (np.shape(self._parts[0][2])[1:] if rows else ())

    def get(self) -> np.ndarray:
        if len(self._parts) == 1:
            buffer, _, index = self._parts[0]
            return buffer[index]
        out = np.empty(self._shape)
        for buffer, position, index in self._parts:
            out[position] = buffer[index]
        return out

    def set(self, values: np.ndarray) -> None:
        for buffer, position, index in self._parts:
            buffer[index] = values[position] if len(self._parts) > 1 else values


@dataclass(frozen=True)
class VertexInputs:
    """What the vertex fixes read and write of one rank: the A-grid winds ``w`` (3
    components), the C-grid normal winds ``vn[d]`` and depth fluxes ``hflux[d]``, the depth
    ``h``, the D-grid winds ``u``, ``v``, the corner potential ``phib`` and divergence ``div``,
    the del2 damping coefficient ``nu``; and the rank's geometry."""

    w: Sequence[Any]
    vn: Mapping[Direction, Any]
    hflux: Mapping[Direction, Any]
    h: Any
    u: Any
    v: Any
    phib: Any
    div: Any
    nu: float
    grid: DynamicsGrid
    metric: MetricTerms
    vertices: Sequence[CubeVertex]


@dataclass(frozen=True)
class VertexFace:
    """One index-space copy of the face between the halo cells B and C at a cube vertex,
    among the faces crossed along one direction: its index, unit normal and length, and the
    cells on its low and high side (the upwind cell for a positive / negative normal wind)."""

    face: tuple[int, int]
    normal: np.ndarray
    length: float
    low: tuple[int, int]
    high: tuple[int, int]


@dataclass(frozen=True)
class VertexDualCell:
    """The triangular dual cell of a cube vertex (corner ``corner``): the orientation signs
    ``si``, ``sj`` of its two index-space dual faces (on the y-face ``dual_face[Y]`` and the
    x-face ``dual_face[X]`` edges), and the unit normal and length of its third face, between
    the halo cells B and C."""

    corner: tuple[int, int]
    si: int
    sj: int
    dual_face: Mapping[Direction, tuple[int, int]]
    normal: np.ndarray
    length: float


@dataclass(frozen=True)
class VertexGeometry:
    """Everything the fixes need at one cube vertex of one rank: the halo cells B (across the
    x-edge) and C (across the y-edge), the two copies of their face and the dual cell."""

    b: tuple[int, int]
    c: tuple[int, int]
    faces: Mapping[Direction, VertexFace]
    dual: VertexDualCell


def vertex_geometry(fields: VertexInputs) -> list[VertexGeometry]:
    """:class:`VertexGeometry` of each cube vertex of one rank."""
    h = fields.metric.spec.n_halo
    xyz, radius = fields.metric.xyz_agrid, fields.metric.radius
    out = []
    for ci, cj, bi, bj in fields.vertices:
        si = 1 if ci == h else -1  # west vertex: C is east of the block
        sj = 1 if cj == h else -1  # south vertex: B is north of the block
        b, c = (bi, bj + sj), (bi + si, bj)

        def face(d: Direction, index: tuple[int, int], low_high: tuple) -> VertexFace:
            return VertexFace(index, fields.grid.normals_np[d][index],
                              fields.grid.lengths_np[d][index], *low_high)  # fmt: skip

        faces = {
            Y: face(Y, (bi, max(bj, bj + sj)), (c, b) if sj > 0 else (b, c)),  # block - B
            X: face(X, (max(bi, bi + si), bj), (b, c) if si > 0 else (c, b)),  # block - C
        }
        a = (bi + si, bj + sj)
        mid = xyz[b] + xyz[c]
        mid /= np.linalg.norm(mid)
        normal = np.cross(xyz[b] - xyz[c], mid)
        normal /= np.linalg.norm(normal)
        if normal @ (xyz[a] - mid) > 0:
            normal = -normal
        length = radius * np.arccos(np.clip(xyz[b] @ xyz[c], -1.0, 1.0))
        dual = VertexDualCell(
            (ci, cj), si, sj,
            {Y: (ci, cj) if si > 0 else (ci - 1, cj), X: (ci, cj) if sj > 0 else (ci, cj - 1)},
            normal, length,
        )  # fmt: skip
        out.append(VertexGeometry(b, c, faces, dual))
    return out


class _FaceFix:
    """The points and geometry of one direction's vertex faces over all ranks."""

    def __init__(self, vn: _Points, hflux: _Points, normal: np.ndarray, length: np.ndarray,
                 upwind: _Points) -> None:  # fmt: skip
        self.vn, self.hflux, self.normal, self.length, self.upwind = vn, hflux, normal, length, upwind


class CubeVertexFixes:
    """Both vertex fixes for the ranks of this process (one :class:`VertexInputs` each); a
    no-op for ranks that touch no cube vertex."""

    def __init__(self, ranks: Sequence[VertexInputs]) -> None:
        rows = [(n, g) for n, r in enumerate(ranks) for g in vertex_geometry(r)]
        self.active = bool(rows)
        if not self.active:
            return
        owner = [n for n, _ in rows]
        geometry = [g for _, g in rows]

        def points(field: Callable[[VertexInputs], Any], cells: list[tuple[int, int]],
                   levels: bool = False) -> _Points:  # fmt: skip
            owners = owner * (len(cells) // len(owner))  # cells: one or two lists over vertices
            fields = [field(r) for r in ranks]
            return _Points(fields, [(n, i, j) for n, (i, j) in zip(owners, cells)], levels)

        b, c = [g.b for g in geometry], [g.c for g in geometry]
        self._n = len(b)
        self._w_bc = [points(lambda r, k=k: r.w[k], b + c) for k in range(3)]
        self._faces = []
        for d in (Y, X):
            faces = [g.faces[d] for g in geometry]
            index = [f.face for f in faces]
            self._faces.append(_FaceFix(
                points(lambda r, d=d: r.vn[d], index), points(lambda r, d=d: r.hflux[d], index),
                np.array([f.normal for f in faces]), np.array([f.length for f in faces]),
                points(lambda r: r.h, [f.low for f in faces] + [f.high for f in faces]),
            ))  # fmt: skip
        duals = [g.dual for g in geometry]
        corner = [dl.corner for dl in duals]
        face_y, face_x = [dl.dual_face[Y] for dl in duals], [dl.dual_face[X] for dl in duals]

        def coefficient(d: Direction, part: str, where: list[tuple[int, int]]) -> np.ndarray:
            return np.array([getattr(ranks[n].grid.dual_np[d], part)[p]
                             for n, p in zip(owner, where)])  # fmt: skip

        self._dual = {
            "si": np.array([dl.si for dl in duals]), "sj": np.array([dl.sj for dl in duals]),
            "normal": np.array([dl.normal for dl in duals]),
            "length": np.array([dl.length for dl in duals]),
            "du_y": coefficient(Y, "tangential", face_y), "dn_y": coefficient(Y, "normal", face_y),
            "dv_x": coefficient(X, "tangential", face_x), "dn_x": coefficient(X, "normal", face_x),
            "area": np.array([ranks[n].grid.area_c[p] for n, p in zip(owner, corner)]),
            "nu": np.array([ranks[n].nu for n in owner])[:, None],
            "u": points(lambda r: r.u, face_y), "vn_y": points(lambda r: r.vn[Y], face_y),
            "v": points(lambda r: r.v, face_x), "vn_x": points(lambda r: r.vn[X], face_x),
            "phib": points(lambda r: r.phib, corner, levels=True),
            "div": points(lambda r: r.div, corner, levels=True),
        }  # fmt: skip

    def _mean_wind(self) -> list[np.ndarray]:
        """Per vertex, the mean of cells B and C's 3-D A-grid winds (3 x vertices)."""
        n = self._n
        return [0.5 * (w[:n] + w[n:]) for w in (bc.get() for bc in self._w_bc)]

    @staticmethod
    def _along(mean: list[np.ndarray], direction: np.ndarray) -> np.ndarray:
        return sum(mean[k] * direction[:, k] for k in range(3))

    def faces(self) -> None:
        """Both index-space copies of the B-C face get the B-C normal wind and depth flux."""
        if not self.active:
            return
        mean = self._mean_wind()
        n = self._n
        for fix in self._faces:
            vn = self._along(mean, fix.normal)
            fix.vn.set(vn)
            h = fix.upwind.get()  # the cells on the low side, then those on the high side
            fix.hflux.set(vn * fix.length * np.where(vn > 0, h[:n], h[n:]))

    def vertices(self) -> None:
        """The vertex's triangular dual cell: divergence with the B-C face's flux, and the
        corner potential's damping term corrected by the change."""
        if not self.active:
            return
        d = self._dual
        flux = (d["si"] * (d["du_y"] * d["u"].get() + d["dn_y"] * d["vn_y"].get())
                + d["sj"] * (d["dv_x"] * d["v"].get() + d["dn_x"] * d["vn_x"].get()))  # fmt: skip
        flux += self._along(self._mean_wind(), d["normal"]) * d["length"]
        new_div = (flux / d["area"])[:, None]
        div = d["div"].get()
        d["phib"].set(d["phib"].get() + d["nu"] * (div - new_div))
        d["div"].set(np.broadcast_to(new_div, div.shape))

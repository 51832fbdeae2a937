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
from collections.abc import Sequence
from typing import Any

import numpy as np

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


def _vertex_rows(r: Any) -> tuple[list[tuple], list[tuple]]:
    """Per cube vertex of rank ``r`` (a RankDynamics): the face-fix row (cells B and C, the
    y-face and x-face with their normals and upwind/downwind cells) and the dual-fix row (corner,
    orientation, dual faces, B-C face normal and length)."""
    h = r.spec.n_halo
    n_x, n_y = r.grid.normals_np
    xyz, radius = r.rank.metric.xyz_agrid, r.rank.metric.radius
    faces, duals = [], []
    for ci, cj, bi, bj in r._vertices:
        si = 1 if ci == h else -1  # west vertex: C is east of the block
        sj = 1 if cj == h else -1  # south vertex: B is north of the block
        b, c = (bi, bj + sj), (bi + si, bj)
        fy = (bi, max(bj, bj + sj))  # y-face between the block and B
        fx = (max(bi, bi + si), bj)  # x-face between the block and C
        faces.append((b, c, fy, n_y[fy], *((c, b) if sj > 0 else (b, c)),
                      fx, n_x[fx], *((b, c) if si > 0 else (c, b))))  # fmt: skip
        a = (bi + si, bj + sj)
        mid = xyz[b] + xyz[c]
        mid /= np.linalg.norm(mid)
        normal = np.cross(xyz[b] - xyz[c], mid)
        normal /= np.linalg.norm(normal)
        if normal @ (xyz[a] - mid) > 0:
            normal = -normal
        length = radius * np.arccos(np.clip(xyz[b] @ xyz[c], -1.0, 1.0))
        duals.append(((ci, cj), si, sj, (ci, cj) if si > 0 else (ci - 1, cj),
                      (ci, cj) if sj > 0 else (ci, cj - 1), normal, length))  # fmt: skip
    return faces, duals


class CubeVertexFixes:
    """Both vertex fixes for the ranks ``ranks`` (RankDynamics) of this process; a no-op for
    ranks that touch no cube vertex."""

    def __init__(self, ranks: Sequence[Any]) -> None:
        faces: list[tuple] = []
        duals: list[tuple] = []
        owner: list[int] = []
        for n, r in enumerate(ranks):
            f, d = _vertex_rows(r)
            faces += f
            duals += d
            owner += [n] * len(f)
        self.active = bool(faces)
        if not self.active:
            return

        def points(attr: Any, cells: list[tuple[int, int]], levels: bool = False) -> _Points:
            fields = [attr(r) for r in ranks]
            owners = owner * (len(cells) // len(owner))  # cells: one or two lists over vertices
            return _Points(fields, [(n, i, j) for n, (i, j) in zip(owners, cells)], levels)

        def const(values: Any) -> np.ndarray:
            return np.array(values)

        col = [list(x) for x in zip(*faces)]
        b, c, fy, ny, low_y, high_y, fx, nx, low_x, high_x = col
        self._n = len(b)
        self._w_bc = [points(lambda r, k=k: r.w[k], b + c) for k in range(3)]
        self._faces = []
        for name, face, normal, low, high, lengths in (
            ("y", fy, ny, low_y, high_y, 1),
            ("x", fx, nx, low_x, high_x, 0),
        ):
            self._faces.append((
                points(lambda r, a=f"vn_{name}": getattr(r, a), face),
                points(lambda r, a=f"hf{name}": getattr(r, a), face),
                const(normal),
                const([ranks[n].grid.lengths_np[lengths][p] for n, p in zip(owner, face)]),
                points(lambda r: r.h, low + high),
            ))  # fmt: skip
        corner, si, sj, dfy, dfx, normal, length = [list(x) for x in zip(*duals)]
        dual = [ranks[n].grid.dual_np for n in owner]
        self._dual = {
            "si": const(si), "sj": const(sj), "normal": const(normal), "length": const(length),
            "du_y": const([d["du_y"][p] for d, p in zip(dual, dfy)]),
            "dn_y": const([d["dn_y"][p] for d, p in zip(dual, dfy)]),
            "dv_x": const([d["dv_x"][p] for d, p in zip(dual, dfx)]),
            "dn_x": const([d["dn_x"][p] for d, p in zip(dual, dfx)]),
            "area": const([ranks[n].grid.area_c[p] for n, p in zip(owner, corner)]),
            "nu": const([ranks[n].nu for n in owner])[:, None],
            "u": points(lambda r: r.u, dfy), "vn_y": points(lambda r: r.vn_y, dfy),
            "v": points(lambda r: r.v, dfx), "vn_x": points(lambda r: r.vn_x, dfx),
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
        for vn_points, flux_points, normal, length, upwind in self._faces:
            vn = self._along(mean, normal)
            vn_points.set(vn)
            h = upwind.get()  # the cells on the low side, then those on the high side
            flux_points.set(vn * length * np.where(vn > 0, h[:n], h[n:]))

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

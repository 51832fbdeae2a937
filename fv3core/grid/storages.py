"""Metric terms as backend storages, built once per rank for the stencils that read them.

:class:`TransportGrid` holds what FV3's transport (``fvtp2d``, ``fxadv``) reads;
:class:`DynamicsGrid` what the shallow-water C-D grid step reads, with the per-direction terms
of the faces crossed along x and along y in :attr:`DynamicsGrid.faces` (one
:class:`FaceStorages` per :class:`~stencils.directions.Direction`), so the x and y variants of
a routine take the same fields from the same place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from fv3core.grid.metric import MetricTerms
from fv3core.grid.shallow_water_geometry import (
    DualFaces,
    agrid_coefficients,
    corner_areas,
    corner_weights,
    dual_faces,
    face_frames,
    safe_reciprocal,
    safe_sin,
)
from stencils.directions import DIRECTIONS, Direction
from stencils.storage import from_numpy

Storage = Any


@dataclass(frozen=True)
class TransportGrid:
    """The metric terms transport needs, as 2D storages (see :class:`MetricTerms`)."""

    area: Storage
    rarea: Storage
    dxa: Storage
    dya: Storage
    rdxa: Storage
    rdya: Storage
    dx: Storage
    dy: Storage
    sin_sg1: Storage
    sin_sg2: Storage
    sin_sg3: Storage
    sin_sg4: Storage

    @classmethod
    def from_metric(cls, metric: MetricTerms, backend: str) -> TransportGrid:
        def s(a: np.ndarray) -> Storage:
            return from_numpy(np.ascontiguousarray(a), backend)

        sin = metric.sin_sg
        return cls(
            area=s(metric.area), rarea=s(metric.rarea), dxa=s(metric.dxa), dya=s(metric.dya),
            rdxa=s(1.0 / metric.dxa), rdya=s(1.0 / metric.dya), dx=s(metric.dx), dy=s(metric.dy),
            sin_sg1=s(sin[0]), sin_sg2=s(sin[1]), sin_sg3=s(sin[2]), sin_sg4=s(sin[3]),
        )  # fmt: skip

    def cell_length(self, d: Direction) -> Storage:
        """A-grid cell length along ``d`` (``dxa`` / ``dya``)."""
        return self.dxa if d.axis == 0 else self.dya

    def rcell_length(self, d: Direction) -> Storage:
        """1 / :meth:`cell_length`."""
        return self.rdxa if d.axis == 0 else self.rdya

    def face_length(self, d: Direction) -> Storage:
        """Length of the faces crossed along ``d`` (``dy`` / ``dx``)."""
        return self.dy if d.axis == 0 else self.dx

    def sin_near(self, d: Direction) -> Storage:
        """Grid-angle sine of each cell at its face on the low side along ``d`` (FV3 ``sin_sg1``
        west / ``sin_sg2`` south)."""
        return self.sin_sg1 if d.axis == 0 else self.sin_sg2

    def sin_far(self, d: Direction) -> Storage:
        """Grid-angle sine at the face on the high side (FV3 ``sin_sg3`` east / ``sin_sg4``
        north)."""
        return self.sin_sg3 if d.axis == 0 else self.sin_sg4


@dataclass(frozen=True)
class FaceStorages:
    """The terms of the faces crossed along one direction, padded to the corner shape (see
    :class:`~fv3core.grid.shallow_water_geometry.FaceFrames` and ``DualFaces``)."""

    normal: tuple[Storage, Storage, Storage]
    q: tuple[Storage, Storage, Storage]
    gt: Storage
    rgn: Storage
    weight: Storage
    shift_p: Storage
    shift_m: Storage
    tan: tuple[Storage, Storage, Storage]
    length: Storage
    rlength: Storage
    rcentre_distance: Storage
    sin_near: Storage
    sin_far: Storage
    dual_tangential: Storage
    dual_normal: Storage


def _pad(a: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    out = np.zeros(shape)
    out[: a.shape[0], : a.shape[1]] = a
    return out


class DynamicsGrid:
    """Metric storages of the shallow-water stencils (2-D, padded to the corner shape), and the
    NumPy geometry the cube-vertex fixes read."""

    def __init__(self, metric: MetricTerms, surface: np.ndarray, backend: str) -> None:
        spec = metric.spec
        h = spec.n_halo
        shape = (spec.nx + 1 + 2 * h, spec.ny + 1 + 2 * h)

        def s(a: np.ndarray) -> Storage:
            return from_numpy(_pad(np.asarray(a, dtype=np.float64), shape), backend)

        def xyz(a: np.ndarray) -> tuple[Storage, Storage, Storage]:
            return s(a[..., 0]), s(a[..., 1]), s(a[..., 2])

        self.transport = TransportGrid.from_metric(metric, backend)
        self.dx, self.dy = s(metric.dx), s(metric.dy)
        self.rarea = s(safe_reciprocal(metric.area))
        sin5 = safe_sin(metric.sin_sg[4])
        self.cosa, self.rsina = s(metric.cos_sg[4]), s(1.0 / sin5)
        coef = agrid_coefficients(metric)
        #: A-grid wind coefficients c_s, c_n, c_w, c_e (3 components each)
        self.agrid = [xyz(coef[e]) for e in range(4)]
        sin = safe_sin(metric.sin_sg)
        self.fcor = s(metric.f0)
        self.hs = s(surface)
        #: the dual-cell flux coefficients and face geometry as NumPy arrays (vertex fixes)
        self.dual_np: dict[Direction, DualFaces] = {d: dual_faces(metric, d) for d in DIRECTIONS}
        self.normals_np = {d: metric.face_normal(d) for d in DIRECTIONS}
        self.lengths_np = {d: np.asarray(metric.face_length(d)) for d in DIRECTIONS}
        self.faces: dict[Direction, FaceStorages] = {}
        for d in DIRECTIONS:
            f = face_frames(metric, d)
            low, high = (0, 2) if d.axis == 0 else (1, 3)
            self.faces[d] = FaceStorages(
                normal=xyz(f.n), q=xyz(f.q), gt=s(f.gt), rgn=s(f.rgn), weight=s(f.weight),
                shift_p=s(f.shift_p), shift_m=s(f.shift_m), tan=(s(f.tan[0]), s(f.tan[1]), s(f.tan[2])),
                length=s(metric.face_length(d)), rlength=s(safe_reciprocal(metric.face_length(d))),
                rcentre_distance=s(safe_reciprocal(metric.centre_distance(d))),
                sin_near=s(sin[low]), sin_far=s(sin[high]),
                dual_tangential=s(self.dual_np[d].tangential), dual_normal=s(self.dual_np[d].normal),
            )  # fmt: skip
        self.area_c = corner_areas(metric)
        self.corner_w = [s(w) for w in corner_weights(metric)]
        self.rarea_c = s(1.0 / self.area_c)

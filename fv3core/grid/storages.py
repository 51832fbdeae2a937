"""FV3's metric terms (:class:`~fv3core.grid.metric_terms.MetricTerms`) as backend storages for
the GTScript routines of FV3's scheme: every 2-D term padded to the corner shape
``(nx + 1 + 2h, ny + 1 + 2h)`` (FV3's index (i, j) at array index (i - is + h, j - js + h), as
the NumPy arrays), ``sin_sg``/``cos_sg`` split into ``sin_sg1`` ... ``sin_sg9``, the 1-D tile-edge
weights of ``a2b_ord4`` and ``d2a2c_vect`` as 2-D fields constant across the edge."""

from __future__ import annotations

from typing import Any

import numpy as np

from fv3core.grid.metric_terms import MetricTerms
from stencils.storage import from_numpy

#: the 2-D terms FV3's shallow-water routines read
FIELDS_2D = ("dx", "dy", "dxa", "dya", "dxc", "dyc", "rdx", "rdy", "rdxa", "rdya", "rdxc", "rdyc",
             "area", "rarea", "area_c", "rarea_c", "cosa", "sina", "rsina", "cosa_u", "sina_u",
             "rsin_u", "cosa_v", "sina_v", "rsin_v", "cosa_s", "rsin2", "divg_u", "divg_v",
             "del6_u", "del6_v", "fC", "f0", "a11", "a12", "a21", "a22")  # fmt: skip
#: 1-D edge weights along j (west/east edges) or along i (south/north edges)
EDGES_ALONG_J = ("edge_w", "edge_e", "edge_vect_w", "edge_vect_e")
EDGES_ALONG_I = ("edge_s", "edge_n", "edge_vect_s", "edge_vect_n")


class GridStorages:
    """One rank's FV3 metric terms as 2-D storages (attributes under FV3's names), plus the
    scalars ``da_min``, ``da_min_c``, the corner flags and the source :attr:`metric`."""

    def __init__(self, metric: MetricTerms, backend: str) -> None:
        spec, h = metric.spec, metric.spec.n_halo
        shape = (spec.nx + 1 + 2 * h, spec.ny + 1 + 2 * h)
        self.metric, self.backend, self.shape = metric, backend, shape

        def s(a: np.ndarray) -> Any:
            out = np.zeros(shape)
            a = np.asarray(a, dtype=np.float64)
            out[: a.shape[0], : a.shape[1]] = a
            return from_numpy(out, backend)

        for name in FIELDS_2D:
            setattr(self, name, s(getattr(metric, name)))
        for k in range(1, 10):
            setattr(self, f"sin_sg{k}", s(metric.sin_sg[k - 1]))
            setattr(self, f"cos_sg{k}", s(metric.cos_sg[k - 1]))
        for name in EDGES_ALONG_J:
            e = np.asarray(getattr(metric, name), dtype=np.float64)
            setattr(self, name, s(np.broadcast_to(e[None, :], (shape[0], e.size))))
        for name in EDGES_ALONG_I:
            e = np.asarray(getattr(metric, name), dtype=np.float64)
            setattr(self, name, s(np.broadcast_to(e[:, None], (e.size, shape[1]))))
        for k, name in enumerate(("grid_lon", "grid_lat")):
            setattr(self, name, s(metric.grid[..., k]))
        for k, name in enumerate(("agrid_lon", "agrid_lat")):
            setattr(self, name, s(metric.agrid[..., k]))
        self.da_min, self.da_min_c = metric.da_min, metric.da_min_c
        self.sw_corner, self.se_corner = metric.sw_corner, metric.se_corner
        self.ne_corner, self.nw_corner = metric.ne_corner, metric.nw_corner

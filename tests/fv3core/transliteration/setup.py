"""Build the transliterated shallow-water core from FV3's grid (:class:`CubedSphere`) and initial
state (:func:`fv3core.testcases.shallow_water.init_case`), and read out FV3's diagnostics."""

from __future__ import annotations

import numpy as np

from fv3core.grid.cubed_to_latlon import c2l_ord4
from fv3core.grid.decomposition import decompose
from fv3core.grid.metric_terms import CubedSphere, MetricTerms
from fv3core.testcases.shallow_water import init_case
from tests.fv3core.transliteration.dyn_core import ShallowWaterCore, SWNamelist, TileFields
from tests.fv3core.transliteration.farray import FArray, FVector
from tests.fv3core.transliteration.grid import Bounds, Grid
from tests.fv3core.transliteration.sw_advection import AdvectionCore

_EDGES = ("edge_w", "edge_e", "edge_s", "edge_n")


def grid_from_metric(m: MetricTerms) -> Grid:
    """The transliteration's :class:`Grid` view of one rank's :class:`MetricTerms`."""
    spec, h = m.spec, m.spec.n_halo
    b = Bounds(spec.i0 + 1, spec.i1, spec.j0 + 1, spec.j1, h)
    lo = (b.isd, b.jsd)

    def fa(a: np.ndarray) -> FArray:
        return FArray(np.ascontiguousarray(a, dtype=np.float64), lo)

    names = ("dx", "dy", "dxa", "dya", "dxc", "dyc", "rdx", "rdy", "rdxa", "rdya", "rdxc", "rdyc",
             "area", "rarea", "area_c", "rarea_c", "cosa", "sina", "cosa_u", "cosa_v", "cosa_s",
             "sina_u", "sina_v", "rsin_u", "rsin_v", "rsina", "rsin2", "divg_u", "divg_v", "del6_u",
             "del6_v", "fC", "f0")  # fmt: skip
    arrays = {name: fa(getattr(m, name)) for name in names}
    edge_lo = {"edge_w": b.jsd, "edge_e": b.jsd, "edge_s": b.isd, "edge_n": b.isd}
    return Grid(
        bd=b, npx=spec.resolution + 1, npy=spec.resolution + 1,
        sin_sg={k: fa(m.sin_sg[k - 1]) for k in range(1, 10)},
        cos_sg={k: fa(m.cos_sg[k - 1]) for k in range(1, 10)},
        grid=(fa(m.grid[..., 0]), fa(m.grid[..., 1])),
        agrid=(fa(m.agrid[..., 0]), fa(m.agrid[..., 1])),
        **{e: FVector(np.asarray(getattr(m, e), dtype=np.float64), edge_lo[e]) for e in _EDGES},
        da_min=m.da_min, da_min_c=m.da_min_c,
        sw_corner=m.sw_corner, se_corner=m.se_corner, ne_corner=m.ne_corner, nw_corner=m.nw_corner,
        **arrays,
    )  # fmt: skip


class TransliteratedRun:
    """FV3's shallow-water test case ``test_case`` at C``resolution`` on ``layout x layout``
    ranks per tile, all in this process, on the transliterated routines."""

    def __init__(self, resolution: int, test_case: int, nml: SWNamelist, *, layout: int = 1,
                 radius: float = 6.3712e6, omega: float = 7.2921e-5, grav: float = 9.80665,
                 alpha: float = 0.0) -> None:  # fmt: skip
        self.cube = CubedSphere.build(resolution, radius=radius, omega=omega, alpha=alpha)
        self.grav = grav
        initial = init_case(self.cube, test_case, grav=grav)
        decomposition = decompose(resolution, layout)
        self.metrics: dict[int, MetricTerms] = {}
        grids, fields = {}, {}
        for r in decomposition.ranks:
            m = self.cube.metric_terms(r.spec)
            self.metrics[r.rank] = m
            g = grids[r.rank] = grid_from_metric(m)
            f = fields[r.rank] = TileFields.allocate(g)
            state = initial.for_rank(r.spec)
            f.delp.data[...] = state.delp
            f.phis.data[...] = state.phis
            f.u.data[...] = state.u
            f.v.data[...] = state.v
            if state.uc is not None and state.vc is not None:  # test_case 1: prescribed winds
                f.uc.data[...] = state.uc
                f.vc.data[...] = state.vc
        self.decomposition = decomposition
        core = AdvectionCore if test_case == 1 else ShallowWaterCore
        self.core = core(grids, fields, nml, decomposition.communicator)
        self.time = 0.0

    def step(self) -> None:
        self.core.step()
        self.time += self.core.nml.dt_atmos

    def global_fields(self) -> dict[str, np.ndarray]:
        """Depth ``delp * (1/grav)`` (m) and A-grid east/north winds (``c2l_ord4``, m/s) of the
        compute cells, (6, N, N) in [tile, i, j] order (one rank per tile)."""
        out: dict[str, list[np.ndarray]] = {"depth": [], "ua": [], "va": []}
        h = self.cube.n_halo
        agrav = 1.0 / self.grav
        for r in sorted(self.core.fields):
            f, m = self.core.fields[r], self.metrics[r]
            ua, va = c2l_ord4(f.u.data, f.v.data, m)
            n = m.spec.nx
            out["depth"].append((f.delp.data * agrav)[h : h + n, h : h + n])
            out["ua"].append(ua[h : h + n, h : h + n])
            out["va"].append(va[h : h + n, h : h + n])
        return {k: np.stack(v) for k, v in out.items()}

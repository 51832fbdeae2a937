"""Inputs and comparisons for testing the GTScript ports of FV3 routines against the NumPy
transliteration (:mod:`tests.fv3core.transliteration`): FV3's grid and TC2 state on one rank, the C-grid
state of the transliteration's ``c_sw``, perturbed, as transliteration arrays (``FArray``, FV3's
bounds) and as backend storages with the same index space (FV3 index (i, j) at array index
(i - is + 3, j - js + 3), FV3's shapes: cells (nx+6, ny+6), u points (nx+6, ny+7), v points
(nx+7, ny+6), corners (nx+7, ny+7))."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache, lru_cache
from typing import Any

import numpy as np

from fv3core.grid.metric_terms import CubedSphere, MetricTerms
from fv3core.grid.storages import GridStorages
from fv3core.grid.subdomain import SubdomainSpec
from fv3core.testcases.shallow_water import init_case
from stencils import StencilFactory
from stencils.dims import GridIndexing
from stencils.factory import GridStencilFactory
from stencils.storage import from_numpy, to_numpy
from tests.fv3core.transliteration.farray import FArray
from tests.fv3core.transliteration.grid import Grid
from tests.fv3core.transliteration.setup import grid_from_metric
from tests.fv3core.transliteration.sw_core import c_sw

RADIUS, OMEGA, GRAV = 6.3712e6, 7.2921e-5, 9.80665


@lru_cache(maxsize=4)
def cube(resolution: int) -> CubedSphere:
    return CubedSphere.build(resolution, radius=RADIUS, omega=OMEGA)


@cache
def shared_factory(backend: str = "numpy") -> StencilFactory:
    """One stencil factory per backend for all tests, so that a stencil is loaded once per
    process (each factory keeps its own builds)."""
    return StencilFactory(backend)


@lru_cache(maxsize=4)
def tc2_initial(resolution: int) -> Any:
    """FV3's ``init_case`` TC2 state on the whole cube."""
    return init_case(cube(resolution), 2, grav=GRAV)


def rank_specs(resolution: int, layout: int, tiles: tuple[int, ...] = tuple(range(6))
               ) -> list[SubdomainSpec]:  # fmt: skip
    """Every rank of a ``layout x layout`` decomposition of each of ``tiles``."""
    n = resolution // layout
    return [SubdomainSpec(resolution, t, a * n, (a + 1) * n, b * n, (b + 1) * n)
            for t in tiles for b in range(layout) for a in range(layout)]  # fmt: skip


#: (resolution, layout, tiles) of the tests: one rank per tile at C12 and C24 on all tiles;
#: 2x2 ranks per tile (each touching 2 tile edges and a cube vertex) on all tiles; 3x3 ranks
#: (touching 2, 1 or 0 tile edges) on two tiles
CASES = [(12, 1, tuple(range(6))), (24, 1, tuple(range(6))), (24, 2, tuple(range(6))),
         (24, 3, (0, 3))]  # fmt: skip
CASE_IDS = [f"C{n}-L{m}" for n, m, _ in CASES]


def edges_touched(spec: SubdomainSpec) -> int:
    return sum((spec.on_west, spec.on_east, spec.on_south, spec.on_north))


@dataclass
class RankCase:
    """One rank: FV3's metric terms, the transliteration's grid, the storages and a factory."""

    spec: SubdomainSpec
    metric: MetricTerms
    g: Grid
    grid: GridStorages
    factory: GridStencilFactory
    backend: str
    arrays: dict[str, FArray] = field(default_factory=dict)

    def fa(self, data: np.ndarray) -> FArray:
        """``data`` (FV3 shape, starting at isd, jsd) as a transliteration array (a copy)."""
        return FArray(np.array(data, dtype=np.float64), (self.g.bd.isd, self.g.bd.jsd))

    def storage(self, data: np.ndarray | FArray, nz: int = 1) -> Any:
        """A 3-D backend storage of ``data`` (2-D, repeated over ``nz`` levels, or 3-D)."""
        a = data.data if isinstance(data, FArray) else np.asarray(data)
        if a.ndim == 2:
            a = np.repeat(a[:, :, None], nz, axis=2)
        return from_numpy(np.ascontiguousarray(a, dtype=np.float64), self.backend)

    def shape(self, kind: str) -> tuple[int, int]:
        nx, ny = self.spec.nx + 6, self.spec.ny + 6
        return {"cell": (nx, ny), "u": (nx, ny + 1), "v": (nx + 1, ny), "corner": (nx + 1, ny + 1)}[kind]  # fmt: skip


def rank_case(spec: SubdomainSpec, factory: StencilFactory, nz: int = 1) -> RankCase:
    m = cube(spec.resolution).metric_terms(spec)
    grid = GridStorages(m, factory.backend)
    indexing = GridIndexing(spec.nx, spec.ny, nz, spec.n_halo)
    return RankCase(spec, m, grid_from_metric(m), grid, factory.on_grid(indexing), factory.backend)


def tc2_cgrid_state(case: RankCase, dt: float, seed: int, perturbation: float = 0.1
                    ) -> dict[str, np.ndarray]:  # fmt: skip
    """FV3's TC2 state of the rank (``init_case``) through the transliteration's ``c_sw``
    (nord 1: with the corner divergence), every field then perturbed by Gaussian noise of
    ``perturbation`` times its typical magnitude (90th percentile of ``|field|``) on all points
    (halos and corner regions too): delp, phis, u, v, ua, va, uc, vc, divg_d (FV3's shapes)."""
    s = tc2_initial(case.spec.resolution).for_rank(case.spec)
    g, fa = case.g, case.fa
    f = {k: fa(np.zeros(case.shape(kind))) for k, kind in (
        ("uc", "v"), ("vc", "u"), ("ua", "cell"), ("va", "cell"), ("ut", "v"), ("vt", "u"))}  # fmt: skip
    delp, pt, u, v = fa(s.delp), fa(np.ones(case.shape("cell"))), fa(s.u), fa(s.v)
    out = c_sw(delp, pt, u, v, 1, 0.5 * dt, g, f["uc"], f["vc"], f["ua"], f["va"], f["ut"], f["vt"])
    fields = {"delp": delp.data, "phis": np.asarray(s.phis), "u": u.data, "v": v.data,
              "ua": out.ua.data, "va": out.va.data, "uc": out.uc.data, "vc": out.vc.data,
              "divg_d": out.divg_d.data}  # fmt: skip
    rng = np.random.default_rng(seed)
    perturbed = {}
    for name, a in fields.items():
        a = np.where(np.isfinite(a), a, 0.0)
        scale = float(np.percentile(np.abs(a), 90)) or 1.0  # not FV3's 1e8 markers
        perturbed[name] = a + perturbation * scale * rng.standard_normal(a.shape)
    perturbed["delp"] = np.abs(perturbed["delp"])
    return perturbed


def run(launches: list) -> None:
    for launch in launches:
        launch()


def numpy_of(storage: Any) -> np.ndarray:
    """The first level of a storage as NumPy."""
    return to_numpy(storage)[:, :, 0]


def assert_equal_where_written(ours: np.ndarray, ref: np.ndarray, name: str) -> None:
    """Bitwise equality (NaN equal to NaN) over the reference's whole array."""
    ours = ours[: ref.shape[0], : ref.shape[1]]
    diff = ~((ours == ref) | (np.isnan(ours) & np.isnan(ref)))
    if diff.any():
        where = np.argwhere(diff)
        worst = np.nanmax(np.abs(ours - ref))
        raise AssertionError(f"{name}: {diff.sum()} points differ (max |diff| {worst:.3e}), first "
                             f"at array index {where[:4].tolist()}")  # fmt: skip

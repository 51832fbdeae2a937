"""FV3's ``c_sw`` in GTScript (fv3core.stencils.c_sw.CGridShallowWaterDynamics, with
fv3core.stencils.d2a2c_vect.DGridToCGridWinds) against the NumPy transliteration of FV3's
Fortran (tests.fv3core.transliteration.sw_core.c_sw / d2a2c_vect, which reproduces GFDL's FV3 to
round-off), fed the same inputs on the transliteration's Grid of the same rank.

Every output (delp and pt with their corner fills, ua, va, uc, vc, ut, vt, delpc, ptc, divg_d)
is compared over the points FV3 computes with tolerance 0, and every other point of every
argument must keep its value (the arrays' previous contents are random numbers).  Measured:
bitwise equal in every case, on numpy and on gt:cpu_ifirst.  Cases: FV3's TC2 initial state at
C12 and C24 on the 6 tiles (one rank per tile, each with the 4 cube corners; nord 2 and 0), the
same with smooth random perturbations of u, v, delp and pt (winds of both signs, corner halo
regions nonzero), C24 with 2x2 ranks per tile (each rank touches 2 tile edges and has one cube
corner) and ranks of the 3x3 layout touching 0, 1 or 2 tile edges; slow: all 3x3 ranks, ranks
1-5 cells from a tile edge they do not touch, and gt:cpu_ifirst at C12."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from fv3core.errors import FV3ConfigError
from fv3core.grid.metric_terms import CubedSphere
from fv3core.grid.storages import GridStorages
from fv3core.grid.subdomain import SubdomainSpec
from fv3core.stencils.c_sw import CGridShallowWaterDynamics
from fv3core.stencils.d2a2c_vect import DGridToCGridWinds
from fv3core.testcases.shallow_water import init_case
from stencils.dims import GridIndexing
from stencils.factory import StencilFactory
from stencils.storage import from_numpy
from tests.fv3core.transliteration import sw_core
from tests.fv3core.transliteration.farray import FArray
from tests.fv3core.transliteration.setup import grid_from_metric

RADIUS, OMEGA = 6.3712e6, 7.2921e-5
DT2 = 0.5 * 600.0  # FV3's dt2 of the TC2 C24 reference run (dt_atmos 1200 s, n_split 2)
H = 3
#: c_sw's arguments and FV3's staggering offsets (cells + (di, dj))
STAGGER = {"delp": (0, 0), "pt": (0, 0), "u": (0, 1), "v": (1, 0), "uc": (1, 0), "vc": (0, 1),
           "ua": (0, 0), "va": (0, 0), "ut": (0, 0), "vt": (0, 0), "delpc": (0, 0),
           "ptc": (0, 0), "divg_d": (1, 1)}  # fmt: skip
PROGNOSTIC = ("delp", "pt", "u", "v")


@pytest.fixture(scope="module")
def cubes() -> dict[int, tuple[CubedSphere, object]]:
    out = {}
    for n in (12, 24):
        cube = CubedSphere.build(n, radius=RADIUS, omega=OMEGA)
        out[n] = (cube, init_case(cube, 2))
    return out


@pytest.fixture(scope="module")
def numpy_factory() -> StencilFactory:
    return StencilFactory("numpy")


def _smooth(spec: SubdomainSpec, stagger: tuple[int, int], rng: np.random.Generator,
            amplitude: float) -> np.ndarray:  # fmt: skip
    """A smooth random field on the rank's points of ``stagger`` (tile-global positions, the
    halo included): a few long waves with random amplitudes, wavenumbers and phases."""
    si, sj = stagger
    i = spec.i0 - H + np.arange(spec.nx + 2 * H + si) + 0.5 * (1 - si)
    j = spec.j0 - H + np.arange(spec.ny + 2 * H + sj) + 0.5 * (1 - sj)
    x, y = np.meshgrid(i / spec.resolution, j / spec.resolution, indexing="ij")
    out = np.zeros_like(x)
    for _ in range(4):
        kx, ky = rng.integers(-2, 3, size=2)
        out += rng.uniform(-1.0, 1.0) * np.sin(2 * np.pi * (kx * x + ky * y) + rng.uniform(0, 6.3))
    return amplitude * out


@dataclass
class Case:
    """One rank's inputs: the prognostic state and the previous contents of every array."""

    spec: SubdomainSpec
    metric: object
    arrays: dict[str, np.ndarray]


def _case(cubes, spec: SubdomainSpec, perturbed: bool, seed: int = 0) -> Case:
    cube, initial = cubes[spec.resolution]
    state = initial.for_rank(spec)
    rng = np.random.default_rng([seed, spec.tile, spec.i0, spec.j0])
    shape = {k: (spec.nx + 2 * H + di, spec.ny + 2 * H + dj) for k, (di, dj) in STAGGER.items()}
    arrays = {k: rng.standard_normal(shape[k]) for k in STAGGER}
    arrays.update(delp=state.delp.copy(), pt=np.ones(shape["pt"]), u=state.u.copy(),
                  v=state.v.copy())  # fmt: skip
    if perturbed:
        for name, amplitude in (("u", 30.0), ("v", 30.0), ("delp", 1.5e3), ("pt", 0.1)):
            arrays[name] += _smooth(spec, STAGGER[name], rng, amplitude)
    return Case(spec, cube.metric_terms(spec), arrays)


def _transliteration(case: Case, nord: int, sw_dynamics: bool = True) -> dict[str, np.ndarray]:
    """The transliteration's c_sw on copies of the inputs: the in-place arrays, and delpc, ptc,
    divg_d (which it returns as new arrays) over FV3's ranges on top of the previous contents."""
    g = grid_from_metric(case.metric)
    lo = (g.bd.isd, g.bd.jsd)
    inout = [k for k in case.arrays if k not in ("delpc", "ptc", "divg_d")]
    fa = {k: FArray(case.arrays[k].copy(), lo) for k in inout}
    out = sw_core.c_sw(fa["delp"], fa["pt"], fa["u"], fa["v"], nord, DT2, g, fa["uc"], fa["vc"],
                       fa["ua"], fa["va"], fa["ut"], fa["vt"], sw_dynamics=sw_dynamics)  # fmt: skip
    ref = {k: a.data for k, a in fa.items()}
    s = case.spec
    cells = (slice(H - 1, H + s.nx + 1), slice(H - 1, H + s.ny + 1))
    corners = (slice(H, H + s.nx + 1), slice(H, H + s.ny + 1))
    for name, value, where in (("delpc", out.delpc, cells), ("ptc", out.ptc, cells),
                               ("divg_d", out.divg_d, corners)):  # fmt: skip
        ref[name] = case.arrays[name].copy()
        if value is not None:
            ref[name][where] = value.data[where]
    return ref


def _gtscript(case: Case, nord: int, factory: StencilFactory,
              sw_dynamics: bool = True) -> tuple[dict[str, np.ndarray], int]:  # fmt: skip
    s = case.spec
    grid = factory.on_grid(GridIndexing(s.nx, s.ny, 1, H))
    metric = GridStorages(case.metric, factory.backend)
    routine = CGridShallowWaterDynamics(grid, metric, s, nord, DT2, sw_dynamics=sw_dynamics)
    storages = {k: from_numpy(v[..., None], factory.backend) for k, v in case.arrays.items()}
    launches = routine.bind(**storages)
    for launch in launches:
        launch()
    return {k: np.asarray(v)[..., 0] for k, v in storages.items()}, len(launches)


def _differences(ref: dict[str, np.ndarray], got: dict[str, np.ndarray]) -> dict[str, tuple]:
    """Per array: (points that differ, max abs diff, max rel diff); NaN equals NaN."""
    out = {}
    for name in STAGGER:
        r, g = ref[name], got[name]
        differ = ~((r == g) | (np.isnan(r) & np.isnan(g)))
        if differ.any():
            d = np.abs(r - g)[differ]
            out[name] = (int(differ.sum()), float(np.nanmax(d)),
                         float(np.nanmax(d / np.maximum(np.abs(r[differ]), 1e-300))))  # fmt: skip
    return out


def _check(cubes, specs, factory, nord: int = 2, perturbed: bool = False,
           sw_dynamics: bool = True) -> None:  # fmt: skip
    failures = {}
    for spec in specs:
        case = _case(cubes, spec, perturbed)
        got, n_launches = _gtscript(case, nord, factory, sw_dynamics)
        assert n_launches == (17 if nord > 0 else 16)
        diff = _differences(_transliteration(case, nord, sw_dynamics), got)
        if diff:
            failures[(spec.tile, spec.i0, spec.i1, spec.j0, spec.j1)] = diff
    assert not failures, failures


def _layout(n: int, layout: int, tiles=range(6)) -> list[SubdomainSpec]:
    m = n // layout
    return [SubdomainSpec(n, t, a * m, (a + 1) * m, b * m, (b + 1) * m)
            for t in tiles for a in range(layout) for b in range(layout)]  # fmt: skip


@pytest.mark.parametrize("n, nord", [(12, 2), (12, 0), (24, 2)])
def test_tc2_six_tiles_bitwise(cubes, numpy_factory, n: int, nord: int) -> None:
    """FV3's TC2 initial state, one rank per tile: every output bitwise the transliteration's
    (nord = 0: divg_d untouched)."""
    _check(cubes, _layout(n, 1), numpy_factory, nord)


def test_perturbed_state_bitwise(cubes, numpy_factory) -> None:
    """TC2 plus smooth random perturbations (u, v up to ~90 m/s, so that ua, va, uc, vc have
    both signs on every tile; delp up to 10%, pt up to 0.2), also in the cube-corner halo
    regions: bitwise."""
    _check(cubes, _layout(12, 1), numpy_factory, perturbed=True)


def test_three_d_core_pt_transport_bitwise(cubes, numpy_factory) -> None:
    """The 3-D core's c_sw (FV3 built without ``SW_DYNAMICS``): ``ptc`` from the upwind ``pt``
    fluxes, on the perturbed state (pt = 1 + up to 0.2, both wind signs): bitwise; and ``ptc``
    differs from ``pt`` (the transport is not the shallow-water copy)."""
    _check(cubes, _layout(12, 1), numpy_factory, perturbed=True, sw_dynamics=False)
    case = _case(cubes, _layout(12, 1)[0], True)
    got, _ = _gtscript(case, 2, numpy_factory, sw_dynamics=False)
    cells = (slice(H, H + 12), slice(H, H + 12))
    assert np.abs(got["ptc"][cells] - got["pt"][cells]).max() > 1e-6


def _nonhydrostatic(case: Case, factory: StencilFactory, layout_w: np.ndarray):
    """Both c_sw's non-hydrostatic branch on ``case`` with ``w``: (transliteration, ours),
    each a dict of every array plus ``w`` and ``wc``."""
    g = grid_from_metric(case.metric)
    lo = (g.bd.isd, g.bd.jsd)
    fa = {k: FArray(v.copy(), lo) for k, v in case.arrays.items() if k not in ("delpc", "ptc", "divg_d")}
    fa["w"] = FArray(layout_w.copy(), lo)
    out = sw_core.c_sw(fa["delp"], fa["pt"], fa["u"], fa["v"], 2, DT2, g, fa["uc"], fa["vc"], fa["ua"], fa["va"],
                       fa["ut"], fa["vt"], sw_dynamics=False, w=fa["w"])  # fmt: skip
    ref = {k: a.data for k, a in fa.items()}
    s = case.spec
    cells = (slice(H - 1, H + s.nx + 1), slice(H - 1, H + s.ny + 1))
    s_grid = factory.on_grid(GridIndexing(s.nx, s.ny, 1, H))
    routine = CGridShallowWaterDynamics(s_grid, GridStorages(case.metric, factory.backend), s, 2, DT2,
                                        sw_dynamics=False, hydrostatic=False)  # fmt: skip
    arrays = {**case.arrays, "w": layout_w, "wc": np.zeros_like(layout_w)}
    storages = {k: from_numpy(v.copy()[..., None], factory.backend) for k, v in arrays.items()}
    for launch in routine.bind(**storages):
        launch()
    got = {k: np.asarray(v)[..., 0] for k, v in storages.items()}
    ref["wc"] = np.zeros_like(layout_w)
    ref["wc"][cells] = out.wc.data[cells]
    return ref, got, cells


def test_nonhydrostatic_w_transport_bitwise(cubes, numpy_factory) -> None:
    """FV3's ``.not. hydrostatic`` c_sw: ``w`` corner-filled (``fill_4corners``) and transported
    with the ``delp`` fluxes into ``wc``, on the perturbed state with a ``w`` of both signs, six
    tiles: ``wc``, ``w`` (its corner fills), the winds and ``delp``, ``pt`` bitwise; and ``wc``
    differs from ``w``."""
    for spec in _layout(12, 1):
        case = _case(cubes, spec, True, seed=2)
        w = _smooth(spec, (0, 0), np.random.default_rng(spec.tile), 3.0)
        ref, got, cells = _nonhydrostatic(case, numpy_factory, w)
        for name in ("w", "wc", "delp", "pt", "uc", "vc", "ut", "vt"):
            np.testing.assert_array_equal(got[name], ref[name], err_msg=f"tile {spec.tile} {name}")
        assert np.abs(got["wc"][cells] - got["w"][cells]).max() > 1e-3


def test_nonhydrostatic_needs_w_and_the_3d_core(cubes, numpy_factory) -> None:
    """The shallow-water core is hydrostatic, and each form takes its own arguments."""
    spec = _layout(12, 1, tiles=(0,))[0]
    case = _case(cubes, spec, perturbed=False)
    grid = numpy_factory.on_grid(GridIndexing(spec.nx, spec.ny, 1, H))
    storages = GridStorages(case.metric, "numpy")
    with pytest.raises(FV3ConfigError, match="hydrostatic"):
        CGridShallowWaterDynamics(grid, storages, spec, 2, DT2, hydrostatic=False)
    routine = CGridShallowWaterDynamics(grid, storages, spec, 2, DT2, sw_dynamics=False, hydrostatic=False)
    fields = {k: from_numpy(v[..., None], "numpy") for k, v in case.arrays.items()}
    with pytest.raises(FV3ConfigError, match="w and wc"):
        routine.bind(**fields)


def test_layout_2x2_bitwise(cubes, numpy_factory) -> None:
    """C24, 2x2 ranks per tile (24 ranks; each touches two tile edges and has one cube
    corner), perturbed state: bitwise."""
    _check(cubes, _layout(24, 2), numpy_factory, perturbed=True)


def test_layout_3x3_bitwise(cubes, numpy_factory) -> None:
    """C24, 3x3 ranks per tile, perturbed: a rank touching no tile edge, one touching one and
    one touching two (with a cube corner), on tiles 0 and 2: bitwise.  (The other ranks of the
    layout need their own builds; the slow test below runs them.)"""
    specs = [s for s in _layout(24, 3, tiles=(0, 2)) if (s.i0, s.j0) in ((8, 8), (0, 8), (0, 0))]
    _check(cubes, specs, numpy_factory, perturbed=True)


@pytest.mark.slow  # ~10 more rank configurations of ~10 numpy builds each (~4 min cold)
def test_all_3x3_ranks_and_ragged_ranks_bitwise(cubes, numpy_factory) -> None:
    """C24 3x3 on all tiles, and ranks 1-5 cells from a tile edge they do not touch, where
    FV3's conditions on the tile-global index (``j == 1``, ``i <= npt - 1``, the kinetic-energy
    rows) and those on the rank (``is == 1``, the corners) select different points: bitwise."""
    bounds = [(2, 20, 1, 23), (1, 6, 19, 23), (0, 5, 4, 24), (5, 24, 0, 3), (3, 21, 2, 22)]
    specs = _layout(24, 3) + [SubdomainSpec(24, 1, *b) for b in bounds]
    _check(cubes, specs, numpy_factory, perturbed=True)


def test_d2a2c_vect_alone_bitwise(cubes, numpy_factory) -> None:
    """DGridToCGridWinds against the transliteration's d2a2c_vect (unscaled ut, vt)."""
    for spec in _layout(12, 1, tiles=(0, 3)):
        case = _case(cubes, spec, perturbed=True, seed=1)
        g = grid_from_metric(case.metric)
        names = ("u", "v", "ua", "va", "uc", "vc", "ut", "vt")
        fa = {k: FArray(case.arrays[k].copy(), (g.bd.isd, g.bd.jsd)) for k in names}
        sw_core.d2a2c_vect(*(fa[k] for k in ("u", "v")), g, *(fa[k] for k in names[2:]))
        grid = numpy_factory.on_grid(GridIndexing(spec.nx, spec.ny, 1, H))
        routine = DGridToCGridWinds(grid, GridStorages(case.metric, "numpy"), spec)
        storages = {k: from_numpy(case.arrays[k][..., None], "numpy") for k in names}
        for launch in routine.bind(**storages):
            launch()
        for k in names:
            np.testing.assert_array_equal(np.asarray(storages[k])[..., 0], fa[k].data, err_msg=k)


def test_refusals(cubes, numpy_factory) -> None:
    """A nord outside FV3's 0-3 and nord > 0 without divg_d are refused by name."""
    spec = _layout(12, 1, tiles=(0,))[0]
    case = _case(cubes, spec, perturbed=False)
    grid = numpy_factory.on_grid(GridIndexing(spec.nx, spec.ny, 1, H))
    storages = GridStorages(case.metric, "numpy")
    with pytest.raises(FV3ConfigError, match="nord=4"):
        CGridShallowWaterDynamics(grid, storages, spec, 4, DT2)
    routine = CGridShallowWaterDynamics(grid, storages, spec, 2, DT2)
    fields = {k: from_numpy(v[..., None], "numpy") for k, v in case.arrays.items()}
    fields.pop("divg_d")
    with pytest.raises(FV3ConfigError, match="divg_d"):
        routine.bind(**fields)


@pytest.mark.slow  # 14 C++ stencil builds: ~11 min cold on 2 cores (measured), ~1 s warm
def test_gt_cpu_ifirst_c12(cubes) -> None:
    """The compiled backend gt:cpu_ifirst at C12, perturbed, all 6 tiles: bitwise the
    transliteration's."""
    _check(cubes, _layout(12, 1), StencilFactory("gt:cpu_ifirst"), perturbed=True)

"""FV3's vorticity damping (``do_vort_damp``, ``vtdm4``) in GTScript: DelnFlux (FV3's
``deln_flux`` and ``del6_vt_flux``) and DGridShallowWaterLagrangianDynamics with it against the NumPy
transliteration (tests.fv3core.transliteration.deln_flux, sw_core.d_sw, dyn_core), bit for bit; the
nord 0 operator against a NumPy del2 written from FV3's ``del6`` weights and the analytic
Laplacian of a spherical harmonic; mass conservation; the keys in FV3Config, the namelist and
the CLI.

Inputs of the routine tests: FV3's TC2 state after one transliterated ``c_sw`` step (as in
tests/fv3core/test_fv3_d_sw.py, whose helpers are used), perturbed so that every difference
takes both signs; on a 2x2 layout analytic fields on FV3's cell centres."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fv3core.config import FV3Config
from fv3core.errors import FV3ConfigError
from fv3core.grid.decomposition import decompose
from fv3core.grid.metric_terms import CubedSphere, MetricTerms
from fv3core.grid.storages import GridStorages
from fv3core.stencils.d_sw import DGridShallowWaterLagrangianDynamics
from fv3core.stencils.deln_flux import DelnFlux, damping_coefficient
from fv3core.stencils.divergence_damping import DivergenceDamping
from stencils.dims import GridIndexing
from stencils.factory import StencilFactory
from stencils.storage import from_numpy
from tests.fv3core.test_fv3_d_sw import (
    DT,
    FIELDS,
    NORD0,
    NORD2,
    Damping,
    RankCase,
    compare,
    dsw_inputs,
    perturbed,
)
from tests.fv3core.transliterated_run import assert_run_equals_transliteration
from tests.fv3core.transliteration import sw_core
from tests.fv3core.transliteration.deln_flux import del6_vt_flux, deln_flux
from tests.fv3core.transliteration.farray import FArray
from tests.fv3core.transliteration.setup import grid_from_metric

NAMELIST = Path(__file__).parent / "data" / "tc2_C24_d1_input.nml"
H = 3
#: FV3's recommended range of vtdm4 is below d4_bg (0.12 here)
VTDM4 = 0.05


@pytest.fixture(scope="module")
def factory() -> StencilFactory:
    return StencilFactory("numpy")


@pytest.fixture(scope="module")
def c12_tc2() -> dict[int, RankCase]:
    return dsw_inputs(12, 1)


@pytest.fixture(scope="module")
def c12(c12_tc2) -> dict[int, RankCase]:
    return perturbed(c12_tc2, seed=7)


def _storage(a: np.ndarray, backend: str = "numpy") -> Any:
    return from_numpy(np.ascontiguousarray(a, dtype=np.float64)[:, :, None], backend)


def _faces(nx: int, ny: int) -> tuple[tuple[int, int], tuple[int, int]]:
    return (nx + 2 * H + 1, ny + 2 * H), (nx + 2 * H, ny + 2 * H + 1)


def _check_fluxes(factory: StencilFactory, metric: MetricTerms, g: Any, q: np.ndarray,
                  nord: int, rng: np.random.Generator) -> None:  # fmt: skip
    """DelnFlux of ``q`` (cells with halo) equals the transliteration bit for bit: as
    ``deln_flux`` (added to random fluxes of the diffusive fluxes' size) and as ``del6_vt_flux``
    (written), on the compute faces; the damping is not negligible there."""
    spec, b, be = metric.spec, g.bd, factory.backend
    nx, ny = spec.nx, spec.ny
    grid = GridStorages(metric, factory.backend)
    gf = factory.on_grid(GridIndexing(nx, ny, 1, H))
    xs, ys = _faces(nx, ny)
    xi, yj, xc, yc = slice(H, H + nx + 1), slice(H, H + ny + 1), slice(H, H + nx), slice(H, H + ny)
    damp = damping_coefficient(VTDM4, g.da_min, nord)
    # del6_vt_flux: written into fx, fy
    d2 = FArray.full((b.isd, b.jsd), (b.ied, b.jed), np.nan)
    fx2 = FArray.full((b.isd, b.jsd), (b.ied + 1, b.jed), np.nan)
    fy2 = FArray.full((b.isd, b.jsd), (b.ied, b.jed + 1), np.nan)
    del6_vt_flux(nord, g.npx, g.npy, damp, FArray(q.copy(), (b.isd, b.jsd)), d2, fx2, fy2, g)
    ref_x, ref_y = fx2.data[xi, yc], fy2.data[xc, yj]
    fx, fy = _storage(np.zeros(xs), be), _storage(np.zeros(ys), be)
    for launch in DelnFlux(gf, grid, spec, nord, damp, add=False).bind(_storage(q, be), fx, fy):
        launch()
    np.testing.assert_array_equal(np.asarray(fx)[xi, yc, 0], ref_x)
    np.testing.assert_array_equal(np.asarray(fy)[xc, yj, 0], ref_y)
    assert np.isfinite(ref_x).all() and np.abs(ref_x).max() > 0.0
    # deln_flux: added to the transport fluxes
    scale = np.abs(ref_x).max()
    fx0, fy0 = scale * rng.standard_normal(xs), scale * rng.standard_normal(ys)
    fx_ref = FArray(fx0[xi, yc].copy(), (b.is_, b.js))
    fy_ref = FArray(fy0[xc, yj].copy(), (b.is_, b.js))
    deln_flux(nord, b.is_, b.ie, b.js, b.je, g.npx, g.npy, damp,
              FArray(q.copy(), (b.isd, b.jsd)), fx_ref, fy_ref, g)  # fmt: skip
    fx, fy = _storage(fx0, be), _storage(fy0, be)
    for launch in DelnFlux(gf, grid, spec, nord, damp, add=True).bind(_storage(q, be), fx, fy):
        launch()
    np.testing.assert_array_equal(np.asarray(fx)[xi, yc, 0], fx_ref.data)
    np.testing.assert_array_equal(np.asarray(fy)[xc, yj, 0], fy_ref.data)


@pytest.mark.parametrize("nord", [0, 1, 2])
def test_deln_flux_equals_transliteration_c12(factory, c12, nord) -> None:
    """All six tiles at C12 (every rank holds four tile edges and four cube vertices): the
    fluxes of delp and of a vorticity-like field of both signs equal the transliterated
    deln_flux and del6_vt_flux bit for bit."""
    rng = np.random.default_rng(nord)
    for case in c12.values():
        for q in (case.arrays["delp"], 1e-5 * case.arrays["ua"]):
            _check_fluxes(factory, case.metric, case.grid, q, nord, rng)


def _harmonic(lonlat: np.ndarray) -> np.ndarray:
    """A spherical harmonic of degree 2 (Laplacian ``-6 / R^2`` times it) tilted against the
    cube: ``x y + y z + z x / 2`` on the unit sphere."""
    lon, lat = lonlat[..., 0], lonlat[..., 1]
    x, y, z = np.cos(lat) * np.cos(lon), np.cos(lat) * np.sin(lon), np.sin(lat)
    return x * y + y * z + 0.5 * z * x


def test_deln_flux_equals_transliteration_c24_layout_2x2(factory) -> None:
    """C24 on 2x2 ranks per tile, the ranks of the first and the last tile (each a quarter
    tile: two tile edges and one cube vertex, in each of the four arrangements) with an analytic
    field plus noise: bit for bit, nord 0, 1, 2."""
    cube = CubedSphere.build(24, radius=6.3712e6, omega=7.2921e-5)
    rng = np.random.default_rng(24)
    ranks = decompose(24, 2).ranks
    assert len(ranks) == 24
    for r in ranks[:4] + ranks[-4:]:
        m = cube.metric_terms(r.spec)
        q = 1.0e4 * (1.0 + 0.1 * _harmonic(m.agrid)) + rng.standard_normal(m.area.shape)
        for nord in (0, 1, 2):
            _check_fluxes(factory, m, grid_from_metric(m), q, nord, rng)


def _numpy_del2(m: MetricTerms, q: np.ndarray) -> np.ndarray:
    """FV3's discrete Laplacian of the compute cells written from the del6 weights: the
    weighted differences to the four neighbours over the cell area."""
    nx, ny = m.spec.nx, m.spec.ny
    c = (slice(H, H + nx), slice(H, H + ny))
    w, e, s, n = (slice(H - 1, H + nx - 1), c[1]), (slice(H + 1, H + nx + 1), c[1]), \
        (c[0], slice(H - 1, H + ny - 1)), (c[0], slice(H + 1, H + ny + 1))  # fmt: skip
    dv, du = m.del6_v, m.del6_u
    return m.rarea[c] * (dv[c] * (q[w] - q[c]) + dv[e] * (q[e] - q[c])
                         + du[c] * (q[s] - q[c]) + du[c[0], n[1]] * (q[n] - q[c]))  # fmt: skip


def _divergence(factory: StencilFactory, m: MetricTerms, q: np.ndarray, nord: int,
                damp: float) -> np.ndarray:  # fmt: skip
    """``(fx2 - fx2(i+1) + fy2 - fy2(j+1)) * rarea`` of DelnFlux's fluxes of q: the change
    the damping makes to the compute cells."""
    nx, ny = m.spec.nx, m.spec.ny
    gf = factory.on_grid(GridIndexing(nx, ny, 1, H))
    xs, ys = _faces(nx, ny)
    fx, fy = _storage(np.zeros(xs)), _storage(np.zeros(ys))
    grid = GridStorages(m, factory.backend)
    for launch in DelnFlux(gf, grid, m.spec, nord, damp, add=True).bind(_storage(q), fx, fy):
        launch()
    fx, fy = np.asarray(fx)[:, :, 0], np.asarray(fy)[:, :, 0]
    c = (slice(H, H + nx), slice(H, H + ny))
    div = (fx[c] - fx[H + 1 : H + nx + 1, c[1]] + fy[c] - fy[c[0], H + 1 : H + ny + 1])
    return div * m.rarea[c]


def test_nord0_damping_is_fv3s_del2_and_near_the_analytic_laplacian(factory, c12) -> None:
    """nord 0: the change DelnFlux's fluxes make is ``damp`` times FV3's del2 written
    directly in NumPy from the del6 weights (to 1e-13 of its largest value: only the order of
    the scaling differs), on every tile, for delp and for the degree-2 harmonic; and that del2
    is the harmonic's analytic Laplacian ``-6 q / R^2`` to within 20 % (L2, cells two or more from
    a tile edge, C12 and C24).  FV3's del6 weights (``sin * dy / dxc``) leave out the grid's
    non-orthogonal terms, so the operator does not converge to the Laplacian: measured 15 %, 17 %,
    18 %, 19 % at C12, C24, C48, C96."""
    radius = 6.3712e6
    for case in c12.values():
        m = case.metric
        for q in (case.arrays["delp"], _harmonic(m.agrid)):
            damp = damping_coefficient(VTDM4, m.da_min, 0)
            lap = _numpy_del2(m, q)
            ours = _divergence(factory, m, q, 0, damp)
            np.testing.assert_allclose(ours, damp * lap, rtol=0, atol=1e-13 * np.abs(damp * lap).max())
    cube = CubedSphere.build(24, radius=radius, omega=7.2921e-5)
    c24 = [cube.metric_terms(r.spec) for r in decompose(24, 1).ranks]
    for resolution, metrics in ((12, [case.metric for case in c12.values()]), (24, c24)):
        err = ref = 0.0
        for m in metrics:
            q = _harmonic(m.agrid)
            inner = (slice(2, resolution - 2),) * 2
            c = (slice(H + 2, H + resolution - 2),) * 2
            exact = -6.0 / radius**2 * q[c]
            err += float((m.area[c] * (_numpy_del2(m, q)[inner] - exact) ** 2).sum())
            ref += float((m.area[c] * exact**2).sum())
        assert np.sqrt(err / ref) < 0.2, (resolution, np.sqrt(err / ref))


@pytest.mark.parametrize("nord", [0, 1, 2])
def test_damping_fluxes_conserve_mass(factory, c12_tc2, nord) -> None:
    """The damping of delp alone changes the global sum of delp * area by round-off only: the
    sum over all six tiles of the area-weighted change is below 1e-14 of the sum of its
    magnitudes (TC2's delp with FV3's halo update: the fluxes through shared tile edges
    cancel)."""
    total = magnitude = 0.0
    for case in c12_tc2.values():
        m = case.metric
        damp = damping_coefficient(VTDM4, m.da_min, nord)
        change = _divergence(factory, m, case.arrays["delp"], nord, damp) * m.area[H:-H, H:-H]
        total += float(change.sum())
        magnitude += float(np.abs(change).sum())
    assert magnitude > 0.0 and abs(total) < 1e-14 * magnitude


def _damped_reference(case: RankCase, damping: Damping, nord_v: int,
                      damp_v: float) -> dict[str, np.ndarray]:  # fmt: skip
    """The transliterated d_sw with the vorticity damping: every output ``compare`` reads."""
    f = case.farrays()
    ut, vt = sw_core._contravariant_winds(f["uc"].copy(), f["vc"].copy(), DT, case.grid)
    res = sw_core.d_sw(*(f[n] for n in FIELDS), DT, 8, 8, 8, damping.nord, damping.dddmp,
                       damping.d2_bg, damping.d4_bg, case.grid, nord_v=nord_v, damp_v=damp_v)  # fmt: skip
    out = {n: f[n].data for n in FIELDS}
    out.update(ut=ut.data, vt=vt.data, crx=res.crx.data, cry=res.cry.data, xfx=res.xfx.data,
               yfx=res.yfx.data, fx=res.fx.data, fy=res.fy.data)  # fmt: skip
    return out


def _gtscript_d_sw(factory: StencilFactory, case: RankCase, damping: Damping, nord_v: int,
                   damp_v: float) -> tuple[DGridShallowWaterLagrangianDynamics, dict[str, Any], int]:  # fmt: skip
    spec = case.metric.spec
    grid = GridStorages(case.metric, factory.backend)
    gf = factory.on_grid(GridIndexing(spec.nx, spec.ny, 1, H))
    divergence = DivergenceDamping(gf, grid, spec, damping.nord, damping.dddmp, damping.d2_bg,
                                      damping.d4_bg, DT)  # fmt: skip
    dsw = DGridShallowWaterLagrangianDynamics(gf, grid, spec, DT, 8, 8, 8, divergence, nord_v=nord_v,
                               damp_v=damp_v)  # fmt: skip
    st = {n: _storage(case.arrays[n]) for n in FIELDS}
    launches = dsw.bind(*(st[n] for n in FIELDS))
    for launch in launches:
        launch()
    return dsw, st, len(launches)


@pytest.mark.parametrize(("damping", "nord_v", "damp_v"), [
    (NORD2, 2, VTDM4), (NORD0, 0, VTDM4), (NORD2, 1, VTDM4), (NORD2, 2, 5.0e-5),
], ids=["nord2", "nord0", "nord_v1", "vorticity_only"])  # fmt: skip
def test_d_sw_with_vorticity_damping_equals_transliteration_c12(factory, c12, damping, nord_v,
                                                                damp_v) -> None:  # fmt: skip
    """d_sw with FV3's divergence damping and the vorticity damping (``vtdm4`` 0.05: delp and
    the vorticity; 5e-5: between FV3's two thresholds, the vorticity only) equals the
    transliterated d_sw bit for bit at C12 (all six tiles; two for the other orders): delp, u,
    v, the work arrays and the mass fluxes; the damping changes u (and, above 1e-4, delp)."""
    ranks = (0, 1, 2, 3, 4, 5) if nord_v == damping.nord else (0, 3)
    for rank in ranks:
        case = c12[rank]
        spec = case.metric.spec
        dsw, st, n = _gtscript_d_sw(factory, case, damping, nord_v, damp_v)
        ref = _damped_reference(case, damping, nord_v, damp_v)
        compare(dsw, st, None, ref, H, spec.nx, spec.ny)
    undamped = _damped_reference(case, damping, nord_v, 0.0)
    interior = (slice(H, H + spec.nx), slice(H, H + spec.ny))
    assert not np.array_equal(ref["u"][interior], undamped["u"][interior])
    assert np.array_equal(ref["delp"], undamped["delp"]) == (damp_v <= 1.0e-4)
    # launches: none more without damping (test_fv3_d_sw), per DelnFlux 3 + 3 nord_v
    # stencils and 2 nord_v + 2 corner copies (every C12 rank holds cube vertices)
    _, _, base = _gtscript_d_sw(factory, c12[0], damping, 0, 0.0)
    per_flux = 3 + 3 * nord_v + (2 * nord_v + 2 if nord_v > 0 else 0)
    assert n == base + per_flux * (2 if damp_v > 1.0e-4 else 1)


@pytest.mark.parametrize(("case", "resolution", "hours"), [
    ("williamson6", 12, 1),
    pytest.param("williamson2", 24, 6, marks=pytest.mark.slow),
])  # fmt: skip
def test_fv3_dynamics_with_vorticity_damping_equals_transliteration(tmp_path, case, resolution,
                                                                    hours) -> None:  # fmt: skip
    """FV3's scheme from the reference namelist with ``do_vort_damp = .true.``, ``vtdm4 =
    0.06`` (nord 2: nord_v 2; 2 acoustic steps per 1200 s step): Rossby-Haurwitz (TC6) at C12
    after 1 h, and (slow) TC2 at C24 after 6 h, equal the transliterated dyn_core bit for bit,
    mass to round-off."""
    path = tmp_path / "input.nml"
    path.write_text(NAMELIST.read_text().replace(
        "nord = 2", "nord = 2\n       do_vort_damp = .true.\n       vtdm4 = 0.06"))  # fmt: skip
    cfg = FV3Config.from_namelist(path, case=case, resolution=resolution, days=hours / 24)
    assert (cfg.do_vort_damp, cfg.vtdm4, cfg.nord) == (True, 0.06, 2)
    assert_run_equals_transliteration(cfg)


def test_keys_in_config_namelist_and_cli(c12, tmp_path) -> None:
    """do_vort_damp and vtdm4: FV3's defaults (.false., 0), read from a namelist, given on the
    command line; FV3Config refuses a non-logical do_vort_damp and a negative vtdm4."""
    from workflows.cli import build_parser
    from workflows.commands.fv3 import _config

    default = FV3Config(case="williamson2")
    assert (default.do_vort_damp, default.vtdm4) == (False, 0.0)
    path = tmp_path / "input.nml"
    path.write_text(NAMELIST.read_text().replace(
        "nord = 2", "nord = 2\n       do_vort_damp = .true.\n       vtdm4 = 0.05"))  # fmt: skip
    cfg = FV3Config.from_namelist(path)
    assert (cfg.do_vort_damp, cfg.vtdm4) == (True, 0.05)
    args = build_parser().parse_args(["fv3", "run", "--namelist", str(NAMELIST),
                                      "--do-vort-damp", "--vtdm4", "0.04"])  # fmt: skip
    assert (_config(args).do_vort_damp, _config(args).vtdm4) == (True, 0.04)
    args = build_parser().parse_args(["fv3", "run", "--namelist", str(path), "--no-do-vort-damp"])
    assert (_config(args).do_vort_damp, _config(args).vtdm4) == (False, 0.05)
    with pytest.raises(FV3ConfigError, match="do_vort_damp.*must be bool"):
        FV3Config.from_dict({"do_vort_damp": "false"})
    with pytest.raises(FV3ConfigError, match="vtdm4=-0.1"):
        FV3Config(vtdm4=-0.1)
    metric = c12[0].metric
    with pytest.raises(FV3ConfigError, match="nord_v=3"):
        DelnFlux(StencilFactory("numpy").on_grid(GridIndexing(12, 12, 1, H)),
                    GridStorages(metric, "numpy"), metric.spec, 3, 1.0, add=True)


@pytest.mark.slow
def test_deln_flux_gt_cpu_ifirst_equals_transliteration_c12(c12) -> None:
    """gt:cpu_ifirst at C12 (all six tiles, nord 2 and 0): bit for bit the transliteration, as
    numpy is."""
    factory = StencilFactory("gt:cpu_ifirst")
    rng = np.random.default_rng(2)
    for case in c12.values():
        for nord in (2, 0):
            _check_fluxes(factory, case.metric, case.grid, case.arrays["delp"], nord, rng)

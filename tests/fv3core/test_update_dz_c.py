"""fv3core.stencils.update_dz_c.UpdateDzC: FV3's ``update_dz_c`` against its NumPy transliteration
of ``nh_utils.F90`` (:mod:`tests.fv3core.transliteration.nh_utils`, with FV3's ``fill_4corners``),
bit for bit on the numpy backend, on the ranks of C12 with one rank per tile (each has the four
cube corners) and of a 2x2 layout (one corner each); and, analytic: with no flux the heights only
meet the ``dz_min`` limiter, and ``ws`` is the bottom's change over the step."""

from __future__ import annotations

import numpy as np
import pytest

from fv3core.grid.metric_terms import CubedSphere
from fv3core.grid.storages import GridStorages
from fv3core.grid.subdomain import SubdomainSpec
from fv3core.stencils.update_dz_c import DZ_MIN, UpdateDzC
from stencils.dims import GridIndexing
from stencils.factory import StencilFactory
from stencils.storage import from_numpy
from tests.fv3core.transliteration import nh_utils
from tests.fv3core.transliteration.farray import FArray
from tests.fv3core.transliteration.setup import grid_from_metric

N, H, NZ, DT2 = 12, 3, 6, 112.5
DP0 = np.array([400.0, 1200.0, 3000.0, 8000.0, 20000.0, 30000.0])


@pytest.fixture(scope="module")
def cube() -> CubedSphere:
    return CubedSphere.build(N, radius=6.3712e6, omega=7.2921e-5)


def inputs(spec: SubdomainSpec, area: np.ndarray, rng: np.random.Generator, flux: float = 0.02):
    """Interface heights 0..~15 km with random bumps (two thin layers that the limiter lifts),
    ``zs`` up to 300 m, ``ut``/``vt`` of both signs up to ``flux`` times the cell area."""
    ni, nj = spec.nx + 2 * H, spec.ny + 2 * H
    thick = rng.uniform(0.8, 1.2, (ni, nj, NZ)) * np.array([4000.0, 3500.0, 3000.0, 2500.0, 1500.0, 500.0])
    thick[4, 3, 1] = thick[5, 5, 4] = 0.5  # thinner than dz_min
    zs = rng.uniform(0.0, 300.0, (ni, nj))
    gz = zs[..., None] + np.concatenate([np.cumsum(thick[..., ::-1], -1)[..., ::-1], np.zeros((ni, nj, 1))], -1)
    scale = np.mean(area[H:-H, H:-H])
    ut = flux * scale * rng.uniform(-1.0, 1.0, (ni, nj, NZ))
    vt = flux * scale * rng.uniform(-1.0, 1.0, (ni, nj, NZ))
    return gz, zs, ut, vt


def ours(cube, spec, gz, zs, ut, vt):
    factory = StencilFactory("numpy").on_grid(GridIndexing(spec.nx, spec.ny, NZ, H))
    grid = GridStorages(cube.metric_terms(spec), "numpy")
    f = {"gz": from_numpy(gz.copy(), "numpy", (H, H, 0)), "zs": from_numpy(zs, "numpy", (H, H)),
         "ws": from_numpy(np.zeros_like(zs), "numpy", (H, H))}  # fmt: skip
    pad = np.zeros(ut.shape[:2] + (1,))
    f["ut"], f["vt"] = (from_numpy(np.concatenate([a, pad], -1), "numpy", (H, H, 0)) for a in (ut, vt))
    for launch in UpdateDzC(factory, grid, spec, DP0, DT2).bind(f["gz"], f["ut"], f["vt"], f["zs"], f["ws"]):
        launch()
    return np.asarray(f["gz"]), np.asarray(f["ws"])


def transliterated(cube, spec, gz, zs, ut, vt):
    g = grid_from_metric(cube.metric_terms(spec))
    lo = (g.bd.isd, g.bd.jsd)
    gz = gz.copy()
    levels = [FArray(gz[:, :, k], lo) for k in range(NZ + 1)]
    ws = FArray(np.zeros_like(zs), lo)
    nh_utils.update_dz_c(g.bd.is_, g.bd.ie, g.bd.js, g.bd.je, NZ, DT2, DP0, FArray(zs, lo), g.area,
                         [FArray(ut[:, :, k], lo) for k in range(NZ)], [FArray(vt[:, :, k], lo) for k in range(NZ)],
                         levels, ws, g.npx, g.npy, g)  # fmt: skip
    return gz, ws.data


def specs(layout: int) -> list[SubdomainSpec]:
    m = N // layout
    return [SubdomainSpec(N, t, a * m, (a + 1) * m, b * m, (b + 1) * m)
            for t in range(6) for a in range(layout) for b in range(layout)]  # fmt: skip


@pytest.mark.parametrize("layout", [1, 2])
def test_update_dz_c_equals_fv3s(cube, layout: int) -> None:
    """Bitwise on every rank: the heights on ``is-1..ie+1, js-1..je+1`` (with the corner fills'
    values entering the fluxes) and ``ws``; every other point unchanged."""
    for spec in specs(layout):
        area = np.asarray(GridStorages(cube.metric_terms(spec), "numpy").area)
        state = inputs(spec, area, np.random.default_rng([spec.tile, spec.i0, spec.j0]))
        gz, ws = ours(cube, spec, *state)
        ref_gz, ref_ws = transliterated(cube, spec, *state)
        np.testing.assert_array_equal(gz, ref_gz, err_msg=f"gz {spec}")
        ws_range = (slice(H - 1, H + spec.nx + 1), slice(H - 1, H + spec.ny + 1))
        np.testing.assert_array_equal(ws[ws_range], ref_ws[ws_range], err_msg=f"ws {spec}")
        assert np.abs(gz - state[0]).max() > 1.0  # the fluxes moved the heights


def test_no_flux_only_limits(cube) -> None:
    """Analytic: zero fluxes leave every height (to relative 1e-15: FV3 divides ``gz area`` by
    ``area``) but the thin layers' (lifted to ``dz_min`` above the interface below), and ``ws``
    is ``(zs - gz_bottom) / dt``."""
    spec = specs(1)[0]
    area = np.asarray(GridStorages(cube.metric_terms(spec), "numpy").area)
    gz0, zs, ut, vt = inputs(spec, area, np.random.default_rng(1), flux=0.0)
    gz, ws = ours(cube, spec, gz0, zs, ut, vt)
    inner = (slice(H, H + spec.nx), slice(H, H + spec.ny))  # the ring beyond holds corner fills
    expected = gz0.copy()
    for k in range(NZ - 1, -1, -1):
        expected[..., k] = np.maximum(expected[..., k], expected[..., k + 1] + DZ_MIN)
    np.testing.assert_allclose(gz[inner], expected[inner], rtol=1e-15, atol=0.0)  # (gz area) / area
    assert (np.abs(gz[inner] - gz0[inner]) > 1e-6).sum() == 2
    np.testing.assert_allclose(ws[inner], (zs - gz0[..., -1])[inner] / DT2, rtol=0.0, atol=1e-12)

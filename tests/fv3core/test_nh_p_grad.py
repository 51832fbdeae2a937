"""fv3core.stencils.nh_p_grad.NonHydrostaticPressureGradient: FV3's ``nh_p_grad`` against its NumPy
transliteration of ``dyn_core.F90`` (:func:`tests.fv3core.transliteration.dyn_core.nh_p_grad`,
with the transliterated ``a2b_ord4``), bit for bit on the numpy backend, on the six tiles of C12
(one rank each, so every cube corner's ``a2b_ord4`` formulas enter); and, analytic: with no
perturbation pressure the update is ``one_grad_p``'s (the transliterated hydrostatic gradient),
bitwise."""

from __future__ import annotations

import numpy as np
import pytest

from fv3core.grid.metric_terms import CubedSphere
from fv3core.grid.storages import GridStorages
from fv3core.grid.subdomain import SubdomainSpec
from fv3core.stencils.nh_p_grad import NonHydrostaticPressureGradient
from stencils.dims import GridIndexing
from stencils.factory import StencilFactory
from stencils.storage import from_numpy
from tests.fv3core.transliteration.dyn_core import nh_p_grad, one_grad_p
from tests.fv3core.transliteration.farray import FArray
from tests.fv3core.transliteration.setup import grid_from_metric

N, H, NZ, DT = 12, 3, 4, 225.0
PTK = 300.0 ** (2.0 / 7.0)


@pytest.fixture(scope="module")
def cube() -> CubedSphere:
    return CubedSphere.build(N, radius=6.3712e6, omega=7.2921e-5)


def state(spec: SubdomainSpec, rng: np.random.Generator, pp_amplitude: float = 60.0) -> dict[str, np.ndarray]:
    ni, nj = spec.nx + 2 * H, spec.ny + 2 * H
    delp = rng.uniform(0.8, 1.2, (ni, nj, NZ)) * 2.5e4
    pe = 300.0 + np.concatenate([np.zeros((ni, nj, 1)), np.cumsum(delp, -1)], -1)
    gz = 9.8 * np.concatenate([np.cumsum(np.full((ni, nj, NZ), 2.5e3), -1)[..., ::-1], np.zeros((ni, nj, 1))], -1)
    return {"delp": delp, "pk": pe ** (2.0 / 7.0), "gz": gz + rng.uniform(-50.0, 50.0, gz.shape),
            "pp": pp_amplitude * rng.uniform(-1.0, 1.0, pe.shape),
            "u": rng.uniform(-3e6, 3e6, (ni, nj + 1, NZ)), "v": rng.uniform(-3e6, 3e6, (ni + 1, nj, NZ))}  # fmt: skip


def ours(cube, spec, s):
    factory = StencilFactory("numpy").on_grid(GridIndexing(spec.nx, spec.ny, NZ, H))
    grid = GridStorages(cube.metric_terms(spec), "numpy")
    f = {k: from_numpy(v.copy(), "numpy", (H, H, 0)) for k, v in s.items()}
    routine = NonHydrostaticPressureGradient(factory, grid, spec, DT, PTK)
    for launch in routine.bind(f["u"], f["v"], f["pp"], f["gz"], f["delp"], f["pk"]):
        launch()
    return {k: np.asarray(v) for k, v in f.items()}


def transliterated(cube, spec, s, hydrostatic: bool = False):
    g = grid_from_metric(cube.metric_terms(spec))
    lo = (g.bd.isd, g.bd.jsd)
    a = {k: v.copy() for k, v in s.items()}
    layers = {k: [FArray(v[:, :, k2], lo) for k2 in range(v.shape[2])] for k, v in a.items()}
    if hydrostatic:
        one_grad_p(layers["u"], layers["v"], layers["pk"], layers["gz"], DT, g, PTK)
    else:
        nh_p_grad(layers["u"], layers["v"], layers["pp"], layers["gz"], layers["delp"], layers["pk"], DT, g, PTK)
    return a


def test_nh_p_grad_equals_fv3s(cube) -> None:
    """Bitwise on each tile: ``u``, ``v`` and the corner values written into ``pp``, ``pk``, ``gz``."""
    for tile in range(6):
        spec = SubdomainSpec(N, tile, 0, N, 0, N)
        s = state(spec, np.random.default_rng(tile))
        got, ref = ours(cube, spec, s), transliterated(cube, spec, s)
        for name in ("u", "v", "pp", "pk", "gz"):
            np.testing.assert_array_equal(got[name], ref[name], err_msg=f"tile {tile} {name}")
        assert np.abs(got["u"] - s["u"]).max() > 0.0


def test_without_perturbation_pressure_it_is_one_grad_p(cube) -> None:
    """``pp = 0``: the non-hydrostatic term is ``dt / (...) * 0`` and FV3's ``nh_p_grad`` is its
    hydrostatic ``one_grad_p`` (transliterated), bit for bit."""
    spec = SubdomainSpec(N, 2, 0, N, 0, N)
    s = state(spec, np.random.default_rng(9), pp_amplitude=0.0)
    got, ref = ours(cube, spec, s), transliterated(cube, spec, s, hydrostatic=True)
    for name in ("u", "v"):
        np.testing.assert_array_equal(got[name], ref[name], err_msg=name)

"""fv3core.stencils.nh_p_grad.NonHydrostaticPressureGradient: FV3's ``nh_p_grad`` against its NumPy
transliteration of ``dyn_core.F90`` (:func:`tests.fv3core.transliteration.dyn_core.nh_p_grad`,
with the transliterated ``a2b_ord4``), bit for bit on the numpy backend, on the six tiles of C12
(one rank each, so every cube corner's ``a2b_ord4`` formulas enter), and ``split_p_grad``
(``beta > 0``) likewise; and, exact identities: with no perturbation pressure the update is
``one_grad_p``'s (the transliterated hydrostatic gradient), and ``split_p_grad``'s first acoustic
step (``beta_d = 0``) is ``nh_p_grad``, bitwise."""

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


def ours(cube, spec, s, beta: float = 0.0, first: bool = False):
    factory = StencilFactory("numpy").on_grid(GridIndexing(spec.nx, spec.ny, NZ, H))
    grid = GridStorages(cube.metric_terms(spec), "numpy")
    f = {k: from_numpy(v.copy(), "numpy", (H, H, 0)) for k, v in s.items()}
    routine = NonHydrostaticPressureGradient(factory, grid, spec, DT, PTK, beta=beta)
    increments = (f["du"], f["dv"]) if beta > 0.0 else None
    for launch in routine.bind(f["u"], f["v"], f["pp"], f["gz"], f["delp"], f["pk"], increments, first):
        launch()
    return {k: np.asarray(v) for k, v in f.items()}


def transliterated(cube, spec, s, hydrostatic: bool = False, beta: float | None = None):
    g = grid_from_metric(cube.metric_terms(spec))
    lo = (g.bd.isd, g.bd.jsd)
    a = {k: v.copy() for k, v in s.items()}
    layers = {k: [FArray(v[:, :, k2], lo) for k2 in range(v.shape[2])] for k, v in a.items()}
    if hydrostatic:
        one_grad_p(layers["u"], layers["v"], layers["pk"], layers["gz"], DT, g, PTK)
    else:
        split = None if beta is None else (layers["du"], layers["dv"], beta)
        nh_p_grad(layers["u"], layers["v"], layers["pp"], layers["gz"], layers["delp"], layers["pk"], DT, g, PTK,
                  split)  # fmt: skip
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


def with_increments(s: dict[str, np.ndarray], rng: np.random.Generator) -> dict[str, np.ndarray]:
    """``s`` with FV3's kept increments ``du`` (u points), ``dv`` (v points) of a previous step."""
    return {**s, "du": rng.uniform(-2e5, 2e5, s["u"].shape), "dv": rng.uniform(-2e5, 2e5, s["v"].shape)}


@pytest.mark.parametrize("tile", [0, 4])
def test_split_p_grad_equals_fv3s(cube, tile: int) -> None:
    """``split_p_grad`` (``beta = 0.25``) bitwise: ``u``, ``v`` and the new increments."""
    spec = SubdomainSpec(N, tile, 0, N, 0, N)
    rng = np.random.default_rng(40 + tile)
    s = with_increments(state(spec, rng), rng)
    got, ref = ours(cube, spec, s, beta=0.25), transliterated(cube, spec, s, beta=0.25)
    for name in ("u", "v", "du", "dv"):
        np.testing.assert_array_equal(got[name], ref[name], err_msg=f"tile {tile} {name}")


def test_split_p_grads_first_step_is_nh_p_grad(cube) -> None:
    """``beta_d = 0`` (the first acoustic step) with zero increments: ``split_p_grad`` adds
    ``0 * du`` and ``1 * du``, so it is ``nh_p_grad`` bit for bit."""
    spec = SubdomainSpec(N, 1, 0, N, 0, N)
    s = state(spec, np.random.default_rng(3))
    zero = {"du": np.zeros_like(s["u"]), "dv": np.zeros_like(s["v"])}
    got = ours(cube, spec, {**s, **zero}, beta=0.25, first=True)
    ref = ours(cube, spec, s)
    for name in ("u", "v"):
        np.testing.assert_array_equal(got[name], ref[name], err_msg=name)

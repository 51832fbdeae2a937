"""PPM interface fluxes (FV3 xppm/yppm) against the plain NumPy reference in ppm_reference.py."""

from __future__ import annotations

import numpy as np
import pytest

from fv3core.grid.metric_terms import CubedSphere
from fv3core.grid.subdomain import SubdomainSpec
from fv3core.stencils.ppm import ppm_flux_stencil
from stencils.directions import X, Y
from stencils.factory import StencilFactory
from tests.fv3core.ppm_reference import ppm_flux_1d

H, N, NZ = 3, 8, 2


@pytest.fixture(scope="module")
def factory() -> StencilFactory:
    return StencilFactory("numpy")


def _run_ppm(factory, ext, q, courant, dxa, domain):
    flux = np.zeros_like(courant)
    factory(ppm_flux_stencil, externals=ext)(
        q=q, courant=courant, dxa=dxa, flux=flux, origin=(H, H, 0), domain=domain
    )
    return flux


@pytest.mark.parametrize(
    "hord, direction, edges",
    [
        (5, X, (True, True)),
        (5, Y, (True, True)),
        (8, X, (True, True)),
        (8, Y, (True, True)),
        (8, Y, (False, True)),
        (6, X, (False, False)),
    ],
)
def test_ppm_matches_numpy_reference(factory, hord, direction, edges) -> None:
    """Stencil flux equals the loop-based NumPy reference to 1e-13 (absolute, O(1) data),
    for both directions, hord 5/6/8, with and without the tile-edge treatment, on a non-uniform
    grid (real C8 dxa) with random data and Courant numbers in (-1, 1)."""
    rng = np.random.default_rng(hord + 10 * direction.axis)
    shape = (N + 2 * H, N + 2 * H, NZ)
    q = rng.random(shape)
    q[4:7] += 2.0  # a jump, so the limiters act
    courant = rng.uniform(-0.95, 0.95, (N + 1 + 2 * H, N + 1 + 2 * H, NZ))
    cube = CubedSphere.build(N, radius=6.3712e6, omega=7.292e-5)
    metric = cube.metric_terms(SubdomainSpec(N, 0, 0, N, 0, N))
    dxa = np.ascontiguousarray(metric.dxa if direction.name == "x" else metric.dya)
    ext = {"iord": hord, **direction.offsets()}
    ext.update(direction.edge_regions((H, H, 0), H, H + N - 1, *edges))
    flux = _run_ppm(factory, ext, q, courant, dxa, (N + 1, N + 1, NZ))
    faces = range(H, H + N + 1)
    if direction.name == "x":
        ref = ppm_flux_1d(q, courant[:, : N + 2 * H], dxa[..., None], H, H + N - 1, hord, faces, edges)
        got = {i: flux[i, H : H + N + 1] for i in faces}
        ref = {i: ref[i][H : H + N + 1] for i in faces}
    else:
        qt, ct = q.transpose(1, 0, 2), courant.transpose(1, 0, 2)
        ref = ppm_flux_1d(qt, ct[:, : N + 2 * H], dxa.T[..., None], H, H + N - 1, hord, faces, edges)
        got = {j: flux[H : H + N + 1, j] for j in faces}
        ref = {j: ref[j][H : H + N + 1] for j in faces}
    for i in faces:
        np.testing.assert_allclose(got[i], ref[i], rtol=0, atol=1e-13, err_msg=f"face {i}")


def test_hord8_flux_values_are_bounded(factory) -> None:
    """Monotone limiter (hord 8): every face value lies within the range of the two adjacent
    cell means (a property of the limited PPM profile), checked on random data."""
    rng = np.random.default_rng(3)
    q = rng.random((N + 2 * H, N + 2 * H, 1))
    c = rng.uniform(-0.9, 0.9, (N + 1 + 2 * H, N + 1 + 2 * H, 1))
    dxa = np.ones((N + 2 * H, N + 2 * H))
    ext = {"iord": 8, **X.offsets(), **X.edge_regions((H, H, 0), H, H + N - 1, False, False)}
    flux = _run_ppm(factory, ext, q, c, dxa, (N + 1, N, 1))
    f = flux[H : H + N + 1, H : H + N]
    lo = np.minimum(q[H - 1 : H + N, H : H + N], q[H : H + N + 1, H : H + N])
    hi = np.maximum(q[H - 1 : H + N, H : H + N], q[H : H + N + 1, H : H + N])
    assert np.all(f >= lo - 1e-14) and np.all(f <= hi + 1e-14)

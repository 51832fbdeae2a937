"""Every library stencil against its NumPy reference, on every backend that works here.

The default suite runs all stencils on ``numpy`` and ``debug`` and compiles the C++ backends for
a representative subset (each C++ build costs 15-20 s on 2 cores): the Laplacian on every
compiled backend, and hdiff, vadv, upwind, jacobi on one gt and one dace backend between them.
"""

import numpy as np
import pytest

from stencils import COMPILED_BACKENDS, Domain, StencilFactory, from_numpy, to_numpy
from stencils.library import LIBRARY

# float64 everywhere; the stencils are evaluated in a different order than the references
# (e.g. Thomas algorithm vs LAPACK banded LU), so allow a few ulps relative to the field scale.
RTOL, ATOL = 1e-12, 1e-12

COMPILED_SUBSET = [("laplacian_2d", b) for b in COMPILED_BACKENDS] + [
    ("hdiff", "gt:cpu_ifirst"),
    ("vadv", "dace:cpu_KJI"),
    ("upwind", "gt:cpu_kfirst"),
    ("jacobi_3d", "dace:cpu"),
]
CASES = [(name, b) for name in LIBRARY for b in ("numpy", "debug")] + COMPILED_SUBSET


def run_library_stencil(name: str, backend: str, domain: Domain, seed: int = 1):
    lib = LIBRARY[name]
    arrays = lib.allocate(domain, seed=seed)
    dom = domain if domain.halo >= lib.halo else domain.with_halo(lib.halo)
    stencil = lib.build(StencilFactory(backend))
    fields = {k: from_numpy(v, backend, dom.origin) for k, v in arrays.items()}
    stencil(origin=dom.origin, domain=dom.domain, **fields, **lib.params)
    expected = lib.reference(halo=dom.halo, **arrays, **lib.params)
    got = {o: to_numpy(fields[o])[lib.interior(dom)] for o in lib.outputs}
    return got, expected


@pytest.mark.parametrize("name,backend", CASES, ids=[f"{n}-{b}" for n, b in CASES])
def test_matches_numpy_reference(name, backend):
    """Checked against the stencil's NumPy reference (hand-written array code; vadv: LAPACK
    banded solver per column), rtol = atol = 1e-12, on a non-square 11 x 9 x 7 domain."""
    got, expected = run_library_stencil(name, backend, Domain(11, 9, 7, halo=2))
    for out, ref in expected.items():
        assert got[out].shape == ref.shape
        np.testing.assert_allclose(got[out], ref, rtol=RTOL, atol=ATOL)
        assert np.abs(ref).max() > 0.0  # the comparison is not between zeros


def test_laplacian_of_quadratic_is_exact():
    """Analytic: the 5-point Laplacian of x^2 + 3 y^2 is exactly 2 + 6 = 8 (unit spacing)."""
    dom = Domain(6, 5, 3, halo=1)
    i, j, _ = np.meshgrid(*[np.arange(n, dtype=float) for n in dom.shape], indexing="ij")
    field = i**2 + 3 * j**2
    out = np.zeros(dom.shape)
    f = StencilFactory("numpy")(LIBRARY["laplacian_2d"].definition)
    a, b = from_numpy(field, "numpy", dom.origin), from_numpy(out, "numpy", dom.origin)
    f(origin=dom.origin, domain=dom.domain, in_field=a, out_field=b)
    np.testing.assert_allclose(to_numpy(b)[dom.interior], 8.0, rtol=0, atol=1e-12)


def test_vadv_solves_the_tridiagonal_system():
    """Analytic residual: the vadv output satisfies its implicit equations to 1e-12."""
    lib = LIBRARY["vadv"]
    dom = Domain(4, 3, 9, halo=0)
    got, _ = run_library_stencil("vadv", "numpy", dom)
    arrays = lib.allocate(dom, seed=1)
    x, phi = got["phi_new"], arrays["phi"]
    c = 0.5 * arrays["w"] * lib.params["dt_dz"]
    residual = x.copy()
    residual[:, :, 1:] -= c[:, :, 1:] * x[:, :, :-1]
    residual[:, :, :-1] += c[:, :, :-1] * x[:, :, 1:]
    np.testing.assert_allclose(residual, phi, rtol=0, atol=1e-12)


def test_upwind_conserves_and_stays_bounded_for_uniform_flow():
    """Analytic: uniform positive Courant numbers on a periodic field conserve the sum exactly
    (to 1e-12) and keep the field within its initial bounds (monotone scheme)."""
    dom = Domain(16, 16, 2, halo=1)
    rng = np.random.default_rng(3)
    core = rng.random((16, 16, 2))
    phi = np.pad(core, ((1, 1), (1, 1), (0, 0)), mode="wrap")
    cx = np.full(dom.shape, 0.3)
    cy = np.full(dom.shape, 0.2)
    out = np.zeros(dom.shape)
    st = StencilFactory("numpy")(LIBRARY["upwind"].definition)
    fields = {k: from_numpy(v, "numpy", dom.origin) for k, v in dict(phi=phi, cx=cx, cy=cy, phi_new=out).items()}
    st(origin=dom.origin, domain=dom.domain, **fields)
    new = to_numpy(fields["phi_new"])[dom.interior]
    np.testing.assert_allclose(new.sum(), core.sum(), rtol=1e-12)
    assert new.min() >= core.min() - 1e-12 and new.max() <= core.max() + 1e-12


@pytest.mark.parametrize("backend", ["numpy", "debug"])
def test_a_schedule_changes_no_bit_of_the_result(backend):
    """hdiff's schedule (GT4Py's OnTheFlyMerging skipped, so its Laplacian is stored rather
    than recomputed at each offset) against the same definition built with GT4Py's default
    pipeline: equal bit for bit; the factory records the skipped pass."""
    lib = LIBRARY["hdiff"]
    assert lib.oir_skip == ("OnTheFlyMerging",)
    dom = Domain(11, 9, 7, halo=lib.halo)
    arrays = lib.allocate(dom, seed=3)
    factory = StencilFactory(backend)
    outs = []
    for stencil in (lib.build(factory), factory(lib.definition)):
        fields = {k: from_numpy(v, backend, dom.origin) for k, v in arrays.items()}
        stencil(origin=dom.origin, domain=dom.domain, **fields, **lib.params)
        outs.append(to_numpy(fields["out_field"]))
    np.testing.assert_array_equal(outs[0], outs[1])
    assert sorted(r.oir_skip for r in factory.builds()) == [(), ("OnTheFlyMerging",)]

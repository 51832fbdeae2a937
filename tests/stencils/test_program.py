"""StencilProgram: composition against NumPy, halo accumulation, and bad-program errors."""

import numpy as np
import pytest

from stencils import StencilError
from stencils.library.base import shifted
from stencils.library.hdiff import hdiff
from stencils.library.laplacian import laplacian_2d
from stencils.library.upwind import upwind_advection
from stencils.program import StencilProgram


def numpy_lap(a: np.ndarray) -> np.ndarray:
    """Independent reference: 5-point Laplacian on the interior (one cell less on each side)."""
    return a[2:, 1:-1] + a[:-2, 1:-1] + a[1:-1, 2:] + a[1:-1, :-2] - 4.0 * a[1:-1, 1:-1]


def biharmonic() -> StencilProgram:
    prog = StencilProgram("biharmonic", inputs=["a"], outputs=["b"], temporaries=["t"])
    prog.add(laplacian_2d, label="lap1", in_field="a", out_field="t")
    prog.add(laplacian_2d, label="lap2", in_field="t", out_field="b")
    return prog


def test_biharmonic_matches_numpy():
    """NumPy reference: Laplacian of the Laplacian (13-point biharmonic), atol 1e-11."""
    a = np.random.default_rng(0).random((14, 12, 3))
    b = biharmonic().run({"a": a}, backend="numpy")["b"]
    np.testing.assert_allclose(b[2:-2, 2:-2], numpy_lap(numpy_lap(a)), rtol=0, atol=1e-11)


def test_accesses_and_accumulated_halo():
    """Hand-derived: two chained 5-point stencils need a halo of 2; lap1 computes 1 cell beyond."""
    prog = biharmonic()
    acc = prog.accesses()
    assert [a.label for a in acc] == ["lap1", "lap2"]
    assert acc[0].reads == {"a": {(1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 0)}}
    assert acc[1].reads.keys() == {"t"} and acc[1].writes.keys() == {"b"}
    assert prog.compute_extents() == [(1, 1, 1, 1), (0, 0, 0, 0)]
    assert prog.required_halo() == {"a": 2}


def test_lap_then_hdiff_needs_three_cells_and_matches_reference():
    """NumPy reference: hdiff's own reference applied to a NumPy Laplacian; halo = 1 + 2 = 3."""
    rng = np.random.default_rng(1)
    a = rng.random((16, 15, 4))
    c = np.full(a.shape, 0.02)
    prog = StencilProgram("lap_hdiff", inputs=["a", "c"], outputs=["out"], temporaries=["t"])
    prog.add(laplacian_2d, in_field="a", out_field="t")
    prog.add(hdiff, in_field="t", coeff="c", out_field="out")
    assert prog.required_halo() == {"a": 3, "c": 0}
    out = prog.run({"a": a, "c": c}, backend="numpy")["out"]
    from stencils.library.hdiff import _reference

    lap = np.zeros_like(a)
    lap[1:-1, 1:-1] = numpy_lap(a)
    expected = _reference(lap[1:-1, 1:-1], c[1:-1, 1:-1], None, halo=2)["out_field"]
    np.testing.assert_allclose(out[3:-3, 3:-3], expected, rtol=0, atol=1e-12)


def test_scalars_are_passed_through():
    """NumPy reference: a constant field is unchanged by upwind advection (exactly)."""
    prog = StencilProgram("adv", inputs=["q", "u", "v"], outputs=["q1"])
    prog.add(upwind_advection, phi="q", cx="u", cy="v", phi_new="q1")
    q = np.full((8, 8, 2), 3.5)
    u = np.full((8, 8, 2), 0.3)
    out = prog.run({"q": q, "u": u, "v": -u})["q1"]
    assert np.all(shifted(out, 1, 0, 0) == 3.5)


def test_errors_name_the_problem():
    prog = StencilProgram("bad", inputs=["a"], outputs=["b"], temporaries=["t"])
    with pytest.raises(StencilError, match="reads field 't'.*before any call writes it"):
        prog.add(laplacian_2d, in_field="t", out_field="b")
    with pytest.raises(StencilError, match="'nope'.*not a declared field"):
        prog.add(laplacian_2d, in_field="nope", out_field="b")
    with pytest.raises(StencilError, match="'out_field' is not bound"):
        prog.add(laplacian_2d, in_field="a")
    with pytest.raises(StencilError, match=r"\['typo'\] are not parameters"):
        prog.add(laplacian_2d, in_field="a", out_field="b", typo="a")
    with pytest.raises(StencilError, match="writes program input 'a'"):
        prog.add(laplacian_2d, label="w", in_field="a", out_field="a")
    prog.add(laplacian_2d, in_field="a", out_field="t")
    with pytest.raises(StencilError, match=r"outputs \['b'\] are never written"):
        prog.required_halo()
    prog.add(laplacian_2d, in_field="t", out_field="b")
    with pytest.raises(StencilError, match="input 'a' needs a halo of 2"):
        prog.run({"a": np.zeros((8, 8, 2))}, halo=1)

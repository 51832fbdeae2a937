"""The NumPy reference executor against hand-written NumPy formulas."""

from __future__ import annotations

import numpy as np

from mapping.spatial.generator import jacobi_chain
from mapping.spatial.model import load_program
from mapping.spatial.reference import ReferenceExecutor


def test_jacobi2d_chain_matches_hand_written_numpy():
    """4 jacobi sweeps with zero boundaries vs an explicit padded NumPy loop (tolerance 1e-6 rel)."""
    p = load_program(jacobi_chain(4, (12, 9), "float32"))
    a = p.load_inputs()["a"].astype(np.float64)
    out = ReferenceExecutor(p)()["s3"]
    x = a
    for _ in range(4):
        q = np.pad(x, 1)
        x = 0.2 * (q[1:-1, 1:-1] + q[:-2, 1:-1] + q[2:, 1:-1] + q[1:-1, :-2] + q[1:-1, 2:])
    np.testing.assert_allclose(out, x, rtol=1e-6)


def test_hdiff_matches_hand_written_numpy(examples):
    """COSMO horizontal diffusion (copy boundaries) vs an explicit NumPy formulation (exact)."""
    p = load_program(examples / "hdiff.json")
    inp = p.load_inputs()
    u, coeff = inp["in_field"], inp["coeff"]
    e = np.pad(u, ((1, 1), (1, 1), (0, 0)), mode="edge")
    lap = 4 * u - (e[2:, 1:-1] + e[:-2, 1:-1] + e[1:-1, 2:] + e[1:-1, :-2])
    lp = np.pad(lap, ((0, 1), (0, 1), (0, 0)), mode="edge")
    up = np.pad(u, ((0, 1), (0, 1), (0, 0)), mode="edge")
    flx = lp[1:, :-1] - lap
    flx = np.where(flx * (up[1:, :-1] - u) > 0, 0.0, flx)
    fly = lp[:-1, 1:] - lap
    fly = np.where(fly * (up[:-1, 1:] - u) > 0, 0.0, fly)
    fxm = np.pad(flx, ((1, 0), (0, 0), (0, 0)), mode="edge")[:-1]
    fym = np.pad(fly, ((0, 0), (1, 0), (0, 0)), mode="edge")[:, :-1]
    expected = u - coeff * (flx - fxm + fly - fym)
    np.testing.assert_array_equal(ReferenceExecutor(p)()["out_field"], expected)


def test_shrink_and_lower_dimensional_inputs():
    """shrink zeroes the rim; a k-only input broadcasts over i, j (exact)."""
    spec = {
        "inputs": {"a": {"data_type": "float64"}, "w": {"data_type": "float64", "input_dims": ["k"], "data": [1.0, 2.0, 3.0]}},
        "outputs": ["s"], "dimensions": [3, 4, 3],
        "program": {"s": {"computation_string": "res = a[i+1,j,k] * w[k]", "data_type": "float64",
                          "boundary_conditions": {"a": {"type": "shrink"}}}},
    }
    p = load_program(spec)
    a = p.load_inputs()["a"]
    out = ReferenceExecutor(p)()["s"]
    expected = np.zeros_like(a)
    expected[:-1] = a[1:] * np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(out, expected)

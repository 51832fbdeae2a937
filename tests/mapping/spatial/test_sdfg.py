"""The DaCe SDFG of a program, compiled for the CPU, against the NumPy reference."""

from __future__ import annotations

import numpy as np

from mapping.spatial.model import load_program
from mapping.spatial.reference import ReferenceExecutor
from mapping.spatial.sdfg import SDFGBuilder


def test_sdfg_forkjoin_equals_reference(examples, tmp_path):
    """fork/join (all three boundary kinds, k-only input, sqrt/min/max, ternary), float32:
    compiled SDFG output vs the NumPy reference, tolerance rtol 1e-6 (constants are double in C++,
    so results may differ by one float32 rounding)."""
    p = load_program(examples / "forkjoin.json")
    out = SDFGBuilder(p).compile(tmp_path)()
    ref = ReferenceExecutor(p)()
    for o in p.outputs:
        np.testing.assert_allclose(out[o], ref[o], rtol=1e-6, atol=1e-6)

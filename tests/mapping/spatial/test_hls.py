"""Generated HLS C++ compiled with g++ in C-simulation mode (threads + bounded FIFOs)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from mapping.spatial import StencilFlowError
from mapping.spatial.analysis import analyse
from mapping.spatial.hls import CSimulation, HLSEmitter
from mapping.spatial.model import load_program
from mapping.spatial.reference import ReferenceExecutor

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")


def test_emitted_code_has_the_hls_structure(examples):
    an = analyse(load_program(examples / "hdiff.json"))
    src = HLSEmitter(an).source()
    assert src.count("#pragma HLS DATAFLOW") == 1
    for c in an.channels:
        assert f"depth={c.capacity}" in src
    n_proc = len(an.program.inputs) + len(an.program.stencils) + len(an.program.outputs)
    assert src.count("#pragma HLS PIPELINE II=1") == n_proc
    for name in an.program.stencils:
        assert f"static void stencil_{name}(" in src


def test_csim_vectorised_forkjoin_equals_reference(examples, tmp_path):
    """fork/join (constant, copy, shrink boundaries, k-only input, sqrt/min/max, ternary) with
    4 points per token: C-simulation output equals the NumPy reference (float32, tolerance
    1 ulp: rtol 1.2e-7). The scalar code path is exercised by the deadlock test below."""
    p = load_program(examples / "forkjoin.json").with_vectorization(4)
    out = CSimulation(HLSEmitter(analyse(p)), tmp_path)()
    ref = ReferenceExecutor(p)()
    for o in p.outputs:
        np.testing.assert_allclose(out[o], ref[o], rtol=1.2e-7, atol=0)


def test_csim_undersized_fifo_reports_deadlock(tmp_path):
    """A 2-deep FIFO on the 11-token reconvergent path deadlocks and is reported, not hung."""
    spec = {"inputs": {"a": {}}, "outputs": ["c"], "dimensions": [10, 10],
            "program": {"b": {"computation_string": "res = a[j+1,k]", "boundary_conditions": {"a": {"type": "constant"}}},
                        "c": {"computation_string": "res = a[j,k] + b[j,k]"}}}
    an = analyse(load_program(spec))
    with pytest.raises(StencilFlowError, match=r"deadlocked: .*a->c full \(2/2"):
        CSimulation(HLSEmitter(an, {"a->c": 2}), tmp_path, timeout_s=60)()

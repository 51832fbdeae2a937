"""benchmarks.roofline: flop counts, time bounds and the peak FMA kernel."""

from __future__ import annotations

import ast
import inspect
import shutil
import textwrap

import pytest

from benchmarks import roofline
from stencils import Domain
from stencils.library import LIBRARY


def _binops(fn) -> int:
    """Arithmetic operators in a GTScript function, with gtscript helpers it calls inlined."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(getattr(fn, "definition", fn))))
    count = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp):
            count += 1
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            helper = inspect.getmodule(fn).__dict__.get(node.func.id)
            if helper is not None and hasattr(helper, "_gtscript_"):
                count += _binops(helper)
    return count


def test_laplacian_flops_by_hand():
    """Reference: hand derivation -- f[i+1] + f[i-1] + f[j+1] + f[j-1] - 4 f is 3 adds, 1 mul,
    1 sub = 5; the 3D one adds f[k+1] + f[k-1] - 2 f: 2 adds, 1 mul, 1 sub = 9."""
    assert roofline.FLOPS_PER_POINT["laplacian_2d"] == 3 + 1 + 1
    assert roofline.FLOPS_PER_POINT["laplacian_3d"] == 5 + 2 + 1 + 1


@pytest.mark.parametrize("name", ["laplacian_2d", "laplacian_3d", "hdiff", "jacobi_2d", "jacobi_3d"])
def test_flops_equal_the_operators_of_the_definition(name):
    """Reference: the GTScript source -- in stencils without branches or repeated
    subexpressions every arithmetic operator is one flop per point."""
    assert roofline.FLOPS_PER_POINT[name] == _binops(LIBRARY[name].definition)


def test_bound_is_the_larger_of_memory_and_compute_time():
    """Reference: analytic roofline -- time = max(bytes / bandwidth, flops / peak)."""
    lib, dom = LIBRARY["laplacian_3d"], Domain(10, 10, 12, halo=1)
    points = 10 * 10 * 10  # levels 1..nz-2
    mem = roofline.bound(lib, dom, stream_gbs=10.0, peak_gflops=1e6)
    assert mem.limit == "memory" and mem.flops == 9 * points
    assert mem.time_s == pytest.approx(lib.bytes_moved(dom) / 10e9)
    cpu = roofline.bound(lib, dom, stream_gbs=10.0, peak_gflops=1e-3)
    assert cpu.limit == "compute" and cpu.time_s == pytest.approx(9 * points / 1e6)
    assert mem.intensity == pytest.approx(9 * points / lib.bytes_moved(dom))


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_fma_peak_runs():
    """Reference: the kernel's output format -- a positive GFLOP/s figure and the thread count."""
    peak = roofline.fma_peak(iterations=100_000, repeats=2, threads=1)
    assert peak.gflops > 0 and peak.threads == 1

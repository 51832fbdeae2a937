"""Windows, reuse buffers, latencies, delay buffers, performance model and halos (analytic values)."""

from __future__ import annotations

from mapping.spatial.analysis import analyse
from mapping.spatial.expr import OperationLatencies
from mapping.spatial.generator import jacobi_chain
from mapping.spatial.model import load_program


def test_jacobi3d_window_and_reuse_buffer():
    """7-point stencil on 8x6x5: window spans -(J*K)..+(J*K) points -> 2*30+1 reuse tokens."""
    p = load_program(jacobi_chain(1, (8, 6, 5)))
    win = analyse(p).stencils["s0"].windows["a"]
    assert (win.lo, win.hi, win.lookahead, win.reuse_tokens) == (-30, 30, 30, 61)
    assert win.reuse_bytes == 61 * 4


def test_vectorised_window_in_tokens():
    """With W=4 the window -30..30 points covers tokens floor(-30/4)..ceil(30/4) = -8..8."""
    p = load_program(jacobi_chain(1, (8, 6, 8), vectorization=4))
    win = analyse(p).stencils["s0"].windows["a"]
    assert win.lo == -48 and win.lookahead == 12 and win.reuse_tokens == 12 + 12 + 1


def test_latency_from_expression():
    """res = (a+b)*c with add=3, mul=3, io=1: 3 + 3 + 2 cycles."""
    spec = {"inputs": {"a": {}, "b": {}, "c": {}}, "outputs": ["s"], "dimensions": [4],
            "program": {"s": {"computation_string": "res = (a[k] + b[k]) * c[k]"}}}
    an = analyse(load_program(spec))
    assert an.stencils["s"].latency == 8
    assert an.stencils["s"].operations == 2


def test_delay_buffer_on_reconvergent_path():
    """a -> b -> c and a -> c: the direct channel buffers b's look-ahead plus b's latency."""
    spec = {"inputs": {"a": {}}, "outputs": ["c"], "dimensions": [10, 10],
            "program": {"b": {"computation_string": "res = a[j+1,k]", "boundary_conditions": {"a": {"type": "constant"}}},
                        "c": {"computation_string": "res = a[j,k] + b[j,k]"}}}
    an = analyse(load_program(spec), link_latency=None)
    lb = an.stencils["b"].latency
    # b starts at 10 (look-ahead one row) + 1 (memory); c at b + lb
    assert an.start["b"] == 11 and an.start["c"] == 11 + lb
    assert an.channel("a", "c").capacity == 11 + lb + 1
    assert an.channel("b", "c").capacity == lb + 1


def test_performance_model_figures():
    """cycles = tokens + depth; GOp/s = ops*points/(cycles/f); traffic = input + output bytes."""
    p = load_program(jacobi_chain(2, (16, 16, 16), "float32"))
    an = analyse(p)
    m = an.model
    assert m.operations_per_point == 2 * 7  # 6 adds + 1 multiply per sweep
    assert m.cycles == 4096 + m.pipeline_depth
    assert abs(m.gops - 14 * 4096 / (m.cycles / 300e6) / 1e9) < 1e-9
    assert m.offchip_bytes == 2 * 4096 * 4


def test_latency_table_is_configurable():
    spec = {"inputs": {"a": {}}, "outputs": ["s"], "dimensions": [4],
            "program": {"s": {"computation_string": "res = a[k] / 3.0"}}}
    from mapping.spatial.analysis import Target
    an = analyse(load_program(spec), Target(latencies=OperationLatencies(div=40)))
    assert an.stencils["s"].latency == 42


def test_accumulated_halos(examples):
    """hdiff: lap (+-1) then flx/fly (+1) then out (-1): +-2 in i and j, 0 in k."""
    an = analyse(load_program(examples / "hdiff.json"))
    assert an.halos["out_field"]["in_field"] == ((-2, 2), (-2, 2), (0, 0))
    assert an.halo_width("out_field") == (2, 2, 0)
    assert an.input_halos() == {"in_field": (2, 2, 0), "coeff": (0, 0, 0)}

"""Streaming simulator: equals the NumPy reference, never hangs, proves the buffer sizes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mapping.spatial import StencilFlowError
from mapping.spatial.analysis import analyse
from mapping.spatial.generator import jacobi_chain, random_dag, synthetic
from mapping.spatial.model import load_program
from mapping.spatial.reference import ReferenceExecutor
from mapping.spatial.simulator import StreamingSimulator


def _check_exact(p) -> None:
    an = analyse(p)
    ref = ReferenceExecutor(p)()
    res = StreamingSimulator(an)()
    for o in p.outputs:
        np.testing.assert_array_equal(res.outputs[o], ref[o])  # bit-exact: same operations, same order
    assert res.cycles == an.model.cycles
    assert res.backpressure_cycles == 0
    for ch in res.channels:
        assert ch.peak <= ch.capacity


@pytest.mark.parametrize("name", ["jacobi2d_chain", "jacobi3d_chain", "hdiff", "forkjoin"])
def test_examples_equal_reference(examples, name):
    """Simulated outputs equal the NumPy reference executor exactly (tolerance 0)."""
    _check_exact(load_program(examples / f"{name}.json"))


@pytest.mark.parametrize("kind", ["chain", "fork", "diamond"])
def test_synthetic_equal_reference(kind):
    """Synthetic chains/forks/diamonds: exact equality with the reference, stall-free."""
    _check_exact(load_program(synthetic(kind, 7, (6, 5, 4), seed=3)))


def test_vectorised_equals_reference():
    """W=4 tokens: same values as the reference (exact), cycles = points/4 + depth."""
    _check_exact(load_program(jacobi_chain(3, (6, 5, 8), vectorization=4)))


def test_link_latency_is_simulated():
    """Extra link latency on a cut channel delays the schedule exactly by that much, values unchanged."""
    p = load_program(jacobi_chain(3, (6, 5, 4)))
    base = analyse(p)
    an = analyse(p, link_latency={("s0", "s1"): 50})
    res = StreamingSimulator(an)()
    assert res.cycles == an.model.cycles == base.model.cycles + 50
    np.testing.assert_array_equal(res.outputs["s2"], ReferenceExecutor(p)()["s2"])


def test_64cube_jacobi_chain_of_8_is_fast_and_exact():
    """The 64^3 chain of 8 jacobi stencils (262144 points) simulates exactly (budget: seconds)."""
    p = load_program(jacobi_chain(8, (64, 64, 64)))
    an = analyse(p)
    res = StreamingSimulator(an)()
    assert res.cycles == an.model.cycles
    np.testing.assert_array_equal(res.outputs["s7"], ReferenceExecutor(p)()["s7"])


def test_undersized_buffer_deadlock_names_channels():
    """Diamond a->b->c, a->c with a 1-token direct channel: deadlock naming both channels."""
    spec = {"inputs": {"a": {}}, "outputs": ["c"], "dimensions": [10, 10],
            "program": {"b": {"computation_string": "res = a[j+1,k]", "boundary_conditions": {"a": {"type": "constant"}}},
                        "c": {"computation_string": "res = a[j,k] + b[j,k]"}}}
    an = analyse(load_program(spec))
    with pytest.raises(StencilFlowError, match=r"deadlock at cycle \d+.*a->c full \(1/1.*b->c empty"):
        StreamingSimulator(an, {"a->c": 1})()


def _shrink_results(an):
    for ch in an.channels:
        if ch.capacity > 1:
            try:
                yield ch.name, StreamingSimulator(an, {ch.name: ch.capacity - 1})()
            except StencilFlowError as exc:
                assert "deadlock" in str(exc)
                yield ch.name, None


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(2, 6),
    shape=st.sampled_from([(3, 4, 5), (5, 7), (4, 3, 3), (17,)]),
    inputs=st.integers(1, 3),
    width=st.sampled_from([1, 1, 2]),
)
def test_property_random_dags_are_correct_stall_free_and_minimal(seed, n, shape, inputs, width):
    """Random DAGs (cross-dependent reconvergent paths, all boundary kinds, vector width 1 or 2):
    computed capacities never deadlock, equal the reference exactly and never back-pressure;
    every channel shrunk by one token deadlocks or back-pressures (minimality)."""
    p = load_program(random_dag(seed, n, shape, inputs=inputs))
    if shape[-1] % width == 0:
        p = p.with_vectorization(width)
    an = analyse(p)
    _check_exact(p)
    for name, res in _shrink_results(an):
        assert res is None or res.stalled, f"{name} shrunk by one still runs stall-free"


def test_cross_dependent_reconvergence_is_exact():
    """a->b->c->d, a->c, b->d (every path crosses another): longest-path starts and capacities
    (hand-derived: W(b)=m+1, W(c)=W(b)+Lb, W(d)=W(c)+Lc) and a stall-free exact run."""
    spec = {"inputs": {"a": {}}, "outputs": ["d"], "dimensions": [6, 7],
            "program": {"b": {"computation_string": "res = a[j+1,k]", "boundary_conditions": {"a": {"type": "constant"}}},
                        "c": {"computation_string": "res = a[j,k] * b[j,k]"},
                        "d": {"computation_string": "res = c[j,k] - b[j,k]"}}}
    p = load_program(spec)
    an = analyse(p)
    lb, lc = an.stencils["b"].latency, an.stencils["c"].latency
    assert an.start["b"] == 7 + 1
    assert an.start["c"] == an.start["b"] + lb
    assert an.start["d"] == an.start["c"] + lc
    assert an.channel("a", "c").capacity == an.start["c"] - 0 + 1
    assert an.channel("b", "d").capacity == an.start["d"] - an.start["b"] + 1
    _check_exact(p)


def test_iterator_values_in_expressions():
    """res = a[i,j,k+1] * k if i > 1 else j: reference equals the NumPy formula (exact) and
    the simulator equals the reference (exact)."""
    spec = {"inputs": {"a": {"data_type": "float64"}}, "outputs": ["s"], "dimensions": [4, 3, 5],
            "program": {"s": {"computation_string": "res = a[i,j,k+1] * k if i > 1 else j", "data_type": "float64",
                              "boundary_conditions": {"a": {"type": "constant", "value": 2.0}}}}}
    p = load_program(spec)
    a = p.load_inputs()["a"]
    i, j, k = np.indices(p.shape)
    nxt = np.concatenate([a[:, :, 1:], np.full((4, 3, 1), 2.0)], axis=2)
    expected = np.where(i > 1, nxt * k, j)
    np.testing.assert_array_equal(ReferenceExecutor(p)()["s"], expected)
    _check_exact(p)

"""benchmarks.fv3.kernel_times: the launches of a step, each timed inside the step and on its
own."""

from __future__ import annotations

import pytest

from benchmarks import common, fv3
from stencils.launch import BoundStencil
from tests.benchmarks.test_timing import FakeClock


class FakeStencil:
    """A factory stencil stand-in without a compiled object (BoundStencil calls it each time);
    every call costs ``seconds`` on the fake clock."""

    def __init__(self, name: str, seconds: float, clock: FakeClock) -> None:
        self.name, self.seconds, self.clock, self.calls = name, seconds, clock, 0

    def __call__(self, *, origin, domain, **arguments) -> None:
        self.calls += 1
        self.clock.now += self.seconds


class FakeModel:
    def __init__(self, steps) -> None:
        self.steps = steps

    def step(self) -> None:
        for s in self.steps:
            s()


def test_kernel_times_sums_each_stencils_launches_of_one_step(monkeypatch):
    """Reference: hand count with a fake clock -- stencil a launches twice per step at 0.5 ms,
    b once at 3 ms; a Python call in the step that is no launch is not timed.  Inside the step:
    10 steps.  Warm: each launch sized to ceil(2 ms / cost) calls per sample (a: 4, b: 1),
    5 samples."""
    clock = FakeClock()
    monkeypatch.setattr(common.time, "perf_counter", clock)
    original = BoundStencil.__call__
    a, b = FakeStencil("a", 0.5e-3, clock), FakeStencil("b", 3e-3, clock)
    bound = dict(origin=(0, 0, 0), domain=(1, 1, 1))
    other = []
    model = FakeModel([BoundStencil(a, **bound), lambda: other.append(1), BoundStencil(b, **bound),
                       BoundStencil(a, **bound)])  # fmt: skip
    out = fv3.kernel_times(model)
    assert list(out) == ["b", "a"]  # largest time per step first
    assert out["a"]["launches"] == 2 and out["b"]["launches"] == 1
    assert out["a"]["seconds_per_step"] == pytest.approx(1e-3)
    assert out["a"]["seconds_per_launch"] == pytest.approx(0.5e-3)
    assert out["b"]["seconds_per_step"] == pytest.approx(3e-3)
    assert out["a"]["in_step_seconds_per_step"] == pytest.approx(1e-3)
    assert out["b"]["in_step_seconds_per_step"] == pytest.approx(3e-3)
    assert a.calls == 2 * (10 + 1 + 5 * 4) and b.calls == 10 + 1 + 5 * 1
    assert other == [1] * 10  # the step ran 10 times; only launches are repeated
    assert BoundStencil.__call__ is original


def test_kernel_times_restores_the_launch_call_when_the_step_fails():
    class Broken:
        def step(self) -> None:
            raise RuntimeError("step failed")

    original = BoundStencil.__call__
    with pytest.raises(RuntimeError, match="step failed"):
        fv3.kernel_times(Broken())
    assert BoundStencil.__call__ is original


def test_in_step_time_is_the_median_over_the_steps(monkeypatch):
    """Reference: hand computation -- a launch costing 1, 9, 2 ms in three steps has the
    median 2 ms inside the step, while its warm time is its cost when repeated (now 2 ms)."""
    clock = FakeClock()
    monkeypatch.setattr(common.time, "perf_counter", clock)
    costs = iter([1e-3, 9e-3])
    a = FakeStencil("a", 2e-3, clock)
    model = FakeModel([BoundStencil(a, origin=(0, 0, 0), domain=(1, 1, 1))])
    original_call = FakeStencil.__call__

    def varying(self, **kwargs):
        original_call(self, **kwargs)
        self.clock.now += next(costs, 2e-3) - self.seconds

    monkeypatch.setattr(FakeStencil, "__call__", varying)
    out = fv3.kernel_times(model, steps=3)
    assert out["a"]["in_step_seconds_per_step"] == pytest.approx(2e-3)
    assert out["a"]["seconds_per_step"] == pytest.approx(2e-3)


def test_kernel_table_shows_warm_and_in_step_times():
    """Reference: hand-formatted cells (ms, 3 decimals; totals 2 decimals)."""
    kernels = {"a": {"launches": 2, "seconds_per_step": 1e-3, "in_step_seconds_per_step": 1.5e-3},
               "b": {"launches": 1, "seconds_per_step": 3e-3, "in_step_seconds_per_step": 4e-3}}
    md = "\n".join(fv3._kernel_table({"gt": {"kernels": kernels}, "numpy": {}}))
    assert "| a | 2 | 1.000 / 1.500 |" in md
    assert "| **all launches** | 3 | **4.00 / 5.50** |" in md
    assert "gt (ms)" in md and "numpy (ms)" not in md

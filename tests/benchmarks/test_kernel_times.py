"""benchmarks.fv3.kernel_times: the launches of one step, each timed on its own."""

from __future__ import annotations

import pytest

from benchmarks import common, fv3
from fv3core.stencils.launch import BoundStencil
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
    b once at 3 ms; a Python call in the step that is no launch is not timed.  Each launch is
    sized to ceil(2 ms / cost) calls per sample (a: 4, b: 1), 5 samples."""
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
    assert a.calls == 2 * (1 + 1 + 5 * 4) and b.calls == 1 + 1 + 5 * 1
    assert other == [1]  # the step ran once; only launches are repeated
    assert BoundStencil.__call__ is original


def test_kernel_times_restores_the_launch_call_when_the_step_fails():
    class Broken:
        def step(self) -> None:
            raise RuntimeError("step failed")

    original = BoundStencil.__call__
    with pytest.raises(RuntimeError, match="step failed"):
        fv3.kernel_times(Broken())
    assert BoundStencil.__call__ is original

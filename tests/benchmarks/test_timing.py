"""benchmarks.common.time_interleaved: rounds, consecutive calls per turn, per-call means."""

from __future__ import annotations

import pytest

from benchmarks import common


class FakeClock:
    """perf_counter that only the timed functions advance: durations are exact."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_turns_are_consecutive_calls_of_at_least_the_round_time(monkeypatch):
    """Reference: hand count -- a 2 ms function needs ceil(10 / 2) = 5 calls to fill a 10 ms
    turn, a 30 ms one 1 call; each sample is the mean per call (exact with a fake clock)."""
    clock = FakeClock()
    monkeypatch.setattr(common.time, "perf_counter", clock)
    order: list[str] = []

    def work(name: str, seconds: float):
        def fn() -> None:
            order.append(name)
            clock.now += seconds

        return fn

    fns = {"fast": work("fast", 0.002), "slow": work("slow", 0.030)}
    out = common.time_interleaved(fns, repeats=3, min_round_seconds=0.010)
    assert out["fast"].calls_per_sample == 5 and out["slow"].calls_per_sample == 1
    assert out["fast"].median_s == pytest.approx(0.002) and out["slow"].median_s == pytest.approx(0.030)
    # warm-up and sizing: two calls each; then rounds rotate the starting function
    timed = order[4:]
    assert timed == ["fast"] * 5 + ["slow"] + ["slow"] + ["fast"] * 5 + ["fast"] * 5 + ["slow"]


def test_without_round_time_each_turn_is_one_call(monkeypatch):
    """Reference: the definition -- min_round_seconds = 0 keeps one call per turn."""
    clock = FakeClock()
    monkeypatch.setattr(common.time, "perf_counter", clock)
    calls = {"a": 0}

    def a() -> None:
        calls["a"] += 1
        clock.now += 0.001

    out = common.time_interleaved({"a": a}, repeats=4)
    assert out["a"].calls_per_sample == 1 and calls["a"] == 5

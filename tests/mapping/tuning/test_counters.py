"""Hardware counters: perf output parsing, the IPC difference trick, the recorded status."""

from __future__ import annotations

import pytest

from mapping.tuning import counters
from mapping.tuning.counters import CounterStatus, ipc_from_runs, parse_perf_stat

SUPPORTED = "1200000,,instructions:u,1000,100.00,,\n800000,,cycles:u,1000,100.00,,\n"
UNSUPPORTED = "<not supported>,,instructions,0,100.00,,\n<not supported>,,cycles,0,100.00,,\n"


def test_parse_perf_stat() -> None:
    assert parse_perf_stat(SUPPORTED) == {"instructions": 1.2e6, "cycles": 8e5}
    assert parse_perf_stat(UNSUPPORTED) == {"instructions": None, "cycles": None}


def test_ipc_is_the_ratio_of_count_differences() -> None:
    """Start-up counts cancel: (9e6 - 1e6) / (4e6 - 2e6) = 4 instructions per cycle."""
    outs = {3: "1000000,,instructions\n2000000,,cycles\n", 43: "9000000,,instructions\n4000000,,cycles\n"}
    assert ipc_from_runs(lambda r: outs[r]) == pytest.approx(4.0, rel=1e-12)
    assert ipc_from_runs(lambda r: UNSUPPORTED) is None


def test_probe_records_why_counters_are_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    counters.probe.cache_clear()
    monkeypatch.setattr(counters, "_perf_path", lambda: None)
    status = counters.probe()
    assert not status.available and "linux-perf" in status.reason
    assert counters.status_dict(status)["ipc"].startswith("unavailable: ")
    counters.probe.cache_clear()


def test_probe_on_this_machine_is_consistent() -> None:
    """Either perf counts instructions and cycles, or the status names the reason."""
    counters.probe.cache_clear()
    status = counters.probe()
    assert isinstance(status, CounterStatus) and status.reason
    if not status.available:
        assert "perf" in status.reason

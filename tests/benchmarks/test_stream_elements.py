"""The STREAM triad's array length: the benchmarks' default (arrays of 16 times this machine's
32 MiB L3, STREAM's rule asks 4 times the caches), and the test suite's smaller arrays through
$STRATOFLOW_STREAM_ELEMENTS (tests/conftest.py), which keep a benchmark test's memory low."""

from __future__ import annotations

import pytest

from benchmarks.common import STREAM_ELEMENTS, stream_triad


def test_the_default_streams_through_more_than_the_caches() -> None:
    assert STREAM_ELEMENTS * 8 >= 4 * 32 * 2**20


def test_the_environment_sets_the_length(monkeypatch) -> None:
    monkeypatch.setenv("STRATOFLOW_STREAM_ELEMENTS", str(1 << 20))
    result = stream_triad(repeats=2, threads=1)
    assert result.elements == 1 << 20 and result.triad_gbs > 0.1
    assert stream_triad(elements=1 << 19, repeats=2, threads=1).elements == 1 << 19


@pytest.mark.parametrize("value", ["", "0", "-5", "many"])
def test_a_bad_value_keeps_the_default(monkeypatch, value) -> None:
    """Only a positive whole number replaces the default (the run itself is not started here:
    the length is read before the C program runs)."""
    import benchmarks.common as common

    seen = {}
    monkeypatch.setattr(common, "run_c_program", lambda path, args, threads: seen.update(args=args) or ["1.0", "1"])
    monkeypatch.setenv("STRATOFLOW_STREAM_ELEMENTS", value)
    assert common.stream_triad(repeats=1).elements == STREAM_ELEMENTS
    assert seen["args"][0] == str(STREAM_ELEMENTS)

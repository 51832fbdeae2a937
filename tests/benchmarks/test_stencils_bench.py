"""``stratoflow bench stencils`` end to end on tiny shapes (numpy backend and every peer)."""

from __future__ import annotations

import argparse
import json
import shutil

import pytest

from benchmarks import common, roofline
from benchmarks import stencils as bench


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_tiny_run_writes_peer_rows_and_bounds(tmp_path, monkeypatch):
    """Reference: the benchmark's own contract -- one row per shape, stencil and candidate,
    each with its achieved/bound, and the generated Markdown block with both tables."""
    monkeypatch.setattr(bench, "stream_triad", lambda: common.stream_triad(elements=1 << 20))
    monkeypatch.setattr(roofline, "fma_peak", lambda: roofline.PeakResult(gflops=50.0, threads=2))
    parser = argparse.ArgumentParser()
    bench.add_arguments(parser)
    args = parser.parse_args([
        "--json", str(tmp_path / "s.json"), "--markdown", str(tmp_path / "s.md"),
        "--shapes", "12x10x6", "8x8x4", "--backends", "numpy", "--repeats", "10",
        "--stencils", "laplacian_3d", "vadv",
    ])  # fmt: skip
    assert bench.run(args) == 0
    data = json.loads((tmp_path / "s.json").read_text())
    candidates = {"numpy", "peer:numpy", "peer:numba", "peer:c"}
    for shape in ("12x10x6", "8x8x4"):
        for name in ("laplacian_3d", "vadv"):
            rows = [r for r in data["results"] if r["shape"] == shape and r["stencil"] == name]
            assert {r["candidate"] for r in rows} == candidates
            for r in rows:
                assert r["kind"] == ("backend" if r["candidate"] == "numpy" else "peer")
                assert r["achieved_over_bound"] > 0 and r["min_ms"] <= r["median_ms"] <= r["max_ms"]
                assert r["max_abs_diff_vs_numpy"] <= 1e-10
    assert {r["limit"] for r in data["rooflines"]} <= {"memory", "compute"}
    assert data["peak_gflops"] == 50.0 and data["stream_triad_gbs"] > 0
    page = (tmp_path / "s.md").read_text()
    assert "## 12x10x6: best stratoflow backend vs best peer" in page and "## All candidates" in page
    assert page.startswith("<!-- benchmark:start -->")


def test_shapes_option_parses_nx_ny_nz():
    """Reference: the option's definition -- NXxNYxNZ, positive sizes."""
    assert bench.parse_shape("256x128x80") == (256, 128, 80)
    for bad in ("256x128", "0x4x4", "axbxc"):
        with pytest.raises(argparse.ArgumentTypeError):
            bench.parse_shape(bad)

"""``stratoflow map``: summary on stdout, JSON report, DOT/PNG, errors without traceback."""

from __future__ import annotations

import json

from workflows.cli import main


def test_map_simulate_report_and_dot(examples, tmp_path, capsys):
    report, dot = tmp_path / "r.json", tmp_path / "g.dot"
    rc = main(["map", str(examples / "hdiff.json"), "--devices", "2", "--device-memory", "40000",
               "--simulate", "--report", str(report), "--dot", str(dot)])
    assert rc == 0
    out = capsys.readouterr().out
    assert "delay buffers" in out and "simulated:" in out and "cut " in out
    data = json.loads(report.read_text())
    assert data["simulation"]["cycles"] == data["model"]["cycles"]
    assert data["simulation"]["max_abs_error_vs_reference"] == 0.0
    assert len(data["partition"]["devices"]) == 2 and data["partition"]["cut_channels"]
    assert data["halos"]["out_field"]["width"] == [2, 2, 0]
    assert dot.read_text().startswith('digraph "cosmo_hdiff"')


def test_map_png_and_synthetic(tmp_path):
    png = tmp_path / "g.png"
    assert main(["map", "synthetic:diamond:7:8", "--vector-width", "2", "--dot", str(png)]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_map_user_error_is_one_line(tmp_path, caplog):
    bad = tmp_path / "bad.json"
    bad.write_text('{"inputs": {}, "outputs": ["x"], "dimensions": [4], "program": {"x": {"computation_string": "res = y[k]"}}}')
    assert main(["map", str(bad)]) == 1
    assert "StencilFlowError" in caplog.text and "undefined field 'y'" in caplog.text


def test_map_latency_table(examples, tmp_path, capsys):
    """A slower adder (add=10 instead of 3) lengthens the 2D jacobi pipelines: 4 adds -> +28 cycles each."""
    lat = tmp_path / "lat.json"
    lat.write_text('{"add": 10}')
    rep_fast, rep_slow = tmp_path / "f.json", tmp_path / "s.json"
    assert main(["map", str(examples / "jacobi2d_chain.json"), "--report", str(rep_fast)]) == 0
    assert main(["map", str(examples / "jacobi2d_chain.json"), "--latencies", str(lat), "--report", str(rep_slow)]) == 0
    fast = json.loads(rep_fast.read_text())["stencils"]["s0"]["latency_cycles"]
    slow = json.loads(rep_slow.read_text())["stencils"]["s0"]["latency_cycles"]
    assert slow - fast == 4 * 7
    lat.write_text('{"adder": 10}')
    assert main(["map", str(examples / "jacobi2d_chain.json"), "--latencies", str(lat)]) == 1


def test_map_library_stencil_via_gtscript_bridge(capsys, caplog):
    """library:hdiff is bridged from GTScript and simulates exactly (error 0 vs the reference);
    library:vadv (FORWARD/BACKWARD) maps onto recurrence nodes and simulates exactly too."""
    assert main(["map", "library:hdiff:10", "--simulate"]) == 0
    assert "max |error| vs reference 0" in capsys.readouterr().out
    assert main(["map", "library:vadv:10", "--simulate"]) == 0
    assert "max |error| vs reference 0" in capsys.readouterr().out

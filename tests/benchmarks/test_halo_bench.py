"""The halo benchmark (benchmarks/halo.py, benchmarks/peers_halo): the pace-util worker's
exchange against ours, the statistics, result merging and Markdown from fake results, the
pace-venv skip path with a fake pip, and one tiny real ``mpiexec -n 6`` run."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from benchmarks import halo
from benchmarks.peers_halo import pace_venv, report
from benchmarks.peers_halo.pace_worker import FIELDS, N_SCALARS, field_shapes
from mapping.cluster import (
    CubedSpherePartitioner,
    HaloExchange,
    LocalComm,
    ScalarHalo,
    VectorHalo,
)
from mapping.cluster.specs import VECTOR_GRIDS
from tests.mpi_jobs import MPIEXEC

BIN = Path(sys.executable).parent


def _our_bytes(layout: int, n_tile: int, levels: int, sync_edges: bool) -> list[int]:
    """Bytes every rank of our exchange sends (in-process ranks)."""
    comms = LocalComm.create(6 * layout**2)
    part = CubedSpherePartitioner((layout, layout))
    out = []
    for comm in comms:
        a = halo.exchange_arrays(n_tile // layout, 3, levels, comm.rank)
        names = [name for name, _, _ in FIELDS]
        specs = [ScalarHalo(a[k], n_halo=3, sync_edges=sync_edges) for k in names[:N_SCALARS]]
        specs.append(VectorHalo(a["u"], a["v"], n_halo=3, grid="D", sync_edges=sync_edges))
        ex = HaloExchange(comm, part, specs, packing="slicing")
        out.append(sum(ex.message_bytes().values()))
    return out


def test_worker_fields_are_our_d_grid_exchange():
    """Reference: pace-util 0.9.0's D grid (fv3core: u on (x, y_interface), v on
    (x_interface, y)) and our VECTOR_GRIDS["D"]; shapes n + stagger + 2h by hand."""
    dims = {name: d for name, d, _ in FIELDS}
    assert dims["u"] == ("x", "y_interface", "z") and dims["v"] == ("x_interface", "y", "z")
    for name, d, stagger in FIELDS:
        assert stagger == (int(d[0] == "x_interface"), int(d[1] == "y_interface")), name
    assert tuple(s for _, _, s in FIELDS[N_SCALARS:]) == VECTOR_GRIDS["D"]
    shapes = field_shapes(48, 3, 79)
    assert shapes["q0"] == (54, 54, 79) and shapes["u"] == (54, 55, 79) and shapes["v"] == (55, 54, 79)
    arrays = halo.exchange_arrays(48, 3, 79, seed=0)
    assert {k: a.shape for k, a in arrays.items()} == shapes
    assert all(a.dtype == np.float64 for a in arrays.values())


def test_pace_bytes_by_hand_equal_ours_without_edge_sync():
    """Reference: pace-util 0.9.0 _boundary_utils.get_boundary_slice, counted by hand -- per
    edge h rows of the compute extent, interface dims shifted one point inwards: 3 scalars
    h*n, u and v h*(n+1) along one edge and h*n along the other, so h*(5n+1)*nz values per
    edge and 4 edges at layout 1. Ours adds the shared u/v edge points (sync_edges)."""
    n, h, nz = 12, 3, 2
    pace = 4 * h * (5 * n + 1) * nz * 8
    assert _our_bytes(1, n, nz, sync_edges=False) == [pace] * 6
    assert all(b > pace for b in _our_bytes(1, n, nz, sync_edges=True))


def test_pace_describe_equals_ours_without_edge_sync():
    """Reference: pace-util 0.9.0's own boundary send slices (the worker's --describe, pace's
    in-process LocalComm), at layout 1 and 2 (corner neighbours inside a tile)."""
    python = pace_venv.DEFAULT_VENV / "bin" / "python"
    if not (pace_venv.DEFAULT_VENV / pace_venv.STAMP).is_file():
        pytest.skip(f"no pace-util venv at {pace_venv.DEFAULT_VENV}: `stratoflow bench halo` "
                    "creates it (the test suite does not)")  # fmt: skip
    for layout, n_tile in ((1, 12), (2, 24)):
        proc = subprocess.run(
            [str(python), str(pace_venv.WORKER), "--describe", "--cases", str(n_tile),
             "--levels", "2", "--layout", str(layout)],
            capture_output=True, text=True, check=True, timeout=60,
        )  # fmt: skip
        pace = json.loads(proc.stdout)[f"C{n_tile}"]
        assert pace == _our_bytes(layout, n_tile, 2, sync_edges=False)


def test_ratio_interval_of_constant_and_scaled_samples():
    """Reference: exact arithmetic -- samples b = 2a give median ratio 0.5 in every bootstrap
    resample when a is constant; quartiles of 1..5 are 2, 3, 4 (numpy linear percentiles)."""
    r = report.ratio_interval([1.0] * 9, [2.0] * 7)
    assert r == {"median": 0.5, "ci95_low": 0.5, "ci95_high": 0.5}
    r = report.ratio_interval([1.0, 2.0, 3.0, 4.0, 5.0], [3.0] * 5)
    assert r["median"] == 1.0 and r["ci95_low"] < 1.0 < r["ci95_high"]
    assert report.quartiles([5, 1, 3, 2, 4]) == (2.0, 3.0, 4.0)


def _pass(case: str, auto_ms: float, raw_ms: float, per_rank: int, ranks: int = 6) -> dict:
    samples = {"raw": [raw_ms] * 3, "slicing": [9.0] * 3, "datatypes": [8.0] * 3,
               "shared": [auto_ms] * 3}  # fmt: skip
    return {
        "case": case, "ranks": ranks, "layout": 1 if ranks == 6 else 2, "levels": 79, "halo": 3,
        "cells_per_rank": per_rank, "packing": "shared", "samples_ms": samples,
        "one_time_measurement_ms": {"slicing": 9.0, "datatypes": 8.0, "shared": auto_ms},
        "bytes_sent_per_rank": 1000, "bytes_sent_all_ranks": 6000,
        "phases_ms": {"shared": {"pack": 1.0, "post": 0.1, "wait": 2.0, "unpack": 1.0}},
    }  # fmt: skip


def _payload(ranks: int, passes: list, pace: dict) -> dict:
    results = report.combine(passes, pace, triad_gbs=4.0)
    return {"benchmark": "halo", "command": f"mpiexec -n {ranks} stratoflow bench halo",
            "machine": {"cpu": "fake", "cores": 2, "time": "now"}, "mpi_ranks": ranks,
            "stream_triad_GBs": 4.0, "peak_rss_MB_per_rank": 100.0,
            "rss_growth_MB_per_rank": 20.0, "pace": pace, "results": results}  # fmt: skip


def test_combine_pools_passes_and_markdown_shows_ratios():
    """Reference: hand arithmetic on constant fake samples -- passes at 4 and 6 ms pool to a
    median of 5 ms; against pace-util 10 ms that is 0.5, against raw 4 ms 1.25."""
    pace = {"status": "ok", "pace_util_version": "0.9.0", "numpy_version": "1.26.4",
            "wall_s": 3.0, "venv_setup_s": 0.0, "peak_rss_MB_per_rank": 120.0,
            "results": [{"case": "C48", "median_ms": 10.0, "samples_ms": [10.0] * 3,
                         "bytes_sent_per_rank": 900}]}  # fmt: skip
    passes = [[_pass("C48", 4.0, 4.0, 48)], [_pass("C48", 6.0, 4.0, 48)]]
    payload = _payload(6, passes, pace)
    (row,) = payload["results"]
    assert row["stratoflow"]["median_ms"] == 5.0 and row["stratoflow"]["pass_median_ms"] == [4.0, 6.0]
    assert row["ratio_to_pace"]["median"] == 0.5 and row["ratio_to_raw"]["median"] == 1.25
    assert row["halo_GBs"] == pytest.approx(6000 / 5e-3 / 1e9)
    text = report.markdown(payload)
    assert "| C48 | 6 | shared | 4 / 6 | 10 | 4 | 0.5 [" in text
    assert "1.0 / 0.9" in text  # kB sent per rank, stratoflow / pace-util
    assert "pace-util 0.9.0 (numpy 1.26.4)" in text and "not measured yet" in text.lower()
    assert report.WEAK_SCALING_COMMANDS[0] in text and "docs/benchmarks/halo.json" in text


def test_weak_scaling_rows_and_table():
    """Reference: hand arithmetic -- the 6-rank C48 case at 5 ms and the 24-rank C96 case
    (48 cells per rank) at 10 ms give an efficiency of 0.5; the C96 6-rank case is left out."""
    base = _payload(6, [[_pass("C48", 5.0, 4.0, 48), _pass("C96", 7.0, 6.0, 96)]],
                    {"status": "disabled"})  # fmt: skip
    base["weak_scaling"] = _payload(24, [[_pass("C96", 10.0, 8.0, 48, ranks=24)]],
                                    {"status": "disabled"})  # fmt: skip
    rows = report.weak_scaling_rows(base)
    assert [(r["ranks"], r["case"]) for r in rows] == [(6, "C48"), (24, "C96")]
    assert [r["efficiency"] for r in rows] == [1.0, 0.5]
    assert all(r["oversubscribed"] for r in rows)
    text = report.markdown(base)
    assert "## Weak scaling (same cells per rank)" in text
    assert "| 24 | C96 | 48x48 | 10 | 8 | n/a | n/a | 1.25 [1.25, 1.25] | 0.5 / n/a | 100 / n/a | yes |" in text


def test_weak_scaling_needs_a_matching_base_run(tmp_path):
    """Reference: the --weak-scaling contract (benchmarks/halo.py): the earlier run's JSON must
    exist and hold a case with the same cells per rank."""
    args = argparse.Namespace(json=tmp_path / "halo.json", layout=2, case_list=[96])
    with pytest.raises(halo.BenchmarkError, match="run `mpiexec -n 6 stratoflow bench halo`"):
        halo._base_payload(args)
    args.json.write_text(json.dumps({"results": [{"cells_per_rank": 96}]}))
    with pytest.raises(halo.BenchmarkError, match=r"no case with \[48\] cells"):
        halo._base_payload(args)


def test_failed_pip_gives_the_skip_message(tmp_path, monkeypatch, caplog):
    """Reference: the offline case -- pip exits 1 with its 'No matching distribution' error;
    the venv is not stamped, and the log and the Markdown say why and what to pass."""
    calls = []

    def fake_run(cmd, **kwargs):
        calls.append(cmd)
        if cmd[1:3] == ["-m", "venv"]:
            (Path(cmd[3]) / "bin").mkdir(parents=True)
            (Path(cmd[3]) / "bin" / "python").touch()
            return SimpleNamespace(returncode=0, stdout="", stderr="")
        return SimpleNamespace(returncode=1, stdout="",
                               stderr="ERROR: No matching distribution found for pace-util==0.9.0")

    monkeypatch.setattr(pace_venv.subprocess, "run", fake_run)
    args = argparse.Namespace(no_pace=False, pace_venv=tmp_path / "venv")
    pace = halo._prepare_pace(args)
    assert pace["status"] == "skipped"
    assert pace["reason"].startswith("pace-util comparison skipped: installing pace-util==0.9.0")
    assert "No matching distribution" in pace["reason"] and "--pace-venv DIR" in pace["reason"]
    assert "pace-util comparison skipped" in caplog.text
    assert calls[1][:5] == [str(tmp_path / "venv" / "bin" / "python"), "-m", "pip", "install",
                            "--quiet"]  # fmt: skip
    assert not (tmp_path / "venv" / pace_venv.STAMP).exists()
    payload = _payload(6, [[_pass("C48", 5.0, 4.0, 48)]], pace)
    assert "**pace-util comparison skipped: installing" in report.markdown(payload)


def test_worker_command_env_and_output_parsing(tmp_path):
    """Reference: the worker's own argparse options (pace_worker._parser) and MPICH hydra's
    launcher variables (PMI_*, HYDRA_*), which the nested mpiexec must not inherit."""
    venv = pace_venv.PaceVenv(tmp_path, 0.0)
    args = SimpleNamespace(case_list=[48, 96], levels=79, halo=3, layout=1, repeats=30)
    cmd = pace_venv.worker_command(venv, 6, args, tmp_path / "out.json")
    assert cmd[:3] == [str(tmp_path / "bin" / "mpiexec"), "-n", "6"]
    assert cmd[4] == str(pace_venv.WORKER) and cmd[cmd.index("--cases") + 1] == "48,96"
    from benchmarks.peers_halo.pace_worker import _parser

    parsed = _parser().parse_args(cmd[5:])
    assert (parsed.levels, parsed.halo, parsed.layout, parsed.repeats) == (79, 3, 1, 30)
    env = pace_venv.worker_env({"PMI_RANK": "0", "PMI_FD": "5", "HYDRA_X": "1", "PATH": "/bin"})
    assert env == {"PATH": "/bin"}
    with pytest.raises(ValueError, match="not a pace_worker result"):
        pace_venv.parse_worker_output('{"results": []}')
    with pytest.raises(ValueError, match="lacks"):
        pace_venv.parse_worker_output('{"peer": "pace-util", "results": [{"case": "C48"}]}')


def test_tiny_real_run_under_mpiexec(tmp_path):
    """Reference: the benchmark's own contract -- a real 6-rank run writes JSON with both
    stratoflow passes' facts and a Markdown page naming the run; raw MPI moves exactly the
    exchange's bytes (the JSON's bytes equal the in-process exchange's)."""
    out_json, out_md = tmp_path / "halo.json", tmp_path / "halo.md"
    proc = subprocess.run(
        [str(MPIEXEC), "-n", "6", str(BIN / "stratoflow"), "bench", "halo", "--cases", "12",
         "--levels", "4", "--repeats", "3", "--no-stream", "--no-pace", "--json", str(out_json),
         "--markdown", str(out_md)],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    payload = json.loads(out_json.read_text())
    assert payload["pace"] == {"status": "disabled"} and len(payload["passes"]) == 1
    (row,) = payload["results"]
    assert row["case"] == "C12" and row["ranks"] == 6 and row["cells_per_rank"] == 12
    assert row["bytes_sent_per_rank"] == _our_bytes(1, 12, 4, sync_edges=True)[0]
    assert len(payload["passes"][0][0]["samples_ms"]["raw"]) == 3
    assert payload["peak_rss_MB_per_rank"] > 0
    text = out_md.read_text()
    assert "--no-pace" in text and "pace-util not measured (--no-pace)." in text

"""``stratoflow bench fv3``'s parts around the timing: the Fortran FV3 reference's FMS clocks
(benchmarks.fortran_reference), the peak-RSS helper (benchmarks.memory) and the Markdown block
generated from a JSON payload alone."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from benchmarks.fortran_reference import (
    DEFAULT_RUN,
    parse_fv_timing,
    parse_mpp_clocks,
    read_run,
)
from benchmarks.fv3 import markdown
from benchmarks.memory import peak_memory, tree_rss_bytes

#: an FMS clock summary as FV3's solo driver prints it (fv_timing block, then mpp_clock table)
FMS_TAIL = """\
 fv_restart_end delp =   3707408731581967002

   ---------------------------------------------------------------------
   Block                     User time  System Time   Total Time     GID
   ---------------------------------------------------------------------
   ATMOS_TOTAL                 10.5000       0.0000      10.5000       0
   FV_DYNAMICS                  8.0000       0.0000       8.0000       0
   FV_DIAG                      1.2500       0.0000       1.2500       0

 MPP_DOMAINS_STACK high water mark=        2328

Tabulating mpp_clock statistics across      6 PEs...

                                      hits          tmin          tmax          tavg          tstd  tfrac grain pemin pemax
Total runtime                            1     12.000000     12.500000     12.250000      0.100000  1.000     0     0     5
MAIN: initialization                     1      1.000000      1.100000      1.050000      0.010000  0.080     1     0     5
MAIN: time loop                          1      9.900000     10.000000      9.950000      0.010000  0.800     1     0     5
 MPP_STACK high water mark=           0
"""

NAMELIST = """\
 &fv_core_nml
       layout   = 1,1
       npx      = 13
       npy      = 13
       ntiles   = 6
       npz    = 1
       n_split = 2
       nord = 2
       d4_bg = 0.12
       hord_mt = 8
       hord_vt = 8
       hord_tm = 8
       hord_dp = 8
       hord_tr = 8
/
 &test_case_nml
    test_case = 2
    alpha = 0.
/
 &main_nml
       days  = 1
       dt_atmos = 1200
/
"""


def test_synthetic_clock_block_is_read_with_its_lines(tmp_path) -> None:
    """Reference: the synthetic FMS block above (values and 1-based lines typed by hand) and
    the namelist's step counts: 1 day / 1200 s = 72 large steps, x n_split 2 = 144."""
    fv = parse_fv_timing(FMS_TAIL)
    assert {k: c.seconds for k, c in fv.items()} == {"ATMOS_TOTAL": 10.5, "FV_DYNAMICS": 8.0,
                                                     "FV_DIAG": 1.25}  # fmt: skip
    assert fv["FV_DYNAMICS"].line == 7
    mpp, pes = parse_mpp_clocks(FMS_TAIL)
    assert pes == 6 and mpp["MAIN: time loop"].seconds == 10.0 and mpp["MAIN: time loop"].line == 17
    assert mpp["MAIN: time loop"].tmin == 9.9 and mpp["Total runtime"].tavg == 12.25
    (tmp_path / "stdout.txt").write_text(FMS_TAIL)
    (tmp_path / "input.nml").write_text(NAMELIST)
    run = read_run(tmp_path)
    assert (run.resolution, run.large_steps, run.n_split, run.acoustic_steps) == (12, 72, 2, 144)
    assert run.acoustic_dt == 600.0 and run.ranks == 6
    assert run.per_acoustic_step("FV_DYNAMICS") == pytest.approx(8.0 / 144)
    assert run.to_json()["per_acoustic_step_s"]["MAIN: time loop"] == pytest.approx(10.0 / 144)


@pytest.mark.skipif(not DEFAULT_RUN.is_dir(), reason="../shared/fv3-reference is absent")
def test_the_real_reference_run() -> None:
    """Reference: ../shared/fv3-reference/tc2_C48_d5 (its README: TC2 C48, 6 ranks, n_split 4,
    dt_atmos 1200 s, 5 days; stdout.txt's FMS clock lines, read by eye: FV_DYNAMICS 58.8587 s on
    line 704, MAIN: time loop tmax 102.256017 s on line 721)."""
    run = read_run(DEFAULT_RUN)
    assert (run.resolution, run.layout, run.ranks, run.dt_atmos, run.n_split) == (48, 1, 6, 1200, 4)
    assert (run.large_steps, run.acoustic_steps, run.acoustic_dt) == (360, 1440, 300.0)
    assert run.clocks["FV_DYNAMICS"].seconds == 58.8587 and run.clocks["FV_DYNAMICS"].line == 704
    loop = run.clocks["MAIN: time loop"]
    assert (loop.seconds, loop.line) == (102.256017, 721)
    lines = Path(run.stdout).read_text().splitlines()
    assert "FV_DYNAMICS" in lines[703] and "MAIN: time loop" in lines[720]
    # the README's "about 49 ms per acoustic step" is another pair of runs; this one's clocks
    assert 0.03 < run.per_acoustic_step("FV_DYNAMICS") < run.per_acoustic_step("MAIN: time loop")


def test_peak_memory_of_a_child_that_allocates_100_MB() -> None:
    """Reference: a child that touches 100 MB (bytearray zero-filled) and a grandchild of 60 MB
    beside it: the largest process is >= 100 MB, the sampled tree >= both together."""
    child = ("import subprocess, sys, time; b = bytearray(100_000_000); "
             "p = subprocess.Popen([sys.executable, '-c', "
             "'import time; c = bytearray(60_000_000); time.sleep(1.0)']); "
             "time.sleep(1.0); p.wait(); print('done')")  # fmt: skip
    usage, out, _ = peak_memory([sys.executable, "-c", child], interval=0.05)
    assert usage.returncode == 0 and out.strip() == "done"
    assert usage.largest_process_MB >= 100
    assert usage.tree_peak_MB >= 160 and usage.tree_peak_processes == 2
    total, count = tree_rss_bytes(1 << 30)  # no such process
    assert (total, count) == (0, 0)


def test_the_largest_process_is_not_the_parent_that_started_it() -> None:
    """Reference: this process holds 300 MB more while it starts a child that allocates
    nothing (a Python interpreter: tens of MB): the child's largest process is the child's own
    size, not this process's (a forked-and-exec'd child's ru_maxrss would be >= 300 MB)."""
    ballast = bytearray(300_000_000)
    ballast[:: 4096] = b"x" * len(ballast[:: 4096])  # touch every page
    usage, _, _ = peak_memory([sys.executable, "-c", "import time; time.sleep(0.6)"], interval=0.05)
    assert usage.returncode == 0 and 1 < usage.largest_process_MB < 100
    del ballast


def test_failing_command_returns_its_code() -> None:
    """Reference: ``sys.exit(3)``: the exit status comes back, nothing raises."""
    usage, _, _ = peak_memory([sys.executable, "-c", "import sys; sys.exit(3)"])
    assert usage.returncode == 3


def _fake_payload() -> dict:
    backend = {"backend": "numpy", "openmp_threads": 1, "step_ms": 100.0, "spread": 0.1,
               "steps_per_sample": 1, "cell_updates_per_s": 1e5, "bytes_per_step": 2e7,
               "achieved_GBs": 0.2, "fraction_of_stream": 0.01, "halo_share_in_process": 0.02,
               "profile": None, "speedup_vs_numpy": 1.0}  # fmt: skip
    fortran = {"run": "tc2_C48_d5", "stdout": "/ref/tc2_C48_d5/stdout.txt",
               "namelist": "/ref/tc2_C48_d5/input.nml", "resolution": 48, "layout": 1, "ranks": 6,
               "dt_atmos": 1200.0, "n_split": 4, "run_seconds": 432000.0, "large_steps": 360,
               "acoustic_steps": 1440, "acoustic_dt": 300.0,
               "clocks": {"FV_DYNAMICS": {"seconds": 57.6, "line": 704},
                          "MAIN: time loop": {"seconds": 100.8, "line": 721}},
               "per_acoustic_step_s": {"FV_DYNAMICS": 0.04, "MAIN: time loop": 0.07}}  # fmt: skip
    tree = {"command": "mpiexec", "returncode": 0, "wall_s": 9.0, "largest_process_MB": 250.0,
            "tree_peak_MB": 1500.0, "tree_peak_processes": 8}  # fmt: skip

    def mpi_row(n: int, layout: int, acoustic: float, rss: float) -> dict:
        return {"resolution": n, "layout": layout, "ranks": 6 * layout**2, "n_split": 4 * layout,
                "dt_atmos": 1200.0, "repeats": 2, "backend": "gt:cpu_ifirst",
                "step_s": acoustic * 4 * layout, "acoustic_step_s": acoustic, "halo_s": 0.01,
                "halo_share": 0.25, "rss_per_rank_MB_max": rss, "rss_per_rank_MB_min": rss - 1,
                "process_tree": tree, "cells_per_rank": 2304, "weak_efficiency": 0.03 / acoustic}  # fmt: skip

    peer_rows = [{"label": "mpiexec -n 6", "processes": 6, **mpi_row(48, 1, 0.03, 260.0),
                  "ratio_vs_fortran": 0.75},
                 {"label": "6 ranks in one process", "processes": 1, **mpi_row(48, 1, 0.02, 0.0),
                  "ratio_vs_fortran": 0.5}]  # fmt: skip
    return {
        "benchmark": "fv3", "step": "dynamics", "resolution": 48,
        "machine": {"cpu": "Test CPU", "cores": 2, "load_avg_1min": 0.5},
        "command": "OMP_NUM_THREADS=1 stratoflow bench fv3 --json docs/benchmarks/fv3core.json",
        "arguments": {"threads": [1], "min_round_ms": 50.0, "repeats": 3, "profile": False,
                      "kernels": False},
        "stream_triad_GBs": 20.0, "stream_threads": 2, "backends": {"numpy": backend},
        "mpi": None, "best_backend": "numpy",
        "fortran_peer": {"fortran": fortran, "fortran_acoustic_step_s": 0.04, "rows": peer_rows},
        "weak_scaling": [mpi_row(48, 1, 0.03, 260.0), mpi_row(96, 2, 0.12, 270.0)],
        "memory": [mpi_row(48, 1, 0.03, 260.0), mpi_row(192, 1, 0.5, 812.0)],
        "main_job_memory": {**tree, "command": "stratoflow run", "wall_s": 300.0},
    }  # fmt: skip


def test_markdown_from_a_fake_json(tmp_path) -> None:
    """Reference: the hand-made payload above; every figure of the page comes from it (ratio
    0.75x, Fortran 40.0 ms = 0.04 s, the 24-rank row's efficiency 0.25, C192's 812 MB), and
    ``--render-only`` writes the block from the JSON file alone."""
    payload = _fake_payload()
    text = markdown(json.loads(json.dumps(payload)))
    assert "| numpy | 100.0 | 1.0x |" in text
    assert "**0.75x**" in text and "**40.00**" in text and "/ref/tc2_C48_d5/stdout.txt` line 704" in text
    assert "Oversubscribed" in text and "| C96 | 2 | 24 | 2304 | 8 | 120.0 | 25% | 0.25 | 270 |" in text
    assert "| C192 | 6 | 3 | 812 | 811 | 1500 |" in text
    assert "stratoflow run" in text and "**250 MB**" in text
    assert "Reproduce: `OMP_NUM_THREADS=1 stratoflow bench fv3 --json docs/benchmarks/fv3core.json`" in text
    from workflows.cli import main

    data, md = tmp_path / "fv3core.json", tmp_path / "fv3core.md"
    data.write_text(json.dumps(payload))
    md.write_text("# fv3core\n\nhand-written\n")
    assert main(["bench", "fv3", "--render-only", "--json", str(data), "--markdown", str(md)]) == 0
    page = md.read_text()
    assert page.startswith("# fv3core\n\nhand-written\n") and text in page

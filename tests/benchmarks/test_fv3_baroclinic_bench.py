"""``stratoflow bench fv3 --case baroclinic`` on numpy at C8 L30 (two timed steps): the JSON
and the generated Markdown block hold what the benchmark measured; the storage per rank is
checked against a count of FV3's 3-D fields (a NumPy reference: nz x (nx + 2 h)^2 float64s);
the STREAM triad of the same run gives the state passes per step."""

from __future__ import annotations

import json

from benchmarks.fv3_baroclinic import BaroclinicStep
from workflows.cli import main


def test_bench_fv3_baroclinic_writes_json_and_its_markdown_block(tmp_path) -> None:
    out, md = tmp_path / "b.json", tmp_path / "fv3core.md"
    md.write_text("# fv3core\n\nhand-written text\n")
    assert main(["bench", "fv3", "--case", "baroclinic", "--resolution", "8", "--levels", "30",
                 "--backends", "numpy", "--repeats", "2", "--mpi-ranks", "0", "--no-peer",
                 "--kernels", "--json", str(out), "--markdown", str(md)]) == 0  # fmt: skip
    data = json.loads(out.read_text())
    assert (data["case"], data["resolution"], data["levels"], data["k_split"]) == (
        "baroclinic", 8, 30, 2)  # fmt: skip
    r = data["backends"]["numpy"]
    assert r["step_s"] > 0 and r["min_s"] <= r["step_s"] <= r["max_s"] and r["repeats"] == 2
    assert 0 <= r["halo_share_in_process"] < 1 and r["max_relative_difference_vs_numpy"] == 0
    assert data["stream_triad_GBps_1_thread"] > 0.1 and r["state_passes_at_triad"] > 0
    # one 3-D cell field of C8 L30 with FV3's 3-cell halo is 30 * 14 * 14 * 8 bytes = 47 kB;
    # dyn_core, tracers and remapping hold some tens of them per rank
    field_mb = 30 * 14 * 14 * 8 / 1e6
    assert 20 * field_mb < r["storage_MB_per_rank"] < 300 * field_mb
    # --kernels: every stencil call of 3 steps; on numpy the stencils are most of the step, the
    # x and y sweeps of a2b_ord4 run equally often, and the slowest stencil comes first
    k = r["kernels"]
    assert k["steps"] == 3 and 0.5 < k["stencil_share"] <= 1.0
    stencils = k["stencils"]
    assert stencils["a2b_ord4_x"]["calls_per_step"] == stencils["a2b_ord4_y"]["calls_per_step"] > 0
    assert {"geopotential", "xppm_inner", "map_layers"} <= set(stencils)
    times = [e["seconds_per_step"] for e in stencils.values()]
    assert times == sorted(times, reverse=True)
    text = md.read_text()
    assert text.startswith("# fv3core\n\nhand-written text\n")
    assert "<!-- baroclinic:start -->" in text and "C8 L30" in text and "| numpy |" in text
    first = next(iter(stencils))
    assert f"| `{first}` | {stencils[first]['calls_per_step']:.0f} |" in text
    assert "mpi" not in data and "fortran" not in data and "Fortran" not in text
    # --render-only rewrites the same block from the JSON alone
    md.write_text("# fv3core\n")
    assert main(["bench", "fv3", "--case", "baroclinic", "--render-only", "--json", str(out),
                 "--markdown", str(md)]) == 0  # fmt: skip
    assert md.read_text().count("| numpy |") == 1 and "C8 L30" in md.read_text()


def test_the_benchmarked_model_is_the_cli_run() -> None:
    """The benchmark's model is ``stratoflow fv3 run --case baroclinic``'s: FV3's JW options."""
    step = BaroclinicStep("numpy", 8, 26)
    cfg = step.config
    assert (cfg.nz, cfg.k_split, cfg.n_split, cfg.hord_mt, cfg.d2_bg_k1, step.dt) == (
        26, 2, 4, 10, 0.15, 1800.0)  # fmt: skip

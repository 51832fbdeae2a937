"""``stratoflow bench map --fv3``: the FV3 rows of the performance model and the generated block."""

from __future__ import annotations

import pytest

from benchmarks import mapping
from benchmarks.common import BenchmarkError, machine_info
from stencils.atomic import atomic_update_block


def test_fv3_rows_and_block_of_geopk(tmp_path):
    """geopk's row: its operators and flops come from the bridged program (flops are the field
    arithmetic only, fewer than the operators with predicates), it fits one device, its limit is
    the recurrence, the numpy time is measured; the block replaces only the marked part of a page."""
    (row,) = mapping._fv3(["geopk"], triad_gbs=10.0)
    assert 0 < row["flops_per_point"] < row["ops_per_point"]
    assert row["devices"] == 1 and row["recurrences"] == 3 and "recurrence" in row["limits"]
    assert row["cpu_numpy_s"] > 0 and row["model_s"] > 0
    page = tmp_path / "page.md"
    page.write_text("# title\n\n<!-- fv3-model:start -->\nold\n<!-- fv3-model:end -->\n\ntail\n")
    atomic_update_block(page, "fv3-model", mapping._fv3_block([row], 10.0, machine_info()))
    text = page.read_text()
    assert text.startswith("# title") and text.rstrip().endswith("tail") and "old" not in text
    assert "| geopk | 10 |" in text


def test_fv3_stratix10_row_of_geopk():
    """geopk on the Stratix 10 description: its DSP blocks are 4 per float64 multiplication on
    field values (nothing else uses a DSP), far below the device's 5,760; its carried path is
    longer than a cycle, so the recurrence bounds it to 1/carried points per cycle and sets the
    limit; GFlop/s is flops x that rate x 300 MHz, set against the paper's 1.31 TOp/s; the block
    shows the row and the cited figure."""
    import fv3core.stencilflow as fv3_programs
    from mapping.spatial.device import value_operations

    (row,) = mapping._fv3(["geopk"], triad_gbs=10.0)
    ops = value_operations(fv3_programs.build("geopk", 12).program)
    assert row["s10_dsps"] == 4 * ops[("float64", "mul")] > 0
    assert row["s10_dsp_share"] == pytest.approx(row["s10_dsps"] / 5760)
    assert row["s10_carried_latency"] > 1 and row["s10_limit"] == "recurrence"
    assert row["s10_points_per_cycle"] == pytest.approx(1 / row["s10_carried_latency"])
    assert row["s10_gflops"] == pytest.approx(row["flops_per_point"] * row["s10_points_per_cycle"] * 0.3)
    assert row["s10_over_paper"] == pytest.approx(row["s10_gflops"] / 1310)
    assert row["s10_model_s"] > row["model_s"]  # a quarter of the rate: slower than the one-point model
    block = mapping._fv3_block([row], 10.0, machine_info())
    assert f"| geopk | {row['flops_per_point']} | {row['s10_dsps']} |" in block
    assert "1.31 TOp/s" in block and "5760 DSP blocks" in block


def test_fv3_unknown_routine_is_refused():
    with pytest.raises(BenchmarkError, match="--fv3 nope.*fv_tp_2d"):
        mapping._fv3(["nope"], triad_gbs=10.0)

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


def test_fv3_unknown_routine_is_refused():
    with pytest.raises(BenchmarkError, match="--fv3 nope.*fv_tp_2d"):
        mapping._fv3(["nope"], triad_gbs=10.0)

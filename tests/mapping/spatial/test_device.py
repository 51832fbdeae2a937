"""The named Stratix 10 description and the resource model on it (mapping.spatial.device)."""

from __future__ import annotations

import dataclasses

import pytest

from mapping.spatial.analysis import analyse
from mapping.spatial.device import (
    PAPER_MULTI_DEVICE_TOPS,
    PAPER_SINGLE_DEVICE_TOPS,
    STRATIX10_GX2800,
    estimate,
    value_operations,
)
from mapping.spatial.errors import StencilFlowError
from mapping.spatial.model import load_program


def _program(source: str, dtype: str = "float64", recurrence: bool = False):
    bcs = {"a": {"type": "constant", "value": 0.0}}
    if recurrence:
        bcs["b"] = {"type": "constant", "value": 0.0}
    return load_program({
        "inputs": {"a": {"data_type": dtype}}, "outputs": ["b"], "dimensions": [4, 8],
        "program": {"b": {"computation_string": source, "data_type": dtype, "boundary_conditions": bcs}},
    })


HAND = "b = 0.5 * a[j, k-1] + a[j, k+1] * a[j, k] - sqrt(a[j, k])"


def test_published_numbers_and_their_sources():
    """Intel's GX 2800 figures (5,760 DSP blocks; 11,721 M20K of 20 Kbit), Intel's DSP table (SP add
    and multiply 1 block, DP multiply 4, DP add none), the project's 300 MHz, the paper's abstract
    figures; each field names its source, and none claims the paper for a vendor number."""
    d = STRATIX10_GX2800
    assert d.dsp_blocks == 5760
    assert d.onchip_bytes == 11721 * 20 * 1024 // 8 == 30_005_760
    assert d.clock_mhz == 300.0 and d.offchip_gbs is None
    assert dict(d.dsp_per_operation) == {("float32", "add"): 1, ("float32", "mul"): 1, ("float64", "mul"): 4}
    assert (PAPER_SINGLE_DEVICE_TOPS, PAPER_MULTI_DEVICE_TOPS) == (1.31, 4.18)
    for key in ("dsp_blocks", "onchip_bytes", "dsp_per_operation"):
        assert d.sources[key].startswith("vendor")
    assert d.sources["clock_mhz"].startswith("project")
    assert d.sources["paper_single_device_tops"].startswith("paper")
    with pytest.raises(TypeError):
        d.sources["clock_mhz"] = "x"  # read-only


def test_value_operations_of_a_hand_counted_stencil():
    """HAND has, on field values: 0.5*a and a*a (2 mul), + and - (2 add), sqrt (1 func)."""
    ops = value_operations(_program(HAND))
    assert dict(ops) == {("float64", "mul"): 2, ("float64", "add"): 2, ("float64", "func"): 1}
    assert dict(value_operations(_program(HAND, "float32"))) == {
        ("float32", "mul"): 2, ("float32", "add"): 2, ("float32", "func"): 1}


def test_dsp_bound_hand_computed():
    """HAND in float64 needs 2 mul x 4 = 8 DSP blocks per point (adds and sqrt in logic: 3 ops);
    on the GX 2800 that is 5760/8 = 720x headroom, so one point per cycle and no limit; on a
    device of 4 DSP blocks it streams 4/8 = 0.5 points per cycle, limited by the DSPs, at
    5 flops x 0.5 x 300 MHz = 0.75 GFlop/s. In float32 it needs 2 + 2 = 4 blocks."""
    an = analyse(_program(HAND))
    e = estimate(an)
    assert (e.dsps, e.flops_per_point, e.unmapped_per_point) == (8, 5, 3)
    assert e.bounds["DSPs"] == 720.0 and e.points_per_cycle == 1.0 and e.limit == "none"
    assert e.gflops == pytest.approx(5 * 0.3)
    small = dataclasses.replace(STRATIX10_GX2800, dsp_blocks=4)
    e = estimate(an, small)
    assert e.points_per_cycle == 0.5 and e.limit == "DSPs" and e.gflops == pytest.approx(0.75)
    assert estimate(analyse(_program(HAND, "float32"))).dsps == 4


def test_memory_and_bandwidth_bounds_hand_computed():
    """A device with a quarter of the program's on-chip bytes streams at 1/4 (on-chip memory);
    off-chip traffic is the input and the output, 8 + 8 bytes per point of float64, so 4.8 GB/s at
    one point per cycle and 300 MHz: 2.4 GB/s halves the rate (bandwidth)."""
    an = analyse(_program(HAND))
    need = an.model.onchip_bytes
    e = estimate(an, dataclasses.replace(STRATIX10_GX2800, onchip_bytes=need // 4))
    assert e.points_per_cycle == pytest.approx(need // 4 / need) and e.limit == "on-chip memory"
    assert an.model.offchip_bytes / an.program.points == 16
    e = estimate(an, dataclasses.replace(STRATIX10_GX2800, offchip_gbs=2.4))
    assert e.points_per_cycle == pytest.approx(0.5) and e.limit == "bandwidth"


def test_recurrence_bound_hand_computed():
    """b = 0.5*b[k-1] + a: the carried path is a multiply then an add, 3 + 3 = 6 cycles, so one
    level per 6 cycles (1/6 point per cycle), limited by the recurrence."""
    e = estimate(analyse(_program("b = 0.5 * b[j, k-1] + a[j, k]", recurrence=True)))
    assert e.carried_latency == 6
    assert e.points_per_cycle == pytest.approx(1 / 6) and e.limit == "recurrence"


@pytest.mark.parametrize("change", [{"dsp_blocks": 0}, {"onchip_bytes": -1}, {"clock_mhz": float("nan")},
                                    {"offchip_gbs": 0.0}, {"dsp_blocks": True}])
def test_bad_device_is_refused_by_name(change):
    with pytest.raises(StencilFlowError, match="Stratix 10 GX 2800"):
        dataclasses.replace(STRATIX10_GX2800, **change)

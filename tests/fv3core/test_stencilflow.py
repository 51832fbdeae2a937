"""FV3's routines as StencilFlow programs (``fv3:ROUTINE[:N]``), recorded from fv3core's own
launch sequence on one rank of C12 (tile 0, all four cube corners) and checked against GT4Py's
numpy-backend run of that sequence.

Default suite: fv_tp_2d (hord 8 with deln_flux), c_sw and geopk on tile 0 (about 1 min);
``-m slow``: fv_tp_2d hord 10, d_sw (about 1 min each to record, simulate and compile its C++)
and fv_tp_2d and c_sw on the other five tiles."""

from __future__ import annotations

import shutil
from typing import Any

import numpy as np
import pytest

from fv3core import stencilflow
from mapping.spatial import StencilFlowError
from mapping.spatial.analysis import analyse
from mapping.spatial.hls import CSimulation, HLSEmitter
from mapping.spatial.partition import CapacityError, Device, Network, Partitioner, check_fits
from mapping.spatial.pipeline import load_any
from mapping.spatial.simulator import StreamingSimulator

SLOW = {"fv_tp_2d_hord10", "d_sw"}
ROUTINES = [pytest.param(r, marks=pytest.mark.slow) if r in SLOW else r for r in stencilflow.ROUTINES]


@pytest.fixture(scope="module")
def recorded() -> Any:
    cache: dict[str, Any] = {}

    def get(routine: str) -> Any:
        if routine not in cache:
            cache[routine] = stencilflow.build(routine, 12)
        return cache[routine]

    return get


@pytest.mark.parametrize("routine", ROUTINES)
def test_simulation_equals_gt4py_bitwise(recorded, routine):
    """The cycle-exact simulation of the bridged launch sequence equals GT4Py's numpy-backend
    outputs of the same launches on the whole subdomain arrays (halos included); reference:
    GT4Py numpy backend; tolerance: bitwise. The run is stall-free with the analysed buffers and
    the two largest delay buffers shrunk by one token stall or deadlock (minimal)."""
    rec = recorded(routine)
    an = analyse(rec.program)
    sim = StreamingSimulator(an)(rec.inputs)
    for o, want in rec.gt4py_outputs.items():
        assert np.any(want != 0.0), o
        np.testing.assert_array_equal(sim.outputs[o], want, err_msg=o)
    assert sim.cycles == an.model.cycles and sim.backpressure_cycles == 0
    for ch in sorted(an.channels, key=lambda c: -c.delay)[:2]:
        try:
            shrunk = StreamingSimulator(an, {ch.name: ch.capacity - 1})(rec.inputs)
        except StencilFlowError:
            continue  # deadlock
        assert shrunk.stalled, f"{ch.name} shrunk by one still runs stall-free"


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
@pytest.mark.parametrize("routine", ROUTINES)
def test_hls_csim_equals_gt4py_bitwise(recorded, routine, tmp_path):
    """The emitted HLS C++ compiled with g++ (C simulation: threads, bounded FIFOs, recurrences
    with their level history or column buffer) equals GT4Py's numpy-backend outputs; reference:
    GT4Py numpy backend; tolerance: bitwise."""
    rec = recorded(routine)
    out = CSimulation(HLSEmitter(analyse(rec.program)), tmp_path, timeout_s=600)(rec.inputs)
    for o, want in rec.gt4py_outputs.items():
        np.testing.assert_array_equal(out[o], want, err_msg=o)


def test_recurrences_of_geopk(recorded):
    """geopk's FORWARD sweeps (``p1d``, ``pe``) and BACKWARD sweep (``gz``) are recurrence nodes;
    the BACKWARD one buffers its inputs' columns (look-ahead covers the column); its carried
    path is the add of the previous level and the interval's select."""
    prog = recorded("geopk").program
    rec = {n: s.recurrence for n, s in prog.stencils.items() if s.recurrence}
    assert sorted(rec.values()) == [-1, -1, 1] and rec["gz"] == 1
    an = analyse(prog)
    assert an.stencils["gz"].windows["pt"].lookahead >= prog.shape[2] - 1
    # gz = gz[k+1] + cp * pt * (pk[k+1] - pk) inside interval(0, -1): an add and the select
    lat = an.target.latencies
    assert an.stencils["gz"].carried_latency == lat.add + lat.select


@pytest.mark.parametrize("routine", ROUTINES)
def test_partition_on_one_to_four_devices_within_capacity(recorded, routine):
    """On 1-4 devices of the defaults (28 MiB, 4000 operators, 40 GB/s links): each count either
    places every stencil, every device within its on-chip memory and operators, or is refused
    with a CapacityError naming the need; four devices of 8000 operators with 200 GB/s links
    place every routine (d_sw's busiest link carries about 160 GB/s)."""
    prog = recorded(routine).program
    an = analyse(prog)
    dev = Device()
    for n in range(1, 5):
        try:
            if n == 1:
                check_fits(an, dev)
                continue
            part = Partitioner([dev] * n)(prog, an)
        except CapacityError as exc:
            assert "operators" in str(exc) or "bytes" in str(exc) or "GB/s" in str(exc)
            continue
        assert sorted(s for u in part.devices for s in u.stencils) == sorted(prog.stencils)
        assert all(u.memory_bytes <= dev.memory_bytes and u.operators <= dev.operators for u in part.devices)
    big = Device(operators=8000)
    part = Partitioner([big] * 4, Network(link_gbs=200.0))(prog, an)
    assert all(u.operators <= big.operators for u in part.devices)


def test_fv3_specs_refuse_by_name():
    """Unknown routines and bad sizes are refused naming the spec and what to write instead."""
    with pytest.raises(StencilFlowError, match=r"fv3:nope.*fv_tp_2d"):
        load_any("fv3:nope:12")
    with pytest.raises(StencilFlowError, match=r"fv3:fv_tp_2d:7.*even"):
        load_any("fv3:fv_tp_2d:7")


def test_map_cli_simulates_fv_tp_2d(capsys):
    """``stratoflow map fv3:fv_tp_2d:12 --simulate --devices 3`` runs and reports error 0 against
    the NumPy reference of the bridged program (tolerance: bitwise)."""
    from workflows.cli import main

    assert main(["map", "fv3:fv_tp_2d:12", "--simulate", "--devices", "3"]) == 0
    out = capsys.readouterr().out
    assert "max |error| vs reference 0" in out and "placement on 3 device(s)" in out


@pytest.mark.slow
@pytest.mark.parametrize("routine", ["fv_tp_2d", "c_sw"])
@pytest.mark.parametrize("tile", [1, 2, 3, 4, 5])
def test_other_tiles_simulate_equal_to_gt4py(routine, tile):
    """The same routines recorded on the rank of each other tile (its own grid terms) simulate
    equal to GT4Py's numpy-backend outputs; reference: GT4Py numpy backend; tolerance: bitwise."""
    rec = stencilflow.build(routine, 12, tile=tile)
    sim = StreamingSimulator(analyse(rec.program))(rec.inputs)
    for o, want in rec.gt4py_outputs.items():
        np.testing.assert_array_equal(sim.outputs[o], want, err_msg=o)

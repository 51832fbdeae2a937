"""FV3's routines as StencilFlow programs (``fv3:ROUTINE[:N]``), recorded from fv3core's own
launch sequence on one rank of C12 and checked against GT4Py's numpy-backend run of it."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from fv3core import stencilflow
from mapping.spatial import StencilFlowError
from mapping.spatial.analysis import analyse
from mapping.spatial.hls import CSimulation, HLSEmitter
from mapping.spatial.partition import Device, Partitioner, check_fits
from mapping.spatial.pipeline import load_any
from mapping.spatial.simulator import StreamingSimulator


@pytest.fixture(scope="module")
def fv_tp_2d():
    return stencilflow.build("fv_tp_2d", 12)


def test_fv_tp_2d_simulation_equals_gt4py_bitwise(fv_tp_2d):
    """fv_tp_2d (hord 8, corner fills) on tile 0's one rank at C12: the cycle-exact simulation of
    the bridged launch sequence equals GT4Py's numpy-backend outputs (fx, fy, q with corner
    halos) on the whole subdomain arrays; reference: GT4Py numpy backend; tolerance: bitwise.
    The run is stall-free with the analysed buffers and the largest delay buffers are minimal."""
    rec = fv_tp_2d
    prog = rec.program
    assert set(prog.outputs) == {"fx", "fy", "q_out"}
    assert any(n.startswith("corners") or "q__" in n for n in prog.stencils)
    an = analyse(prog)
    sim = StreamingSimulator(an)(rec.inputs)
    for o, want in rec.gt4py_outputs.items():
        assert np.any(want != 0.0)
        np.testing.assert_array_equal(sim.outputs[o], want)
    assert sim.cycles == an.model.cycles and sim.backpressure_cycles == 0
    for ch in sorted(an.channels, key=lambda c: -c.delay)[:2]:
        try:
            shrunk = StreamingSimulator(an, {ch.name: ch.capacity - 1})(rec.inputs)
        except StencilFlowError:
            continue  # deadlock
        assert shrunk.stalled, f"{ch.name} shrunk by one still runs stall-free"


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_fv_tp_2d_hls_csim_equals_gt4py_bitwise(fv_tp_2d, tmp_path):
    """The emitted HLS C++ of fv_tp_2d compiled with g++ (C simulation, threads and bounded
    FIFOs) equals GT4Py's numpy-backend outputs; reference: GT4Py numpy backend; tolerance:
    bitwise."""
    rec = fv_tp_2d
    out = CSimulation(HLSEmitter(analyse(rec.program)), tmp_path, timeout_s=300)(rec.inputs)
    for o, want in rec.gt4py_outputs.items():
        np.testing.assert_array_equal(out[o], want)


@pytest.mark.parametrize("devices", [1, 2, 3, 4])
def test_fv_tp_2d_partitions_within_capacity(fv_tp_2d, devices):
    """On 1-4 devices (Stratix 10 defaults: 28 MiB, 4000 operators): one device is refused by
    name (fv_tp_2d needs about 7700 operators per point), 2-4 devices hold every stencil, each
    within its on-chip memory and operators."""
    prog = fv_tp_2d.program
    an = analyse(prog)
    dev = Device()
    if devices == 1:
        with pytest.raises(StencilFlowError, match=r"device 0: it needs \d+ operators"):
            check_fits(an, dev)
        check_fits(an, Device(operators=4 * dev.operators))
        return
    part = Partitioner([dev] * devices)(prog, an)
    assert sorted(s for u in part.devices for s in u.stencils) == sorted(prog.stencils)
    for use in part.devices:
        assert use.memory_bytes <= dev.memory_bytes and use.operators <= dev.operators


def test_fv3_specs_load_and_refuse_by_name():
    """``fv3:fv_tp_2d`` loads through load_any (registered by fv3core.stencilflow); unknown
    routines and bad sizes are refused naming the spec."""
    with pytest.raises(StencilFlowError, match=r"fv3:nope.*fv_tp_2d"):
        load_any("fv3:nope:12")
    with pytest.raises(StencilFlowError, match=r"fv3:fv_tp_2d:7.*even"):
        load_any("fv3:fv_tp_2d:7")


def test_map_cli_simulates_fv_tp_2d(capsys):
    """``stratoflow map fv3:fv_tp_2d:12 --simulate`` runs and reports error 0 against the NumPy
    reference of the bridged program (tolerance: bitwise)."""
    from workflows.cli import main

    assert main(["map", "fv3:fv_tp_2d:12", "--simulate", "--devices", "2"]) == 0
    out = capsys.readouterr().out
    assert "max |error| vs reference 0" in out and "placement on 2 device(s)" in out

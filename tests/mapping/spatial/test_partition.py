"""Multi-device partitioning: capacities respected, minimal cuts on chains, validated by simulation."""

from __future__ import annotations

import numpy as np
import pytest

from mapping.spatial import StencilFlowError
from mapping.spatial.analysis import analyse
from mapping.spatial.generator import jacobi_chain, synthetic
from mapping.spatial.model import load_program
from mapping.spatial.partition import Device, Network, Partitioner, stencil_bytes
from mapping.spatial.reference import ReferenceExecutor
from mapping.spatial.simulator import StreamingSimulator


def test_chain_on_three_devices_is_cut_twice_and_simulates_exactly():
    """8-stencil chain, devices holding 3 stencils and one 100-token link FIFO (4 bytes a token):
    2 cuts (the minimum), every device within its memory once the link latency is counted, link
    latency simulated, outputs equal to the reference exactly, cycles = model (2 x 100 link cycles)."""
    p = load_program(jacobi_chain(8, (8, 6, 5)))
    an = analyse(p)
    per = max(s.onchip_bytes for s in an.stencils.values())
    memory = 3 * per + 100 * 4 + 50
    part = Partitioner([Device(memory_bytes=memory)] * 3, Network(link_latency=100))(p, an)
    assert len(part.cut_channels) == 2
    for use in part.devices:
        assert use.memory_bytes <= memory
        assert 1 <= len(use.stencils) <= 3
    assert part.analysis.model.cycles == an.model.cycles + 200
    res = StreamingSimulator(part.analysis)()
    assert res.cycles == part.analysis.model.cycles and res.backpressure_cycles == 0
    np.testing.assert_array_equal(res.outputs["s7"], ReferenceExecutor(p)()["s7"])


def test_everything_fits_on_one_device_means_no_traffic():
    p = load_program(synthetic("diamond", 9, (8, 8, 8)))
    part = Partitioner([Device()] * 4)(p)
    assert part.traffic_bytes_per_cycle == 0 and not part.cut_channels


def test_link_bandwidth_and_capacity_limits():
    """A fork/join too large for one device must be cut; a link slower than one stream makes it
    not fit (error says what to change), a fast link carries exactly the cut streams (links
    without latency, so that the delay buffers keep their single-device sizes)."""
    p = load_program(synthetic("fork", 7, (8, 8, 8)))
    an = analyse(p)
    sizes = list(stencil_bytes(an).values())
    dev = Device(memory_bytes=max(max(sizes), int(0.7 * sum(sizes))))
    one_stream_gbs = 4 * 300e6 / 1e9
    with pytest.raises(StencilFlowError, match=r"does not fit on 2 device.*link bandwidth \(--link-gbs\)"):
        Partitioner([dev] * 2, Network(link_gbs=one_stream_gbs * 0.99, link_latency=0))(p, an)
    part = Partitioner([dev] * 2, Network(link_gbs=100.0, link_latency=0))(p, an)
    assert part.cut_channels
    assert all(g <= 100.0 for g in part.link_gbs_used)
    cut_bytes = sum(4 for src in {c[0] for c in part.cut_channels})
    assert part.traffic_bytes_per_cycle == cut_bytes


def test_stencil_larger_than_any_device_is_reported():
    p = load_program(jacobi_chain(2, (8, 8, 8)))
    with pytest.raises(StencilFlowError, match="stencil 's0' needs"):
        Partitioner([Device(memory_bytes=100)] * 2)(p)

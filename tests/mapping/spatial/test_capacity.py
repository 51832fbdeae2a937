"""Placements that do not fit and bad options of ``stratoflow map`` are refused with a named
error before any work (device capacity on one and many devices, link latency, synthetic sizes,
option values, output locations, graph formats)."""

from __future__ import annotations

import math
import os

import pytest

from mapping.spatial import CapacityError, StencilFlowError
from mapping.spatial.analysis import Target, analyse
from mapping.spatial.generator import jacobi_chain
from mapping.spatial.model import load_program
from mapping.spatial.partition import Device, Network, Partitioner, check_fits, stencil_bytes
from mapping.spatial.pipeline import (
    MAX_GENERATED_SIZE,
    MAX_SYNTHETIC_STENCILS,
    MapOptions,
    load_any,
    map_program,
)
from workflows.cli import main

HUGE = {"inputs": {"a": {}}, "outputs": ["b"], "dimensions": [100000, 100000, 100000],
        "program": {"b": {"computation_string": "res = a[i-1,j,k] + a[i+1,j,k]",
                          "boundary_conditions": {"a": {"type": "constant"}}}}}


def test_one_device_refuses_a_program_larger_than_its_memory():
    """100000^3 with an i-1..i+1 window: the reuse buffer alone is 2 planes of 1e10 float32
    (80 GB); one default device (28 MiB) refuses it, naming device 0, its capacity and the need,
    and says more devices cannot help."""
    prog = load_program(HUGE, "huge")
    with pytest.raises(CapacityError) as err:
        map_program(prog, MapOptions())
    msg = str(err.value)
    need = analyse(prog).model.onchip_bytes
    assert need > 8e10
    assert "device 0" in msg and f"{28 * 2**20} bytes" in msg and f"{need} bytes" in msg
    assert "more devices do not help" in msg and "smaller domain" in msg


def test_one_device_suggests_more_devices_when_each_stencil_fits():
    """An 8-stencil chain whose stencils each fit but not all together: the error asks for more
    devices; with 3 devices the same program is placed."""
    prog = load_program(jacobi_chain(8, (8, 6, 5)))
    an = analyse(prog)
    sizes = stencil_bytes(an)
    dev = Device(memory_bytes=3 * max(sizes.values()))
    with pytest.raises(CapacityError, match=r"does not fit on device 0: it needs \d+ bytes.*--devices N"):
        check_fits(an, dev)
    with pytest.raises(CapacityError, match=r"needs 56 operators .* the device has 10"):
        check_fits(an, Device(operators=10))
    part = map_program(prog, MapOptions(devices=3, device=Device(memory_bytes=3 * max(sizes.values()) + 500),
                                        network=Network(link_latency=0))).partition
    assert part is not None and sum(len(u.stencils) for u in part.devices) == 8


def test_many_devices_refuse_a_program_larger_than_all_of_them():
    """4 devices of 1000 bytes for 2736 bytes of stencils whose contiguous ranges cannot be packed:
    the error names the device count, the capacity each and the total need."""
    prog = load_program(jacobi_chain(8, (8, 6, 5)))
    an = analyse(prog)
    total = sum(stencil_bytes(an).values())
    with pytest.raises(CapacityError) as err:
        Partitioner([Device(memory_bytes=500)] * 4, Network(link_latency=0))(prog, an)
    msg = str(err.value)
    assert "does not fit on 4 device(s) of 500 bytes and 4000 operators each" in msg
    assert f"needs {total} bytes" in msg and "add devices" in msg


def test_link_latency_overflow_is_replaced_or_refused():
    """Jacobi chain of 8 on 3 devices of 1500 bytes, 100-cycle links: the first placement (4 + 4
    stencils) grows device 1 to 1856 bytes once the latency is counted; it is replaced by a
    placement within every device's memory. With 1400 bytes no placement fits: CapacityError."""
    prog = load_program(jacobi_chain(8, (8, 6, 5)))
    an = analyse(prog)
    part = Partitioner([Device(memory_bytes=1500)] * 3, Network(link_latency=100))(prog, an)
    assert all(u.memory_bytes <= 1500 for u in part.devices)
    assert [len(u.stencils) for u in part.devices] == [3, 3, 2]
    with pytest.raises(CapacityError, match="delay buffers grown by the link latency"):
        Partitioner([Device(memory_bytes=1400)] * 3, Network(link_latency=100))(prog, an)


@pytest.mark.parametrize(("make", "field"), [
    (lambda: Device(memory_bytes=0), "memory_bytes"),
    (lambda: Device(operators=-3), "operators"),
    (lambda: Network(link_gbs=0.0), "link_gbs"),
    (lambda: Network(link_gbs=math.nan), "link_gbs"),
    (lambda: Network(link_latency=-1), "link_latency"),
    (lambda: Target(clock_mhz=0.0), "clock_mhz"),
    (lambda: Target(clock_mhz=math.inf), "clock_mhz"),
])
def test_capacities_and_target_are_validated(make, field):
    """Device, Network and Target refuse zero, negative, NaN and infinite values, naming the field."""
    with pytest.raises(StencilFlowError, match=field):
        make()


@pytest.mark.parametrize(("spec", "what"), [
    ("synthetic:chain:0", "N (stencils)"),
    (f"synthetic:chain:{MAX_SYNTHETIC_STENCILS + 1}", "N (stencils)"),
    ("synthetic:fork:-2", "N (stencils)"),
    ("synthetic:chain:4:0", "SIZE"),
    (f"synthetic:diamond:4:{MAX_GENERATED_SIZE + 1}", "SIZE"),
])
def test_synthetic_sizes_are_bounded(spec, what):
    """synthetic:KIND:N[:SIZE] refuses N and SIZE outside 1..the documented maximum, naming which."""
    with pytest.raises(StencilFlowError) as err:
        load_any(spec)
    assert str(err.value).startswith(f"{spec}: {what} must be a whole number from 1 to")


def test_synthetic_at_the_maximum_loads():
    """The largest allowed synthetic chain (N = MAX_SYNTHETIC_STENCILS, SIZE 4) is accepted."""
    assert len(load_any(f"synthetic:chain:{MAX_SYNTHETIC_STENCILS}:4").stencils) == MAX_SYNTHETIC_STENCILS


@pytest.mark.parametrize(("option", "value"), [
    ("--clock-mhz", "-5"), ("--clock-mhz", "0"), ("--clock-mhz", "nan"), ("--link-gbs", "0"),
    ("--link-gbs", "inf"), ("--devices", "0"), ("--devices", "100000"), ("--vector-width", "0"),
    ("--device-memory", "0"), ("--device-operators", "-1"), ("--link-latency", "-1"),
    ("--device-memory", "1e9"),
])
def test_bad_option_values_are_refused_by_name(option, value, capsys):
    """Each numeric option refuses zero/negative/NaN/inf/out-of-range/non-integer values with a
    usage error (exit 2) that names the option."""
    with pytest.raises(SystemExit) as ex:
        main(["map", "synthetic:chain:2:4", option, value])
    assert ex.value.code == 2
    assert f"argument {option}:" in capsys.readouterr().err


def test_outputs_are_checked_before_any_work(tmp_path, monkeypatch, caplog):
    """--emit-hls on a file, under a missing folder or in /sys, --report on a folder and --dot with
    an unsupported extension fail before the program is mapped (map_program is never called)
    and create nothing."""
    import workflows.commands.map  # noqa: F401

    def boom(*_a, **_k):
        raise AssertionError("map_program ran")

    monkeypatch.setattr("mapping.spatial.pipeline.map_program", boom)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("x")
    cases = [
        (["--emit-hls", "afile"], "--emit-hls afile: exists and is not a folder"),
        (["--emit-hls", "missing/hls"], "missing does not exist"),
        (["--emit-hls", "/sys/stratoflow-hls"], "the folder /sys is not writable"),
        (["--report", "."], "--report . is a directory"),
        (["--dot", "out.gif"], "unsupported extension '.gif'; use .dot, .gv"),
    ]
    for extra, expected in cases:
        caplog.clear()
        assert main(["map", "synthetic:chain:2:4", *extra]) == 1
        assert expected in caplog.text, extra
    assert sorted(os.listdir(tmp_path)) == ["afile"]


@pytest.mark.parametrize(("suffix", "magic"), [(".gv", b"digraph"), (".svg", b"<svg"), (".pdf", b"%PDF")])
def test_graph_formats_follow_the_extension(suffix, magic, tmp_path):
    """--dot writes DOT text for .dot/.gv and a matplotlib drawing for .png/.svg/.pdf (checked by
    the file's leading bytes)."""
    out = tmp_path / f"g{suffix}"
    assert main(["map", "synthetic:chain:2:4", "--dot", str(out)]) == 0
    assert magic in out.read_bytes()[:400]


def test_simulation_larger_than_host_memory_is_refused(tmp_path):
    """A 1D program of 1e12 points fits on chip but --simulate would need terabytes of host
    memory: refused before any allocation, naming the option and the size."""
    spec = {"inputs": {"a": {}}, "outputs": ["b"], "dimensions": [10**12],
            "program": {"b": {"computation_string": "res = a[k]"}}}
    with pytest.raises(StencilFlowError, match=r"--simulate of 'p' needs about \d+ bytes .* host memory"):
        map_program(load_program(spec, "p"), MapOptions(simulate=True))

"""``stratoflow map``: map a StencilFlow program onto FPGAs (analysis, placement, simulation, HLS)."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

log = logging.getLogger(__name__)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "map",
        help="map a stencil DAG onto FPGAs: buffers, delay buffers, placement, simulation, HLS C++",
        description=(
            "Analyse a StencilFlow JSON program (reuse buffers, pipeline latencies, exact minimal "
            "delay buffers, performance model, halo depths), place it on one or more devices, "
            "optionally simulate it cycle-exactly against the NumPy reference and emit Vitis-style "
            "HLS C++. PROGRAM is a JSON file, synthetic:KIND:N[:SIZE] (KIND chain/fork/diamond) or "
            "library:NAME[:SIZE] (a GTScript stencil of stencils.library, e.g. library:hdiff). "
            "Example: stratoflow map mapping/spatial/examples/hdiff.json --devices 2 --simulate "
            "--report hdiff.json"
        ),
    )
    p.add_argument("program", metavar="PROGRAM", help="StencilFlow JSON file, synthetic:KIND:N[:SIZE] or library:NAME[:SIZE]")
    p.add_argument("--devices", type=int, default=1, help="number of devices in the chain (default 1)")
    p.add_argument("--vector-width", type=int, default=None, help="points per cycle (overrides the program's vectorization)")
    p.add_argument("--simulate", action="store_true", help="run the cycle-exact streaming simulator and compare with NumPy")
    p.add_argument("--emit-hls", type=Path, default=None, metavar="DIR", help="write the HLS C++ and hls_stream.h into DIR")
    p.add_argument("--csim", action="store_true", help="compile the HLS C++ with g++ and run it (C simulation)")
    p.add_argument("--sdfg", action="store_true", help="build and compile the DaCe SDFG (CPU) and compare with NumPy")
    p.add_argument("--report", type=Path, default=None, metavar="FILE", help="write the JSON report to FILE")
    p.add_argument("--dot", type=Path, default=None, metavar="FILE", help="write the placed DAG as Graphviz DOT (.dot) or PNG (.png)")
    p.add_argument("--latencies", type=Path, default=None, metavar="FILE",
                   help="JSON object of operation latencies in cycles for the target, e.g. "
                        '{"add": 4, "mul": 5, "div": 28} (keys: add mul div compare select logical sqrt exp '
                        "log trig pow minmax io)")
    p.add_argument("--clock-mhz", type=float, default=300.0, help="clock of the performance model (default 300)")
    p.add_argument("--device-memory", type=int, default=28 * 2**20, help="on-chip bytes per device (default 28 MiB)")
    p.add_argument("--device-operators", type=int, default=4000, help="operators per device (default 4000)")
    p.add_argument("--link-gbs", type=float, default=40.0, help="link bandwidth between neighbours, GB/s (default 40)")
    p.add_argument("--link-latency", type=int, default=200, help="link latency per hop, cycles (default 200)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from mapping.spatial.analysis import Target
    from mapping.spatial.errors import StencilFlowError
    from mapping.spatial.partition import Device, Network
    from mapping.spatial.pipeline import MapOptions, load_any, map_program
    from mapping.spatial.report import summary, write_dot, write_json, write_png

    if args.devices < 1:
        raise StencilFlowError(f"--devices must be >= 1, got {args.devices}")
    opts = MapOptions(
        devices=args.devices,
        device=Device(args.device_memory, args.device_operators),
        network=Network(args.link_gbs, args.link_latency),
        target=Target(clock_mhz=args.clock_mhz, latencies=_latencies(args.latencies)),
        vector_width=args.vector_width,
        simulate=args.simulate,
        emit_hls=args.emit_hls,
        csim=args.csim,
        sdfg=args.sdfg,
    )
    res = map_program(load_any(args.program), opts)
    sys.stdout.write(summary(res))
    if args.report:
        log.info("wrote %s", write_json(res, args.report))
    if args.dot:
        path = write_png(res, args.dot) if args.dot.suffix == ".png" else write_dot(res, args.dot)
        log.info("wrote %s", path)
    return 0


def _latencies(path: Path | None):
    import dataclasses
    import json

    from mapping.spatial.errors import StencilFlowError
    from mapping.spatial.expr import OperationLatencies

    if path is None:
        return OperationLatencies()
    try:
        table = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise StencilFlowError(f"--latencies {path}: cannot read a JSON object ({exc})") from None
    known = {f.name for f in dataclasses.fields(OperationLatencies)}
    if not isinstance(table, dict) or set(table) - known:
        raise StencilFlowError(
            f"--latencies {path}: unknown key(s) {sorted(set(table) - known) if isinstance(table, dict) else table!r}; "
            f"use {sorted(known)}"
        )
    if not all(isinstance(v, int) and v >= 0 for v in table.values()):
        raise StencilFlowError(f"--latencies {path}: latencies must be non-negative integers (cycles)")
    return OperationLatencies(**table)

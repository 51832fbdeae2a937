"""``stratoflow map``: map a StencilFlow program onto FPGAs (analysis, placement, simulation, HLS)."""

from __future__ import annotations

import argparse
import logging
import shutil
import sys
from pathlib import Path

from workflows.commands.argtypes import positive_number, whole_number

log = logging.getLogger(__name__)

MAX_DEVICES = 256  # --devices: the placement search grows with devices x stencils^2


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "map",
        help="map a stencil DAG onto FPGAs: buffers, delay buffers, placement, simulation, HLS C++",
        description=(
            "Analyse a StencilFlow JSON program (reuse buffers, pipeline latencies, exact minimal "
            "delay buffers, performance model, halo depths), place it on one or more devices, "
            "optionally simulate it cycle-exactly against the NumPy reference and emit Vitis-style "
            "HLS C++. PROGRAM is a JSON file, synthetic:KIND:N[:SIZE] (KIND chain/fork/diamond) or "
            "library:NAME[:SIZE] (a GTScript stencil of stencils.library, e.g. library:hdiff) or "
            "fv3:ROUTINE[:N] (an FV3 routine's real fv3core launch sequence on one rank of C N, "
            "e.g. fv3:fv_tp_2d:12; its inputs are the recorded ones). "
            "Example: stratoflow map mapping/spatial/examples/hdiff.json --devices 2 --simulate "
            "--report hdiff.json"
        ),
    )
    p.add_argument("program", metavar="PROGRAM", help="StencilFlow JSON file, synthetic:KIND:N[:SIZE], library:NAME[:SIZE] or fv3:ROUTINE[:N]")
    p.add_argument("--devices", type=whole_number(1, MAX_DEVICES), default=1,
                   help=f"number of devices in the chain, 1 to {MAX_DEVICES} (default 1)")
    p.add_argument("--vector-width", type=whole_number(1), default=None,
                   help="points per cycle, a divisor of the innermost dimension (overrides the program's vectorization)")
    p.add_argument("--simulate", action="store_true", help="run the cycle-exact streaming simulator and compare with NumPy")
    p.add_argument("--emit-hls", type=Path, default=None, metavar="DIR",
                   help="write the HLS C++ and hls_stream.h into DIR (created if its parent folder exists)")
    p.add_argument("--csim", action="store_true", help="compile the HLS C++ with g++ and run it (C simulation)")
    p.add_argument("--sdfg", action="store_true", help="build and compile the DaCe SDFG (CPU) and compare with NumPy")
    p.add_argument("--report", type=Path, default=None, metavar="FILE", help="write the JSON report to FILE")
    p.add_argument("--dot", type=Path, default=None, metavar="FILE",
                   help="write the placed DAG as Graphviz DOT text (.dot, .gv) or a drawing (.png, .svg, .pdf)")
    p.add_argument("--latencies", type=Path, default=None, metavar="FILE",
                   help="JSON object of operation latencies in cycles for the target, e.g. "
                        '{"add": 4, "mul": 5, "div": 28} (keys: add mul div compare select logical sqrt exp '
                        "log trig pow minmax io)")
    p.add_argument("--clock-mhz", type=positive_number, default=300.0, help="clock of the performance model, MHz > 0 (default 300)")
    p.add_argument("--device-memory", type=whole_number(1), default=28 * 2**20, help="on-chip bytes per device (default 28 MiB)")
    p.add_argument("--device-operators", type=whole_number(1), default=4000, help="operators per device (default 4000)")
    p.add_argument("--link-gbs", type=positive_number, default=40.0, help="link bandwidth between neighbours, GB/s > 0 (default 40)")
    p.add_argument("--link-latency", type=whole_number(0), default=200, help="link latency per hop, cycles >= 0 (default 200)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from mapping.spatial.analysis import Target
    from mapping.spatial.errors import StencilFlowError
    from mapping.spatial.partition import Device, Network
    from mapping.spatial.pipeline import MapOptions, load_any, map_program
    from mapping.spatial.report import graph_format, summary, write_graph, write_json
    from workflows.outputs import check_output_path, write_or_rescue

    if args.dot:
        graph_format(args.dot)
    for option, path in (("--report", args.report), ("--dot", args.dot)):
        if path is not None:
            check_output_path(path, option)
    if args.emit_hls is not None:
        _check_hls_folder(args.emit_hls)
    if args.csim and shutil.which("g++") is None:
        raise StencilFlowError("--csim needs g++ on PATH; install it (apt-get install g++) or leave out --csim")
    opts = MapOptions(
        devices=args.devices,
        device=Device(args.device_memory, args.device_operators),
        network=Network(args.link_gbs, args.link_latency),
        target=Target(clock_mhz=args.clock_mhz, latencies=_latencies(args.latencies)),
        vector_width=None,
        simulate=args.simulate,
        emit_hls=args.emit_hls,
        csim=args.csim,
        sdfg=args.sdfg,
    )
    if args.program.startswith("fv3:"):
        import fv3core.stencilflow  # noqa: F401  (registers the fv3: programs)
    prog = load_any(args.program)
    if args.vector_width is not None:
        try:
            prog = prog.with_vectorization(args.vector_width)
        except StencilFlowError as exc:
            raise StencilFlowError(f"--vector-width {args.vector_width}: {exc}") from None
    try:
        res = map_program(prog, opts)
    except OSError as exc:  # writing the HLS or C-simulation files
        where = f"--emit-hls {args.emit_hls}" if args.emit_hls is not None else "--csim"
        raise StencilFlowError(f"{where}: cannot write the HLS files ({exc})") from None
    sys.stdout.write(summary(res))
    for option, path, write in (("--report", args.report, write_json), ("--dot", args.dot, write_graph)):
        if path is not None:
            log.info("wrote %s", write_or_rescue(path, lambda p, write=write: write(res, p), option, command="map"))
    return 0


def _check_hls_folder(path: Path) -> None:
    """Refuse an ``--emit-hls`` location before any work: an existing file, a missing parent
    folder, or a folder this process cannot create files in (probed, see check_output_path)."""
    from mapping.spatial.errors import StencilFlowError
    from workflows.outputs import check_output_path

    if path.exists() and not path.is_dir():
        raise StencilFlowError(f"--emit-hls {path}: exists and is not a folder; give a folder for the HLS files")
    check_output_path(path / "hls_stream.h" if path.is_dir() else path, "--emit-hls")


def _latencies(path: Path | None):
    import dataclasses

    from mapping.spatial.errors import StencilFlowError
    from mapping.spatial.expr import OperationLatencies

    if path is None:
        return OperationLatencies()
    from stencils.errors import InputFileError
    from stencils.textfile import read_json

    try:
        table = read_json(path, 'a JSON object of operation latencies, e.g. {"add": 4}',
                          what="--latencies file")  # fmt: skip
    except InputFileError as exc:
        raise StencilFlowError(str(exc)) from None
    known = {f.name for f in dataclasses.fields(OperationLatencies)}
    if not isinstance(table, dict) or set(table) - known:
        raise StencilFlowError(
            f"--latencies {path}: unknown key(s) {sorted(set(table) - known) if isinstance(table, dict) else table!r}; "
            f"use {sorted(known)}"
        )
    bad = {k: v for k, v in table.items() if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 10**6}
    if bad:
        raise StencilFlowError(
            f"--latencies {path}: {bad} must be whole numbers of cycles from 0 to 1000000 "
            f"(e.g. {{\"add\": 4, \"div\": 28}})"
        )
    return OperationLatencies(**table)

"""One call from a program to everything: analysis, placement, simulation, HLS (used by the CLI)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mapping.spatial.analysis import Target, analyse
from mapping.spatial.errors import StencilFlowError
from mapping.spatial.generator import KINDS, synthetic
from mapping.spatial.hls import CSimulation, HLSEmitter
from mapping.spatial.model import Program, load_program
from mapping.spatial.partition import Device, Network, Partitioner
from mapping.spatial.reference import ReferenceExecutor
from mapping.spatial.report import MappingResult
from mapping.spatial.simulator import StreamingSimulator

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class MapOptions:
    devices: int = 1
    device: Device = Device()
    network: Network = Network()
    target: Target = Target()
    vector_width: int | None = None
    simulate: bool = False
    emit_hls: Path | None = None
    csim: bool = False
    sdfg: bool = False


def load_any(spec: str) -> Program:
    """A JSON path, ``synthetic:KIND:N[:SIZE]`` (KIND in chain/fork/diamond, cube of SIZE), or
    ``library:NAME[:SIZE]`` (a stencil of ``stencils.library`` bridged from GTScript)."""
    if spec.startswith("library:"):
        return _library_program(spec)
    if spec.startswith("synthetic:"):
        parts = spec.split(":")
        if len(parts) not in (3, 4) or parts[1] not in KINDS or not parts[2].isdigit():
            raise StencilFlowError(f"bad synthetic spec {spec!r}; write synthetic:KIND:N[:SIZE] with KIND in {KINDS}")
        size = int(parts[3]) if len(parts) == 4 else 32
        return load_program(synthetic(parts[1], int(parts[2]), (size, size, size)), f"{parts[1]}{parts[2]}")
    return load_program(spec)


def map_program(prog: Program, opts: MapOptions) -> MappingResult:
    if opts.vector_width is not None:
        prog = prog.with_vectorization(opts.vector_width)
    an = analyse(prog, opts.target)
    part = None
    if opts.devices > 1:
        part = Partitioner([opts.device] * opts.devices, opts.network, opts.target)(prog, an)
    placed = part.analysis if part else an
    sim = err = None
    if opts.simulate:
        log.info("simulating %s (%d points)", prog.name, prog.points)
        inputs = prog.load_inputs()
        sim = StreamingSimulator(placed)(inputs)
        ref = ReferenceExecutor(prog)(inputs)
        err = max(float(np.max(np.abs(sim.outputs[o].astype(np.float64) - ref[o]))) for o in prog.outputs)
    hls_path = csim_err = None
    if opts.emit_hls is not None or opts.csim:
        emitter = HLSEmitter(placed)
        if opts.emit_hls is not None:
            hls_path = emitter.write(opts.emit_hls)
        if opts.csim:
            inputs = prog.load_inputs()
            csim = CSimulation(emitter, opts.emit_hls)
            out = csim(inputs)
            ref = ReferenceExecutor(prog)(inputs)
            csim_err = max(float(np.max(np.abs(out[o].astype(np.float64) - ref[o]))) for o in prog.outputs)
            hls_path = hls_path or csim.source
    sdfg_err = None
    if opts.sdfg:
        from mapping.spatial.sdfg import SDFGBuilder

        inputs = prog.load_inputs()
        out = SDFGBuilder(prog).compile()(inputs)
        ref = ReferenceExecutor(prog)(inputs)
        sdfg_err = max(float(np.max(np.abs(out[o].astype(np.float64) - ref[o]))) for o in prog.outputs)
    return MappingResult(an, part, sim, err, hls_path, csim_err, sdfg_err)


def _library_program(spec: str) -> Program:
    from mapping.spatial.bridge import from_stencil_program

    parts = spec.split(":")
    try:
        from stencils.library import LIBRARY
        from stencils.program import StencilProgram
    except ImportError as exc:  # pragma: no cover - stencils is part of the project
        raise StencilFlowError(f"{spec}: the stencils package is not importable ({exc})") from None
    if len(parts) not in (2, 3) or parts[1] not in LIBRARY or (len(parts) == 3 and not parts[2].isdigit()):
        raise StencilFlowError(f"bad library spec {spec!r}; write library:NAME[:SIZE] with NAME in {sorted(LIBRARY)}")
    lib = LIBRARY[parts[1]]
    size = int(parts[2]) if len(parts) == 3 else 32
    sp = StencilProgram(lib.name, inputs=list(lib.inputs), outputs=list(lib.outputs))
    try:
        sp.add(lib.definition, label=lib.name, **{f: f for f in (*lib.inputs, *lib.outputs)}, **dict(lib.params))
    except Exception as exc:
        raise StencilFlowError(
            f"{spec}: cannot call library stencil {lib.name!r} with its fields and default parameters ({exc}); build a "
            f"StencilProgram in Python and use mapping.spatial.bridge.from_stencil_program"
        ) from None
    return from_stencil_program(sp, (size, size, max(size // 4, 4)))

"""One call from a program to everything: analysis, placement, simulation, HLS (used by the CLI)."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mapping.spatial.analysis import Target, analyse
from mapping.spatial.errors import StencilFlowError
from mapping.spatial.generator import KINDS, synthetic
from mapping.spatial.hls import CSimulation, HLSEmitter
from mapping.spatial.model import Program, load_program
from mapping.spatial.partition import Device, Network, Partitioner, check_fits, size_text
from mapping.spatial.recorded import families, load_recorded
from mapping.spatial.reference import ReferenceExecutor
from mapping.spatial.report import MappingResult
from mapping.spatial.simulator import StreamingSimulator

log = logging.getLogger(__name__)

MAX_SYNTHETIC_STENCILS = 1000  # N of synthetic:KIND:N
MAX_GENERATED_SIZE = 1024  # SIZE of synthetic:KIND:N:SIZE and library:NAME:SIZE


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
    """A JSON path, ``synthetic:KIND:N[:SIZE]`` (KIND in chain/fork/diamond, cube of SIZE),
    ``library:NAME[:SIZE]`` (a stencil of ``stencils.library`` bridged from GTScript), or
    ``FAMILY:NAME[:N]`` of a registered family (:mod:`mapping.spatial.recorded`, e.g. fv3)."""
    if spec.startswith("library:"):
        return _library_program(spec)
    family = spec.split(":", 1)[0]
    if ":" in spec and family in families():
        return load_recorded(spec, MAX_GENERATED_SIZE).program
    if spec.startswith("synthetic:"):
        parts = spec.split(":")
        if len(parts) not in (3, 4) or parts[1] not in KINDS:
            raise StencilFlowError(f"bad synthetic spec {spec!r}; write synthetic:KIND:N[:SIZE] with KIND in {KINDS}")
        n = _bounded_int(spec, "N (stencils)", parts[2], MAX_SYNTHETIC_STENCILS)
        size = _bounded_int(spec, "SIZE", parts[3], MAX_GENERATED_SIZE) if len(parts) == 4 else 32
        return load_program(synthetic(parts[1], n, (size, size, size)), f"{parts[1]}{n}")
    return load_program(spec)


def _bounded_int(spec: str, what: str, text: str, limit: int) -> int:
    """``text`` as an integer in 1..limit, or a StencilFlowError naming ``what`` in ``spec``."""
    if not text.isascii() or not text.isdigit() or not 1 <= int(text) <= limit:
        raise StencilFlowError(f"{spec}: {what} must be a whole number from 1 to {limit}, got {text!r}")
    return int(text)


def check_host_memory(prog: Program, what: str) -> None:
    """Refuse ``what`` (``--simulate``, ...) when the program's fields cannot fit in host memory.

    The simulators keep every field, the NumPy reference every field again, plus the inputs;
    the estimate is three times the fields' bytes.
    """
    fields = sum(i.dtype.bytes for i in prog.inputs.values()) + sum(s.dtype.bytes for s in prog.stencils.values())
    need = 3 * prog.points * fields
    try:
        have = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return
    if need > have:
        raise StencilFlowError(
            f"{what} of '{prog.name}' needs about {size_text(need)} of host memory for its "
            f"{len(prog.inputs) + len(prog.stencils)} fields of {prog.points} points, this machine has "
            f"{size_text(have)}; use a smaller domain"
        )


def map_program(prog: Program, opts: MapOptions) -> MappingResult:
    if opts.vector_width is not None:
        prog = prog.with_vectorization(opts.vector_width)
    if opts.devices < 1:
        raise StencilFlowError(f"devices must be >= 1, got {opts.devices}")
    an = analyse(prog, opts.target)
    part = None
    if opts.devices > 1:
        part = Partitioner([opts.device] * opts.devices, opts.network, opts.target)(prog, an)
    else:
        check_fits(an, opts.device)
    placed = part.analysis if part else an
    for flag, wanted in (("--simulate", opts.simulate), ("--csim", opts.csim), ("--sdfg", opts.sdfg)):
        if wanted:
            check_host_memory(prog, flag)
    sim = err = None
    if opts.simulate:
        log.info("simulating %s (%d points)", prog.name, prog.points)
        inputs = prog.load_inputs()
        sim = StreamingSimulator(placed)(inputs)
        ref = ReferenceExecutor(prog)(inputs)
        err = max(_max_abs_error(sim.outputs[o], ref[o]) for o in prog.outputs)
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
            csim_err = max(_max_abs_error(out[o], ref[o]) for o in prog.outputs)
            hls_path = hls_path or csim.source
    sdfg_err = None
    if opts.sdfg:
        from mapping.spatial.sdfg import SDFGBuilder

        inputs = prog.load_inputs()
        out = SDFGBuilder(prog).compile()(inputs)
        ref = ReferenceExecutor(prog)(inputs)
        sdfg_err = max(_max_abs_error(out[o], ref[o]) for o in prog.outputs)
    return MappingResult(an, part, sim, err, hls_path, csim_err, sdfg_err)


def _max_abs_error(out: np.ndarray, ref: np.ndarray) -> float:
    """Largest |out - ref|; equal values (infinities, NaN against NaN) count as 0."""
    a, b = np.asarray(out, dtype=np.float64), np.asarray(ref, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(a - b)
    diff[(a == b) | (np.isnan(a) & np.isnan(b))] = 0.0
    return float(np.max(diff, initial=0.0))


def _library_program(spec: str) -> Program:
    from mapping.spatial.bridge import from_stencil_program

    parts = spec.split(":")
    try:
        from stencils.library import LIBRARY
        from stencils.program import StencilProgram
    except ImportError as exc:  # pragma: no cover - stencils is part of the project
        raise StencilFlowError(f"{spec}: the stencils package is not importable ({exc})") from None
    if len(parts) not in (2, 3) or parts[1] not in LIBRARY:
        raise StencilFlowError(f"bad library spec {spec!r}; write library:NAME[:SIZE] with NAME in {sorted(LIBRARY)}")
    lib = LIBRARY[parts[1]]
    size = _bounded_int(spec, "SIZE", parts[2], MAX_GENERATED_SIZE) if len(parts) == 3 else 32
    sp = StencilProgram(lib.name, inputs=list(lib.inputs), outputs=list(lib.outputs))
    try:
        sp.add(lib.definition, label=lib.name, **{f: f for f in (*lib.inputs, *lib.outputs)}, **dict(lib.params))
    except Exception as exc:
        raise StencilFlowError(
            f"{spec}: cannot call library stencil {lib.name!r} with its fields and default parameters ({exc}); build a "
            f"StencilProgram in Python and use mapping.spatial.bridge.from_stencil_program"
        ) from None
    return from_stencil_program(sp, (size, size, max(size // 4, 4)))

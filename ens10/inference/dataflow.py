"""An exported baseline as a StencilFlow DAG: JSON, streaming simulation, HLS C-simulation and
the on-chip buffers / throughput of the mapped program.

The program must be exported with ``layout="fields"`` (one field per channel, weights as
constants): StencilFlow streams scalar fields. The DAG is built by
:func:`mapping.spatial.bridge.from_stencil_program` over the *padded* field (lat + 2 halo,
lon + 2 halo): the spherical halo (periodic longitude, replicated poles) is filled before
streaming, exactly as on a CPU, so the DAG's boundary condition only affects points outside
the interior that are discarded. A program's geometry fields (the U-Net's padding masks) are
computed for the padded domain instead.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from ens10.inference.errors import ExportError
from ens10.inference.exporter import ExportedModel
from ens10.inference.runner import pad_sphere
from mapping.spatial.analysis import Analysis, Target, analyse
from mapping.spatial.bridge import from_stencil_program
from mapping.spatial.files import atomic_write_text
from mapping.spatial.hls import CSimulation, HLSEmitter
from mapping.spatial.model import Program
from mapping.spatial.simulator import StreamingSimulator
from stencils.storage import Domain

log = logging.getLogger(__name__)

GLOBAL_HALF_DEGREE = (361, 720)


@dataclass(frozen=True)
class DataflowReport:
    """Buffers and throughput of one exported program mapped onto one device."""

    model: str
    field_shape: tuple[int, int]
    streamed_shape: tuple[int, ...]
    halo: int
    nodes: int
    operations_per_point: int
    onchip_bytes: int
    reuse_bytes: int
    delay_bytes: int
    largest_buffers: dict[str, int]
    clock_mhz: float
    cycles: int
    seconds_per_field: float
    fields_per_second: float
    gops: float
    offchip_bytes: int

    def to_dict(self) -> dict:
        return asdict(self)


def program_to_json(prog: Program) -> dict:
    """A StencilFlow JSON document of ``prog`` (loadable by ``stratoflow map FILE``)."""
    return {
        "name": prog.name,
        "dimensions": list(prog.shape),
        "inputs": {n: {"data_type": i.dtype.name, "input_dims": list(i.dims)} for n, i in prog.inputs.items()},
        "outputs": list(prog.outputs),
        "constants": dict(prog.constants),
        "program": {
            n: {
                "computation_string": s.source,
                "data_type": s.dtype.name,
                "boundary_conditions": {f: {"type": bc.kind, "value": bc.value} for f, bc in s.boundary.items()},
            }
            for n, s in prog.stencils.items()
        },
    }


class DataflowExport:
    """``DataflowExport(exported, shape)``: the StencilFlow program of ``exported`` over a
    (lat, lon) field of ``shape`` (default: the checkpoint grid) plus its halo."""

    def __init__(self, exported: ExportedModel, shape: tuple[int, int] | None = None) -> None:
        if exported.layout != "fields":
            raise ExportError(
                f"program {exported.program.name!r} has the {exported.layout!r} layout; StencilFlow "
                "streams one field per channel: export it with layout='fields'"
            )
        self.exported = exported
        self.field_shape = tuple(shape or exported.shape)
        h = exported.halo
        self.shape = (self.field_shape[0] + 2 * h, self.field_shape[1] + 2 * h, 1)
        self.program = from_stencil_program(exported.program, self.shape)

    def analysis(self, clock_mhz: float = 300.0, timed: bool = True) -> Analysis:
        return analyse(self.program, Target(clock_mhz=clock_mhz), timed=timed)

    def write_json(self, path: Path | str) -> Path:
        return atomic_write_text(path, json.dumps(program_to_json(self.program), indent=1))

    def padded_inputs(self, fields: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Program inputs (lat+2h, lon+2h, 1) from forecast fields and the static fields; the
        program's geometry fields (U-Net masks) computed for the padded domain."""
        h = self.exported.halo
        src = {**self.exported.static, **fields}
        prog = self.exported.program
        geometry = getattr(prog, "geometry", None)  # a TableProgram's (U-Net masks), else none
        geo = geometry(Domain(*self.field_shape, 1, h)) if geometry is not None else {}
        return {n: np.asarray(geo[n], np.float64)[:, :, None] if n in geo
                else pad_sphere(np.asarray(src[n], np.float64), h)[:, :, None] for n in self.program.inputs}

    def _interior(self, out: Mapping[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        h = self.exported.halo
        sl = (slice(h, self.shape[0] - h), slice(h, self.shape[1] - h), 0)
        return np.asarray(out["mu"])[sl], np.asarray(out["sigma"])[sl]

    def simulate(self, fields: Mapping[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """(mu, sigma) of the cycle-level streaming simulation on the interior."""
        res = StreamingSimulator(self.analysis())(self.padded_inputs(fields))
        return self._interior(res.outputs)

    def csim(self, fields: Mapping[str, np.ndarray], workdir: Path | str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(mu, sigma) of the emitted HLS code compiled with g++ and run (C simulation)."""
        sim = CSimulation(HLSEmitter(self.analysis(timed=False)), workdir, timeout_s=600.0)
        return self._interior(sim(self.padded_inputs(fields)))

    def report(self, clock_mhz: float = 300.0) -> DataflowReport:
        an = self.analysis(clock_mhz)
        m = an.model
        reuse = sum(s.reuse_bytes for s in an.stencils.values())
        delay = sum(s.delay_bytes for s in an.stencils.values())
        largest = dict(sorted(((n, s.onchip_bytes) for n, s in an.stencils.items()),
                              key=lambda kv: -kv[1])[:5])
        return DataflowReport(
            model=self.exported.model, field_shape=self.field_shape, streamed_shape=self.shape,
            halo=self.exported.halo, nodes=len(self.program.stencils),
            operations_per_point=m.operations_per_point, onchip_bytes=m.onchip_bytes,
            reuse_bytes=reuse, delay_bytes=delay, largest_buffers=largest, clock_mhz=clock_mhz,
            cycles=m.cycles, seconds_per_field=m.seconds, fields_per_second=1.0 / m.seconds,
            gops=m.gops, offchip_bytes=m.offchip_bytes,
        )

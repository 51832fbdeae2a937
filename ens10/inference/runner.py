"""Run an exported baseline on lat-lon fields: halo filling and the program call."""

from __future__ import annotations

import logging
from collections.abc import Mapping

import numpy as np

from ens10.inference.errors import ExportError
from ens10.inference.exporter import ExportedModel
from ens10.inference.stacked import loops_supported
from stencils import StencilFactory

log = logging.getLogger(__name__)


def pad_sphere(field: np.ndarray, halo: int) -> np.ndarray:
    """Pad a (lat, lon) field by ``halo`` cells: periodic in longitude, replicated at the poles
    (as :func:`ens10.baselines.models.pad_sphere` pads LeNet's input)."""
    if halo == 0:
        return np.asarray(field)
    out = np.pad(field, ((0, 0), (halo, halo)), mode="wrap")
    return np.pad(out, ((halo, halo), (0, 0)), mode="edge")


class InferenceProgram:
    """An exported baseline built for one backend: ``__call__(fields) -> (mu, sigma)``.

    ``fields`` maps every forecast input of the program (``{VAR}_m{k}`` members or
    ``{VAR}_mean``/``{VAR}_std``) to a (lat, lon) array; static fields come from the export.
    With ``padded=True`` the arrays already carry ``halo`` cells on each side (as on an MPI
    rank after the halo exchange) and static fields must be given too.
    """

    def __init__(self, exported: ExportedModel, backend: str | StencilFactory = "numpy") -> None:
        self.exported = exported
        self.factory = backend if isinstance(backend, StencilFactory) else StencilFactory(backend)
        self.halo = exported.halo
        if exported.loops and not loops_supported(self.factory.backend):
            raise ExportError(
                f"program {exported.program.name!r} loops over channels, which the "
                f"{self.factory.backend} backend cannot index: export it with loops=False for this backend"
            )
        exported.program.build(self.factory)  # compile (or load) every stencil once, here
        self._static = {k: pad_sphere(v, self.halo) for k, v in exported.static.items()}

    @property
    def backend(self) -> str:
        return self.factory.backend

    def __call__(self, fields: Mapping[str, np.ndarray], padded: bool = False) -> tuple[np.ndarray, np.ndarray]:
        prog = self.exported.program
        wanted = self.exported.forecast_inputs
        missing = [f for f in wanted if f not in fields]
        if missing:
            raise ExportError(
                f"program {prog.name!r}: forecast fields {missing[:6]}{' ...' if len(missing) > 6 else ''} "
                f"are missing; it needs {len(wanted)} fields like {wanted[0]!r}"
            )
        inputs: dict[str, np.ndarray] = {}
        for name in self.exported.field_inputs:
            if padded:
                if name not in fields:
                    raise ExportError(f"program {prog.name!r}: padded input {name!r} is missing")
                arr = np.asarray(fields[name], dtype=np.float64)
            elif name in self._static:
                arr = self._static[name]
            else:
                arr = pad_sphere(np.asarray(fields[name], dtype=np.float64), self.halo)
            inputs[name] = arr[:, :, None]
        out = prog.run(inputs, self.factory, halo=self.halo)
        h = self.halo
        inner = (slice(h, -h or None), slice(h, -h or None), 0)
        return out["mu"][inner], out["sigma"][inner]

"""Programs recorded from an application's own launch sequence, and the registry of their names.

An application (fv3core) that cannot be imported here registers program builders under a
family prefix: ``register_family("fv3", build, names)`` makes ``fv3:ROUTINE[:N]`` a program spec
of :func:`mapping.spatial.pipeline.load_any`. A builder runs the application's class on one
subdomain with GT4Py's numpy backend and records every launch while it runs
(:class:`LaunchRecorder`): the stencil's GTIR with its externals, the call's origin and domain,
its fields by identity, its scalars. The recording becomes a StencilFlow program
(:func:`mapping.spatial.bridge.from_calls`) whose inputs carry the recorded input values and
whose GT4Py outputs are kept to compare against (:class:`RecordedProgram`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mapping.spatial.bridge import BridgeCall, GatherCopy, Placement, from_calls
from mapping.spatial.errors import StencilFlowError
from mapping.spatial.model import Program

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RecordedProgram:
    """A bridged program, its input values and GT4Py's numpy-backend outputs (both padded to
    the program's domain; ``extents[name]`` is each array's own i/j/k extent)."""

    program: Program
    inputs: Mapping[str, np.ndarray]
    gt4py_outputs: Mapping[str, np.ndarray]
    extents: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    #: the recorded steps as the application runs them (for timing it on the CPU; they run on
    #: the application's arrays, which hold the outputs after the first run)
    launches: tuple[Callable[[], None], ...] = ()


@dataclass(frozen=True)
class Family:
    prefix: str
    build: Callable[[str, int | None], RecordedProgram]
    names: Callable[[], Sequence[str]]


_FAMILIES: dict[str, Family] = {}


def register_family(prefix: str, build: Callable[[str, int | None], RecordedProgram],
                    names: Callable[[], Sequence[str]]) -> None:
    """Make ``PREFIX:NAME[:N]`` a program spec built by ``build(NAME, N or None)``."""
    _FAMILIES[prefix] = Family(prefix, build, names)


def families() -> dict[str, Family]:
    return dict(_FAMILIES)


def load_recorded(spec: str, max_size: int) -> RecordedProgram:
    """The program of ``PREFIX:NAME[:N]`` from its registered family."""
    parts = spec.split(":")
    fam = _FAMILIES.get(parts[0])
    if fam is None:
        raise StencilFlowError(f"{spec}: no program family {parts[0]!r} is registered "
                               f"(registered: {sorted(_FAMILIES) or 'none'})")
    if len(parts) not in (2, 3) or parts[1] not in fam.names():
        raise StencilFlowError(f"bad spec {spec!r}; write {fam.prefix}:NAME[:N] with NAME in {list(fam.names())}")
    size = None
    if len(parts) == 3:
        text = parts[2]
        if not text.isascii() or not text.isdigit() or not 1 <= int(text) <= max_size:
            raise StencilFlowError(f"{spec}: N must be a whole number from 1 to {max_size}, got {text!r}")
        size = int(text)
    return fam.build(parts[1], size)


class LaunchRecorder:
    """Records launches (objects with ``stencil``, ``origin``, ``domain``, ``arguments``, as
    :class:`stencils.launch.BoundStencil`) and gather copies over named arrays, running each.

    ``names`` maps the arrays the caller knows to program field names; any other array a launch
    touches (a class's own temporaries, grid terms) is named ``LABEL_PARAM`` after its first
    use. An array read before any recorded step writes it is an input of the program, with
    the values it had when it was first seen."""

    def __init__(self, factory: Any, names: Mapping[str, Any]) -> None:
        self.factory = factory
        self.names: dict[int, str] = {}
        self.arrays: dict[str, Any] = {}
        self.initial: dict[str, np.ndarray] = {}
        self.inputs: list[str] = []
        self.written: set[str] = set()
        self.steps: list[BridgeCall | GatherCopy] = []
        self.launches: list[Callable[[], None]] = []
        self._labels: dict[str, int] = {}
        for n, a in names.items():
            self._see(a, n)

    def _label(self, base: str) -> str:
        n = self._labels[base] = self._labels.get(base, 0) + 1
        return base if n == 1 else f"{base}{n}"

    def _see(self, array: Any, name: str) -> str:
        key = id(array)
        if key not in self.names:
            self.names[key] = name
            self.arrays[name] = array
            self.initial[name] = np.array(array, dtype=np.float64)
        return self.names[key]

    def _read(self, name: str) -> None:
        if name not in self.written and name not in self.inputs:
            self.inputs.append(name)

    def launch(self, bound: Any) -> None:
        """Record and run one bound launch."""
        from stencils.access import analyse

        record = self.factory.record_of(bound.stencil)
        label = self._label(str(bound.stencil.name))
        access = analyse(record.definition, record.externals)
        fields, scalars = {}, {}
        for param, value in bound.arguments.items():
            if hasattr(value, "shape"):
                fields[param] = self._see(value, f"{label}_{param}")
            else:
                scalars[param] = value
        for param in access.reads:
            self._read(fields[param])
        self.written.update(fields[p] for p in access.writes)
        ir = access.gtir
        self.steps.append(BridgeCall(label, str(ir.name), ir, fields, scalars,
                                     Placement(tuple(bound.origin), tuple(bound.domain))))
        self.launches.append(bound)
        bound()

    def gather(self, label: str, copies: Iterable[tuple[Any, tuple[int, int], Any, tuple[int, int], float]],
               run: Callable[[], None]) -> None:
        """Record point copies ``dst[di, dj] = sign * src[si, sj]`` (arrays, every level; all
        sources read before any destination is written) and run them by ``run()``."""
        label = self._label(label)
        rows = []
        for dst, d, src, sidx, sign in copies:
            src_name = self._see(src, f"{label}_src")
            self._read(src_name)
            dst_name = self._see(dst, f"{label}_dst")
            self._read(dst_name)  # the points not copied keep their values
            rows.append((dst_name, (int(d[0]), int(d[1])), src_name, (int(sidx[0]), int(sidx[1])), float(sign)))
        self.written.update(r[0] for r in rows)
        self.steps.append(GatherCopy(label, tuple(rows)))
        self.launches.append(run)
        run()

    def program(self, name: str, outputs: Sequence[str]) -> RecordedProgram:
        """The recorded sequence as a program over the arrays' common (largest) shape; the
        outputs (arrays named in ``names``) are read from the arrays now (after the launches)."""
        arrays = {n: np.asarray(a) for n, a in self.arrays.items()}
        shape = tuple(max(a.shape[c] if a.ndim > c else 1 for a in arrays.values()) for c in range(3))
        dims: dict[str, tuple[str, ...]] = {}
        padded_in: dict[str, np.ndarray] = {}
        extents: dict[str, tuple[int, ...]] = {}
        for n in self.inputs:
            a = self.initial[n]
            if a.ndim not in (2, 3):
                raise StencilFlowError(f"recorded program {name}: input {n} has {a.ndim} dimensions; use 2 (IJ) or 3")
            dims[n] = ("i", "j", "k")[: a.ndim]
            padded_in[n] = _pad(a, shape[: a.ndim])
            extents[n] = a.shape
        gt = {}
        for o in outputs:
            a = arrays[o]
            if a.ndim != 3:
                raise StencilFlowError(f"recorded program {name}: output {o} is not 3-D")
            gt[o] = _pad(a, shape)
            extents[o] = a.shape
        prog = from_calls(name, shape, dims, outputs, self.steps, data=padded_in)
        log.info("recorded %s: %d steps, inputs %s", name, len(self.steps), ", ".join(self.inputs))
        return RecordedProgram(prog, padded_in, {prog.outputs[i]: gt[o] for i, o in enumerate(outputs)}, extents,
                               tuple(self.launches))


def _pad(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``a`` zero-padded at the high end of each axis to ``shape`` (indices unchanged)."""
    out = np.zeros(shape, dtype=np.float64)
    out[tuple(slice(0, n) for n in a.shape)] = a
    return out

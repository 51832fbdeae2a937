"""Stencil programs: ordered stencil calls over named fields, on any backend.

A :class:`StencilProgram` knows, per call, which program fields are read (at which offsets,
composed through each stencil's temporaries, from GT4Py's GTIR) and written. From that it
derives how far beyond the compute domain each call must compute so that later calls read
valid values, and therefore the halo its inputs need. ``mapping.spatial`` turns the same
information into a StencilFlow DAG.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from stencils.access import Offset, StencilAccess, analyse
from stencils.errors import StencilError
from stencils.factory import StencilFactory
from stencils.storage import Domain, from_numpy, to_numpy

log = logging.getLogger(__name__)

Extent = tuple[int, int, int, int]  # cells beyond the domain: (i_lo, i_hi, j_lo, j_hi)


@dataclass(frozen=True)
class CallAccess:
    """One call of a program, in program field names."""

    label: str
    stencil_name: str
    reads: Mapping[str, frozenset[Offset]]
    writes: Mapping[str, frozenset[Offset]]
    scalars: Mapping[str, Any]
    bindings: Mapping[str, str]  # stencil parameter -> program field
    stencil: StencilAccess = field(repr=False)

    @property
    def gtir(self) -> Any:
        return self.stencil.gtir


@dataclass(frozen=True)
class _Call:
    definition: Callable[..., None]
    label: str
    externals: Mapping[str, Any]
    fields: Mapping[str, str]
    scalars: Mapping[str, Any]
    access: StencilAccess


def _horizontal_extent(offsets: Iterable[Offset]) -> Extent:
    offs = list(offsets)
    return (
        max(0, -min(o[0] for o in offs)),
        max(0, max(o[0] for o in offs)),
        max(0, -min(o[1] for o in offs)),
        max(0, max(o[1] for o in offs)),
    )


def _grow(a: Extent, b: Extent) -> Extent:
    return tuple(x + y for x, y in zip(a, b))  # type: ignore[return-value]


def _union(a: Extent, b: Extent) -> Extent:
    return tuple(max(x, y) for x, y in zip(a, b))  # type: ignore[return-value]


class StencilProgram:
    """An ordered list of stencil calls over named fields (inputs, temporaries, outputs).

    >>> prog = StencilProgram("biharmonic", inputs=["a"], outputs=["b"], temporaries=["t"])
    >>> prog.add(laplacian_2d, in_field="a", out_field="t")
    >>> prog.add(laplacian_2d, in_field="t", out_field="b")
    >>> prog.run({"a": a_with_halo}, backend="numpy")["b"]
    """

    def __init__(
        self,
        name: str,
        inputs: Iterable[str],
        outputs: Iterable[str],
        temporaries: Iterable[str] = (),
    ) -> None:
        self.name = name
        self.inputs = tuple(inputs)
        self.outputs = tuple(outputs)
        self.temporaries = tuple(temporaries)
        names = self.inputs + self.outputs + self.temporaries
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise StencilError(f"program {name!r}: fields declared twice: {sorted(dup)}")
        self._calls: list[_Call] = []

    @property
    def fields(self) -> tuple[str, ...]:
        return self.inputs + self.temporaries + self.outputs

    def add(
        self,
        definition: Callable[..., None],
        label: str | None = None,
        externals: Mapping[str, Any] | None = None,
        **bindings: Any,
    ) -> StencilProgram:
        """Append a call; ``bindings`` map stencil parameters to program fields or scalar values."""
        label = label or f"{definition.__name__}_{len(self._calls)}"
        if any(c.label == label for c in self._calls):
            raise StencilError(f"program {self.name!r}: call label {label!r} is used twice")
        access = analyse(definition, externals)
        where = f"program {self.name!r}, call {label!r} ({access.name})"
        unknown = set(bindings) - set(access.fields) - set(access.scalars)
        if unknown:
            raise StencilError(
                f"{where}: {sorted(unknown)} are not parameters of the stencil; "
                f"its fields are {list(access.fields)}, its scalars {list(access.scalars)}"
            )
        fields: dict[str, str] = {}
        for param in access.fields:
            if param not in bindings:
                raise StencilError(f"{where}: field parameter {param!r} is not bound to a program field")
            target = bindings[param]
            if not isinstance(target, str) or target not in self.fields:
                raise StencilError(
                    f"{where}: parameter {param!r} is bound to {target!r}, which is not a declared "
                    f"field of the program (declared: {list(self.fields)})"
                )
            fields[param] = target
        scalars = {p: bindings[p] for p in access.scalars if p in bindings}
        missing = [p for p in access.scalars if p not in bindings]
        if missing:
            raise StencilError(f"{where}: scalar parameters {missing} need values")
        available = set(self.inputs) | self._written()
        for param in access.reads:
            src = fields[param]
            if src not in available and param not in access.writes:
                raise StencilError(
                    f"{where}: reads field {src!r} (as {param!r}) before any call writes it; "
                    "declare it as an input or add the call that computes it first"
                )
        written = [fields[p] for p in access.writes]
        for target in written:
            if target in self.inputs:
                raise StencilError(f"{where}: writes program input {target!r}; inputs are read-only")
        self._calls.append(_Call(definition, label, dict(externals or {}), fields, scalars, access))
        return self

    def externals(self) -> dict[str, Mapping[str, Any]]:
        """Per call label: the compile-time externals it was added with."""
        return {c.label: dict(c.externals) for c in self._calls}

    def accesses(self) -> list[CallAccess]:
        """Per call: program fields read (with offsets) and written, in call order."""
        result = []
        for c in self._calls:
            reads: dict[str, set[Offset]] = {}
            for param, offs in c.access.reads.items():
                reads.setdefault(c.fields[param], set()).update(offs)
            writes: dict[str, set[Offset]] = {}
            for param, offs in c.access.writes.items():
                writes.setdefault(c.fields[param], set()).update(offs)
            result.append(
                CallAccess(
                    label=c.label,
                    stencil_name=c.access.name,
                    reads={k: frozenset(v) for k, v in reads.items()},
                    writes={k: frozenset(v) for k, v in writes.items()},
                    scalars=dict(c.scalars),
                    bindings=dict(c.fields),
                    stencil=c.access,
                )
            )
        return result

    def compute_extents(self) -> list[Extent]:
        """How many cells beyond the domain each call must compute (i_lo, i_hi, j_lo, j_hi)."""
        self._check_complete()
        accesses = self.accesses()
        needed: dict[str, Extent] = {f: (0, 0, 0, 0) for f in self.outputs}
        extents: list[Extent] = [(0, 0, 0, 0)] * len(accesses)
        for idx in range(len(accesses) - 1, -1, -1):
            acc = accesses[idx]
            ext = (0, 0, 0, 0)
            for f in acc.writes:
                ext = _union(ext, needed.get(f, (0, 0, 0, 0)))
            extents[idx] = ext
            for f, offs in acc.reads.items():
                needed[f] = _union(needed.get(f, (0, 0, 0, 0)), _grow(ext, _horizontal_extent(offs)))
        self._input_extents = {f: needed.get(f, (0, 0, 0, 0)) for f in self.inputs}
        return extents

    def required_halo(self) -> dict[str, int]:
        """The halo each input needs: the accumulated read extent along all paths to the outputs."""
        self.compute_extents()
        return {f: max(e) for f, e in self._input_extents.items()}

    def _written(self) -> set[str]:
        return {c.fields[p] for c in self._calls for p in c.access.writes}

    def _check_complete(self) -> None:
        missing = [o for o in self.outputs if o not in self._written()]
        if missing:
            raise StencilError(f"program {self.name!r}: outputs {missing} are never written by any call")

    def build(self, factory: StencilFactory) -> list[Any]:
        """Build (or load) every call's stencil; returns them in call order."""
        return [factory(c.definition, c.externals, name=c.label) for c in self._calls]

    def run(
        self,
        inputs: Mapping[str, np.ndarray],
        backend: str | StencilFactory = "numpy",
        halo: int | None = None,
    ) -> dict[str, np.ndarray]:
        """Run the program on numpy inputs (interior + halo); returns the outputs as numpy arrays.

        All fields share the inputs' shape; ``halo`` defaults to what :meth:`required_halo` needs.
        """
        factory = backend if isinstance(backend, StencilFactory) else StencilFactory(backend)
        # a factory that knows applied program schedules (mapping.tuning's TunedStencilFactory)
        # runs the program as tuned: fused as the schedule says, built with its backend
        tuned_program = getattr(factory, "tuned_program", None)
        if tuned_program is not None:
            tuned = tuned_program(self)
            if tuned.schedule is not None:
                return tuned.run(inputs, halo=halo)
        names = self.field_inputs
        missing = [f for f in names if f not in inputs]
        if missing:
            raise StencilError(f"program {self.name!r}: inputs {missing} were not given")
        extents = self.compute_extents()
        need = self.required_halo()
        shapes = {tuple(np.shape(inputs[f])) for f in names}
        if len(shapes) != 1:
            raise StencilError(
                f"program {self.name!r}: inputs have different shapes "
                f"{ {f: np.shape(inputs[f]) for f in names} }; all must be equal"
            )
        shape = shapes.pop()
        if len(shape) != 3:
            raise StencilError(f"program {self.name!r}: inputs must be 3D (i, j, k), got shape {shape}")
        h = max(need.values(), default=0) if halo is None else halo
        for f, req in need.items():
            if req > h:
                raise StencilError(
                    f"program {self.name!r}: input {f!r} needs a halo of {req} cells (accumulated "
                    f"along the program's calls) but halo={h}; allocate a larger halo"
                )
        domain = Domain(shape[0] - 2 * h, shape[1] - 2 * h, shape[2], h)
        storages = self._allocate(inputs, shape, domain, factory.backend)
        for call, stencil, ext in zip(self._calls, self.build(factory), extents):
            ilo, ihi, jlo, jhi = ext
            origin = (h - ilo, h - jlo, 0)
            dom = (domain.nx + ilo + ihi, domain.ny + jlo + jhi, domain.nz)
            args = {p: storages[f] for p, f in call.fields.items()}
            log.debug("%s: %s origin=%s domain=%s", self.name, call.label, origin, dom)
            stencil(origin=origin, domain=dom, **args, **call.scalars)
        return {f: to_numpy(storages[f]) for f in self.outputs}

    @property
    def field_inputs(self) -> tuple[str, ...]:
        """The inputs :meth:`run` takes as (i, j, k) arrays."""
        return tuple(self.inputs)

    def _allocate(
        self, inputs: Mapping[str, np.ndarray], shape: tuple[int, ...], domain: Domain, backend: str
    ) -> dict[str, Any]:
        """Storages of every field of one :meth:`run`: inputs copied, the others zero."""
        storages = {
            f: from_numpy(np.asarray(inputs[f], dtype=np.float64), backend, domain.origin)
            for f in self.field_inputs
        }
        for f in self.temporaries + self.outputs:
            storages[f] = from_numpy(np.zeros(shape), backend, domain.origin)
        return storages

    def __repr__(self) -> str:
        calls = ", ".join(c.label for c in self._calls)
        return f"StencilProgram({self.name!r}, calls=[{calls}])"

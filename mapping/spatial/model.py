"""The StencilFlow program model: typed, validated DAG of stencils over a 1D-3D domain.

Load a program from StencilFlow's JSON format with :func:`load_program` (a path or an
already-parsed dict); every problem raises :class:`StencilFlowError` naming the node.
"""

from __future__ import annotations

import io
import logging
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from mapping.spatial.errors import StencilFlowError
from mapping.spatial.expr import ITERATORS, Computation, parse_computation
from stencils.errors import InputFileError
from stencils.textfile import read_json, read_text

log = logging.getLogger(__name__)

DTYPES: dict[str, tuple[np.dtype, str]] = {
    "float32": (np.dtype(np.float32), "float"),
    "float64": (np.dtype(np.float64), "double"),
    "int8": (np.dtype(np.int8), "int8_t"),
    "int16": (np.dtype(np.int16), "int16_t"),
    "int32": (np.dtype(np.int32), "int32_t"),
    "int64": (np.dtype(np.int64), "int64_t"),
}


@dataclass(frozen=True)
class DataType:
    name: str

    def __post_init__(self) -> None:
        if self.name not in DTYPES:
            raise StencilFlowError(f"unknown data type {self.name!r}; use one of {', '.join(DTYPES)}")

    @property
    def numpy(self) -> np.dtype:
        return DTYPES[self.name][0]

    @property
    def cpp(self) -> str:
        return DTYPES[self.name][1]

    @property
    def bytes(self) -> int:
        return self.numpy.itemsize


@dataclass(frozen=True)
class DataSource:
    """Where an input's values come from: constant, inline list, file, or seeded random."""

    kind: Literal["constant", "inline", "file", "random"]
    value: float = 0.0
    values: tuple[float, ...] = ()
    path: Path | None = None


@dataclass(frozen=True)
class Input:
    name: str
    dtype: DataType
    dims: tuple[str, ...]
    source: DataSource


@dataclass(frozen=True)
class BoundaryCondition:
    """What a stencil sees outside the domain: a constant, the nearest edge value (copy), or
    nothing (shrink: the output is only computed where the whole window is inside; 0 elsewhere)."""

    kind: Literal["constant", "copy", "shrink"]
    value: float = 0.0


@dataclass(frozen=True)
class Stencil:
    name: str
    computation: Computation
    source: str
    dtype: DataType
    boundary: Mapping[str, BoundaryCondition]
    accesses: Mapping[str, frozenset[tuple[int, ...]]]

    @property
    def inputs(self) -> tuple[str, ...]:
        """The fields streamed in (its own output, read by a recurrence, is not one)."""
        return tuple(sorted(f for f in self.accesses if f != self.name))

    @property
    def recurrence(self) -> int:
        """0, or -1 (+1) for a vertical recurrence reading its own output at k-d (k+d): a
        FORWARD (BACKWARD) sweep carried in the stream, see :func:`recurrence_of`."""
        offs = self.accesses.get(self.name)
        return 0 if not offs else (-1 if next(iter(offs))[-1] < 0 else 1)


@dataclass(frozen=True)
class Program:
    """A validated StencilFlow program; ``stencils`` is in topological order."""

    name: str
    shape: tuple[int, ...]
    inputs: Mapping[str, Input]
    stencils: Mapping[str, Stencil]
    outputs: tuple[str, ...]
    vectorization: int = 1
    constants: Mapping[str, float] = field(default_factory=dict)

    @property
    def iterators(self) -> tuple[str, ...]:
        return ITERATORS[3 - len(self.shape):]

    @property
    def points(self) -> int:
        return int(np.prod(self.shape))

    def dtype_of(self, name: str) -> DataType:
        return self.inputs[name].dtype if name in self.inputs else self.stencils[name].dtype

    def consumers(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {n: [] for n in (*self.inputs, *self.stencils)}
        for s in self.stencils.values():
            for f in s.inputs:
                out[f].append(s.name)
        return out

    def with_vectorization(self, width: int) -> Program:
        return _check_vectorization(
            Program(self.name, self.shape, self.inputs, self.stencils, self.outputs, width, self.constants)
        )

    def load_inputs(self) -> dict[str, np.ndarray]:
        """The input arrays (each with its own ``dims``), from their data sources."""
        return {name: _load_input(self, inp) for name, inp in self.inputs.items()}


def _check_vectorization(prog: Program) -> Program:
    w = prog.vectorization
    if not isinstance(w, int) or w < 1:
        raise StencilFlowError(f"program '{prog.name}': vectorization must be a positive integer, got {w!r}")
    if prog.shape[-1] % w:
        raise StencilFlowError(
            f"program '{prog.name}': vectorization {w} does not divide the innermost dimension "
            f"{prog.shape[-1]}; choose a divisor of it"
        )
    return prog


def _input_shape(prog: Program, inp: Input) -> tuple[int, ...]:
    return tuple(prog.shape[prog.iterators.index(d)] for d in inp.dims)


def _load_input(prog: Program, inp: Input) -> np.ndarray:
    shape = _input_shape(prog, inp)
    dt = inp.dtype.numpy
    src = inp.source
    if src.kind == "constant":
        return np.full(shape, src.value, dtype=dt)
    if src.kind == "random":
        rng = np.random.default_rng(zlib.crc32(inp.name.encode()))
        vals = rng.random(shape)
        return (vals * 100).astype(dt) if dt.kind == "i" else vals.astype(dt)
    if src.kind == "inline":
        arr = np.asarray(src.values, dtype=dt)
    else:
        path = src.path
        assert path is not None
        if not path.exists():
            raise StencilFlowError(f"input '{inp.name}': data file {path} does not exist")
        try:
            if path.suffix == ".npy":
                arr = np.load(path).astype(dt)
            elif path.suffix == ".csv":
                text = read_text(path, "comma-separated numbers", what=f"input '{inp.name}': data file")
                arr = np.loadtxt(io.StringIO(text), delimiter=",", dtype=dt, ndmin=1)
            else:  # .dat: raw binary of the declared data type
                arr = np.fromfile(path, dtype=dt)
        except InputFileError as exc:
            raise StencilFlowError(str(exc)) from None
        except (OSError, ValueError) as exc:
            raise StencilFlowError(f"input '{inp.name}': cannot read {path}: {exc}") from None
    if arr.size != int(np.prod(shape)):
        raise StencilFlowError(
            f"input '{inp.name}': data has {arr.size} values but dimensions {list(inp.dims)} of the "
            f"domain {list(prog.shape)} need {int(np.prod(shape))}"
        )
    return arr.reshape(shape)


# ----------------------------------------------------------------------------- loading


def load_program(source: str | Path | Mapping[str, Any], name: str | None = None) -> Program:
    """Load and validate a StencilFlow JSON program (path or parsed dict)."""
    base = Path.cwd()
    if isinstance(source, (str, Path)):
        path = Path(source)
        try:
            data = read_json(path, "a StencilFlow JSON program", what="program file")
        except InputFileError as exc:
            raise StencilFlowError(str(exc)) from None
        base = path.parent
        name = name or path.stem
    else:
        data = source
    return program_from_dict(data, name or "program", base)


def _require(d: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in d:
        raise StencilFlowError(f"{where}: missing key '{key}'")
    return d[key]


def program_from_dict(data: Mapping[str, Any], name: str, base: Path) -> Program:
    if not isinstance(data, Mapping):
        raise StencilFlowError(f"program '{name}': top level must be a JSON object")
    unknown = set(data) - {"inputs", "outputs", "dimensions", "program", "vectorization", "constants", "name"}
    if unknown:
        raise StencilFlowError(f"program '{name}': unknown top-level key(s) {sorted(unknown)}")
    name = str(data.get("name", name))
    shape = _require(data, "dimensions", f"program '{name}'")
    if (
        not isinstance(shape, list)
        or not 1 <= len(shape) <= 3
        or not all(isinstance(n, int) and n > 0 for n in shape)
    ):
        raise StencilFlowError(f"program '{name}': 'dimensions' must be a list of 1-3 positive integers, got {shape!r}")
    shape_t = tuple(shape)
    iterators = ITERATORS[3 - len(shape_t):]
    constants = data.get("constants", {})
    if not isinstance(constants, Mapping):
        raise StencilFlowError(f"program '{name}': 'constants' must be an object of name -> number")
    constants = dict(constants)
    for cname, cval in constants.items():
        if not isinstance(cval, (int, float)):
            raise StencilFlowError(f"program '{name}': constant '{cname}' must be a number, got {cval!r}")

    inputs: dict[str, Input] = {}
    raw_inputs = _require(data, "inputs", f"program '{name}'")
    if not isinstance(raw_inputs, Mapping):
        raise StencilFlowError(f"program '{name}': 'inputs' must be an object of name -> input spec")
    for iname, spec in raw_inputs.items():
        where = f"input '{iname}'"
        if not isinstance(spec, Mapping):
            raise StencilFlowError(f"{where}: must be an object with data_type, input_dims, data")
        dtype = _dtype(spec, where)
        dims = tuple(spec.get("input_dims", iterators))
        if not set(dims) <= set(iterators) or list(dims) != sorted(dims, key=iterators.index) or len(set(dims)) != len(dims):
            raise StencilFlowError(
                f"{where}: input_dims {list(dims)} must be an ordered subset of the program's "
                f"iterators {list(iterators)} (domain {list(shape_t)})"
            )
        inputs[iname] = Input(iname, dtype, dims, _data_source(spec.get("data"), where, base))

    raw_prog = _require(data, "program", f"program '{name}'")
    if not isinstance(raw_prog, Mapping) or not all(isinstance(v, Mapping) for v in raw_prog.values()):
        raise StencilFlowError(f"program '{name}': 'program' must be an object of stencil name -> stencil spec")
    if not raw_prog:
        raise StencilFlowError(f"program '{name}': 'program' has no stencils")
    clash = set(raw_prog) & set(inputs)
    if clash:
        raise StencilFlowError(f"program '{name}': {sorted(clash)} is both an input and a stencil; rename one")
    field_dims = {n: i.dims for n, i in inputs.items()} | {n: iterators for n in raw_prog}
    stencils: dict[str, Stencil] = {}
    for sname, spec in raw_prog.items():
        where = f"stencil '{sname}'"
        src = _require(spec, "computation_string", where)
        if not isinstance(src, str):
            raise StencilFlowError(f"{where}: computation_string must be a string")
        dtype = _dtype(spec, where)
        comp = parse_computation(sname, src, iterators, field_dims, constants)
        acc = comp.accesses()
        if sname in acc:
            recurrence_of(sname, acc[sname], iterators)
        raw_bc = spec.get("boundary_conditions", spec.get("boundary_condition", {}))
        if not isinstance(raw_bc, Mapping) or not all(isinstance(b, Mapping) for b in raw_bc.values()):
            raise StencilFlowError(f"{where}: boundary_conditions must map field -> {{\"type\": ..., \"value\": ...}}")
        bcs: dict[str, BoundaryCondition] = {}
        for fname, bspec in raw_bc.items():
            if fname not in acc:
                raise StencilFlowError(f"{where}: boundary condition for '{fname}', which it does not read")
            kind = bspec.get("type")
            if kind not in ("constant", "copy", "shrink"):
                raise StencilFlowError(
                    f"{where}: boundary condition of '{fname}' has type {kind!r}; use constant, copy or shrink"
                )
            value = bspec.get("value", 0.0)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise StencilFlowError(f"{where}: boundary value of '{fname}' must be a number, got {value!r}")
            bcs[fname] = BoundaryCondition(kind, float(value))
        for fname, offs in acc.items():
            if fname not in bcs:
                if any(any(o) for o in offs):
                    raise StencilFlowError(
                        f"{where}: reads '{fname}' at non-zero offsets but has no boundary condition "
                        f"for it; add \"boundary_conditions\": {{\"{fname}\": {{\"type\": \"constant\", \"value\": 0}}}} "
                        f"(or copy/shrink)"
                    )
                bcs[fname] = BoundaryCondition("constant", 0.0)
        stencils[sname] = Stencil(sname, comp, src, dtype, bcs, acc)

    raw_out = _require(data, "outputs", f"program '{name}'")
    if not isinstance(raw_out, list) or not all(isinstance(o, str) for o in raw_out):
        raise StencilFlowError(f"program '{name}': 'outputs' must be a list of stencil names")
    outputs = tuple(raw_out)
    for o in outputs:
        if o not in stencils:
            raise StencilFlowError(f"program '{name}': output '{o}' is not a stencil of the program")
    if not outputs:
        raise StencilFlowError(f"program '{name}': 'outputs' is empty")
    ordered = _topological(stencils, name)
    width = data.get("vectorization", 1)
    if isinstance(width, bool) or not isinstance(width, int):
        raise StencilFlowError(f"program '{name}': vectorization must be a positive integer, got {width!r}")
    prog = Program(name, shape_t, inputs, ordered, outputs, width, constants)
    _check_vectorization(prog)
    _warn_unused(prog)
    return prog


def recurrence_of(name: str, offsets: frozenset[tuple[int, ...]], iterators: tuple[str, ...]) -> int:
    """Direction of a stencil that reads its own output: -1 when every such read is at k-d
    (d > 0, a FORWARD recurrence), +1 when every one is at k+d (BACKWARD); anything else is a
    cycle and raises."""
    signs = {o[-1] > 0 for o in offsets if o[-1] != 0}
    if iterators[-1:] != ("k",) or any(any(o[:-1]) or o[-1] == 0 for o in offsets) or len(signs) != 1:
        raise StencilFlowError(
            f"stencil '{name}': reads its own output at {sorted(offsets)}; a stencil may read itself only "
            f"along k, all at k-d (a FORWARD recurrence) or all at k+d (BACKWARD); otherwise it is a cycle"
        )
    return 1 if signs.pop() else -1


def _dtype(spec: Mapping[str, Any], where: str) -> DataType:
    dt = spec.get("data_type", "float32")
    if dt not in DTYPES:
        raise StencilFlowError(f"{where}: unknown data_type {dt!r}; use one of {', '.join(DTYPES)}")
    return DataType(dt)


def _data_source(data: Any, where: str, base: Path) -> DataSource:
    if data is None:
        return DataSource("random")
    if isinstance(data, bool):
        raise StencilFlowError(f"{where}: data must be a number, 'constant:X', a list or a file path")
    if isinstance(data, (int, float)):
        return DataSource("constant", float(data))
    if isinstance(data, list):
        return DataSource("inline", values=tuple(float(v) for v in data))
    if isinstance(data, str):
        if data.startswith("constant:"):
            try:
                return DataSource("constant", float(data.split(":", 1)[1]))
            except ValueError:
                raise StencilFlowError(f"{where}: cannot read the number in data {data!r}") from None
        if data == "random":
            return DataSource("random")
        path = Path(data)
        if not path.is_absolute():
            path = base / path
        if path.suffix not in (".npy", ".csv", ".dat"):
            raise StencilFlowError(f"{where}: data file {data!r} must end in .npy, .csv or .dat")
        return DataSource("file", path=path)
    raise StencilFlowError(f"{where}: data must be a number, 'constant:X', a list or a file path, got {data!r}")


def _topological(stencils: Mapping[str, Stencil], prog: str) -> dict[str, Stencil]:
    """Kahn's algorithm; a cycle raises an error naming the stencils on it."""
    deps = {n: [f for f in s.inputs if f in stencils] for n, s in stencils.items()}
    indeg = {n: len(d) for n, d in deps.items()}
    users: dict[str, list[str]] = {n: [] for n in stencils}
    for n, d in deps.items():
        for f in d:
            users[f].append(n)
    ready = [n for n in stencils if indeg[n] == 0]
    order: list[str] = []
    while ready:
        n = ready.pop(0)
        order.append(n)
        for u in users[n]:
            indeg[u] -= 1
            if indeg[u] == 0:
                ready.append(u)
    if len(order) != len(stencils):
        left = {n for n in stencils if n not in order}
        cycle = _find_cycle(deps, left)
        raise StencilFlowError(
            f"program '{prog}': stencils form a cycle {' -> '.join(cycle)}; a StencilFlow program must be a DAG"
        )
    return {n: stencils[n] for n in order}


def _find_cycle(deps: Mapping[str, list[str]], left: set[str]) -> list[str]:
    start = min(left)
    path = [start]
    seen = {start}
    cur = start
    while True:
        nxt = min(f for f in deps[cur] if f in left)
        if nxt in seen:
            return path[path.index(nxt):] + [nxt]
        path.append(nxt)
        seen.add(nxt)
        cur = nxt


def _warn_unused(prog: Program) -> None:
    cons = prog.consumers()
    for n, users in cons.items():
        if not users and n not in prog.outputs:
            what = "input '%s' is never read" if n in prog.inputs else "stencil '%s' is neither read nor an output"
            log.warning("program '%s': " + what, prog.name, n)

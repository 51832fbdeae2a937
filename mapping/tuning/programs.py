"""Stencil programs as tuning targets, and fusion of consecutive calls into one GT4Py stencil.

``stratoflow tune search PROGRAM`` tunes a :class:`stencils.program.StencilProgram` as a unit.
Besides the per-stencil knobs (backend, flags, OIR passes, SDFG transformations, OpenMP), a
program's schedule has a fusion knob, ``fuse``: the sizes of consecutive groups of calls, each
group merged into ONE GTScript stencil (``(2, 1)``: calls 0 and 1 fused, call 2 alone; empty:
no fusion). The merge is done at the GTScript level (:class:`FusedDefinition`): the calls'
``with computation`` blocks are concatenated in program order, stencil parameters renamed to
the program fields they are bound to, each call's local temporaries prefixed, and program
temporaries that do not leave the group become GT4Py temporaries (never stored in memory as
program fields, and open to GT4Py's own fusion passes such as ``OnTheFlyMerging``). The fused
stencil is then built like any other, on any backend, with the schedule's other knobs, and is
validated against the unfused program on the numpy backend before it counts.

A program is named by ``module:attribute`` (a ``StencilProgram`` or a function without
arguments returning one) or by the name of one of :data:`EXAMPLE_PROGRAMS`.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.util
import inspect
import itertools
import logging
import sys
import textwrap
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mapping.tuning.errors import TuningError
from mapping.tuning.schedule import Schedule

log = logging.getLogger(__name__)


# -- example programs ------------------------------------------------------------------------
def biharmonic() -> Any:
    """Laplacian of the Laplacian (2 calls): the textbook fusion candidate."""
    from stencils.library.laplacian import laplacian_2d
    from stencils.program import StencilProgram

    prog = StencilProgram("biharmonic", inputs=["a"], outputs=["b"], temporaries=["t"])
    prog.add(laplacian_2d, label="lap1", in_field="a", out_field="t")
    prog.add(laplacian_2d, label="lap2", in_field="t", out_field="b")
    return prog


def smooth_advect() -> Any:
    """Jacobi smoothing, COSMO horizontal diffusion, then upwind advection (3 calls)."""
    from stencils.library.hdiff import hdiff
    from stencils.library.jacobi import jacobi_2d
    from stencils.library.upwind import upwind_advection
    from stencils.program import StencilProgram

    prog = StencilProgram(
        "smooth_advect", inputs=["phi", "coeff", "cx", "cy"], outputs=["out"], temporaries=["s", "d"]
    )
    prog.add(jacobi_2d, label="smooth", in_field="phi", out_field="s")
    prog.add(hdiff, label="diffuse", in_field="s", coeff="coeff", out_field="d")
    prog.add(upwind_advection, label="advect", phi="d", cx="cx", cy="cy", phi_new="out")
    return prog


#: Programs that ``stratoflow tune search`` knows by a short name.
EXAMPLE_PROGRAMS: dict[str, Callable[[], Any]] = {
    "biharmonic": biharmonic,
    "smooth_advect": smooth_advect,
}


# -- the program's calls -----------------------------------------------------------------------
@dataclass(frozen=True)
class ProgramCall:
    """One call of a program: its definition, externals and bindings (public program API)."""

    label: str
    definition: Callable[..., None]
    externals: Mapping[str, Any]
    bindings: Mapping[str, str]  # stencil field parameter -> program field
    scalars: Mapping[str, Any]
    reads: frozenset[str]  # program fields read
    writes: frozenset[str]  # program fields written


class _Recorder:
    """Stands in for a StencilFactory in ``StencilProgram.build``: records what it is asked for."""

    backend = "numpy"

    def __init__(self) -> None:
        self.calls: list[tuple[Callable[..., None], dict[str, Any], str]] = []

    def __call__(self, definition: Callable[..., None], externals: Any = None, name: str = "") -> None:
        self.calls.append((definition, dict(externals or {}), name))


def program_calls(program: Any) -> list[ProgramCall]:
    recorder = _Recorder()
    program.build(recorder)
    out = []
    for (definition, externals, label), acc in zip(recorder.calls, program.accesses()):
        out.append(
            ProgramCall(
                label=label, definition=definition, externals=externals,
                bindings=dict(acc.bindings), scalars=dict(acc.scalars),
                reads=frozenset(acc.reads), writes=frozenset(acc.writes),
            )
        )  # fmt: skip
    return out


def partitions(n: int) -> list[tuple[int, ...]]:
    """Every split of ``n`` consecutive calls into groups, as group sizes; ``()`` = no fusion."""
    out: list[tuple[int, ...]] = [()]
    for cuts in itertools.product((False, True), repeat=n - 1):
        sizes, run = [], 1
        for cut in cuts:
            if cut:
                sizes.append(run)
                run = 1
            else:
                run += 1
        sizes.append(run)
        if len(sizes) < n:  # all singletons is the same as no fusion
            out.append(tuple(sizes))
    return out


def groups_of(fuse: Sequence[int], n: int) -> list[list[int]]:
    if not fuse:
        return [[i] for i in range(n)]
    if sum(fuse) != n or min(fuse) < 1:
        raise TuningError(f"schedule fuse={list(fuse)} does not split the program's {n} calls into groups")
    it = iter(range(n))
    return [[next(it) for _ in range(size)] for size in fuse]


# -- fusion at the GTScript level --------------------------------------------------------------
def _annotations(definition: Callable[..., None]) -> dict[str, Any]:
    from stencils.gt4py_internals import evaluated_annotations

    return evaluated_annotations(definition)


def _function_def(definition: Callable[..., None]) -> ast.FunctionDef:
    tree = ast.parse(textwrap.dedent(inspect.getsource(definition)))
    fn = tree.body[0]
    if not isinstance(fn, ast.FunctionDef):
        raise TuningError(f"cannot fuse {definition.__name__!r}: its source is not a plain function")
    return fn


class _Renamer(ast.NodeTransformer):
    def __init__(self, names: Mapping[str, str]) -> None:
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.Name:
        if node.id in self.names:
            return ast.copy_location(ast.Name(id=self.names[node.id], ctx=node.ctx), node)
        return node


class FusedDefinition:
    """One GTScript definition computing a group of consecutive program calls.

    ``FusedDefinition(program_name, calls, params, cache_dir)``: ``params`` are the program
    fields the fused stencil takes as arguments (the others it writes are GT4Py temporaries).
    ``.definition`` is the importable function, ``.externals`` the merged externals, and
    ``.scalar_args(call_index)`` maps the fused scalar parameters to the calls' values.
    """

    def __init__(
        self, program_name: str, calls: Sequence[ProgramCall], params: Sequence[str], cache_dir: Path
    ) -> None:
        self.externals: dict[str, Any] = {}
        namespace: dict[str, Any] = {}
        annotations: dict[str, Any] = {}
        externals_imported: list[str] = []
        body: list[ast.stmt] = []
        self.scalar_values: dict[str, Any] = {}
        labels = "+".join(c.label for c in calls)
        for idx, call in enumerate(calls):
            where = f"fusing {labels} of program {program_name!r}: call {call.label!r}"
            for key, value in call.externals.items():
                if key in self.externals and self.externals[key] != value:
                    raise TuningError(f"{where}: external {key!r} differs between the fused calls")
                self.externals[key] = value
            for key, value in vars(inspect.getmodule(call.definition)).items():
                if key.startswith("__") or key in namespace and namespace[key] is not value:
                    continue
                namespace[key] = value
            ann = _annotations(call.definition)
            fn = _function_def(call.definition)
            fn_params = [a.arg for a in fn.args.args]
            rename: dict[str, str] = {}
            for p in fn_params:
                if p in call.bindings:
                    target = call.bindings[p]
                    rename[p] = target
                    if target in annotations and repr(annotations[target]) != repr(ann[p]):
                        raise TuningError(f"{where}: program field {target!r} has two field types")
                    annotations[target] = ann[p]
                else:
                    rename[p] = f"c{idx}_{p}"
                    annotations[rename[p]] = ann.get(p, float)
                    self.scalar_values[rename[p]] = call.scalars[p]
            stmts = [
                s for s in fn.body
                if not (isinstance(s, ast.Expr) and isinstance(getattr(s, "value", None), ast.Constant))
            ]  # fmt: skip
            kept = []
            for s in stmts:
                if isinstance(s, ast.ImportFrom) and s.module in ("__externals__", "__gtscript__"):
                    externals_imported += [f"{s.module}:{a.name}" for a in s.names]
                else:
                    kept.append(s)
            stored = {
                n.id for s in kept for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
            }
            for local in stored - set(fn_params):
                rename[local] = f"c{idx}_{local}"
            clash = {v for k, v in rename.items() if k in call.bindings and v in namespace}
            if clash:
                raise TuningError(f"{where}: program fields {sorted(clash)} shadow module names")
            body += [_Renamer(rename).visit(s) for s in kept]
        imports: list[ast.stmt] = []
        for module in ("__gtscript__", "__externals__"):
            names = sorted({e.split(":")[1] for e in externals_imported if e.startswith(module + ":")})
            if names:
                imports.append(ast.ImportFrom(module=module, names=[ast.alias(name=n) for n in names], level=0))
        arg_names = list(params) + sorted(self.scalar_values)
        missing = [p for p in params if p not in annotations]
        if missing:
            raise TuningError(f"fusing {labels}: program fields {missing} are not bound by these calls")
        fn_name = "fused_" + "_".join(c.label for c in calls)
        func = ast.FunctionDef(
            name=fn_name,
            args=ast.arguments(
                posonlyargs=[], args=[ast.arg(arg=a, annotation=ast.Name(id=f"__ann_{a}", ctx=ast.Load())) for a in arg_names],
                kwonlyargs=[], kw_defaults=[], defaults=[],
            ),
            body=imports + body, decorator_list=[], returns=None,
        )  # fmt: skip
        source = (
            f'"""Generated by mapping.tuning.programs: calls {labels} of program {program_name}."""\n\n'
            + ast.unparse(ast.fix_missing_locations(ast.Module(body=[func], type_ignores=[])))
            + "\n"
        )
        digest = hashlib.sha256(source.encode()).hexdigest()[:12]
        mod_name = f"stratoflow_fused_{fn_name}_{digest}"
        path = Path(cache_dir) / "fused" / f"{mod_name}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text() != source:
            tmp = path.with_suffix(f".{digest}.tmp")
            tmp.write_text(source)
            tmp.replace(path)
        spec = importlib.util.spec_from_file_location(mod_name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        module.__dict__.update(namespace)
        module.__dict__.update({f"__ann_{a}": annotations[a] for a in arg_names})
        sys.modules[mod_name] = module
        spec.loader.exec_module(module)
        self.source = source
        self.definition: Callable[..., None] = getattr(module, fn_name)
        self.params = tuple(params)


# -- program targets ---------------------------------------------------------------------------
@dataclass(frozen=True)
class ProgramTarget:
    """A stencil program to tune as a unit (same interface as a TuningTarget where it matters)."""

    name: str
    program: Any = field(repr=False)
    calls: tuple[ProgramCall, ...] = field(repr=False)
    halo: int
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    params: Mapping[str, float] = field(default_factory=dict)
    externals: Mapping[str, Any] = field(default_factory=dict)
    field_axes: Mapping[str, str] = field(default_factory=dict)  # program fields are all IJK

    def domain(self, nx: int, ny: int, nz: int) -> Any:
        from stencils.storage import Domain

        return Domain(nx, ny, nz, self.halo)

    def allocate(self, domain: Any, seed: int = 0) -> dict[str, np.ndarray]:
        from stencils.library.base import smooth_field

        rng = np.random.default_rng(seed)
        arrays = {name: smooth_field(domain, rng) + 2.0 for name in self.inputs}
        for name in self.program.temporaries + self.outputs:
            arrays[name] = np.zeros(domain.shape, dtype=np.float64)
        return arrays

    def space(self, base: Sequence[Schedule]) -> list[Schedule]:
        """``base`` (a stencil space) times every fusion of consecutive calls."""
        out = []
        for fuse in partitions(len(self.calls)):
            for s in base:
                out.append(Schedule(s.backend, s.opt_flags, s.oir_skip, s.sdfg, s.threads,
                                    s.proc_bind, s.wait_policy, s.label, fuse=fuse))  # fmt: skip
        return out


def is_program(obj: Any) -> bool:
    from stencils.program import StencilProgram

    return isinstance(obj, StencilProgram)


def load_program(name: str) -> Any | None:
    """The StencilProgram called ``name`` (example name or module:attribute), or None if ``name``
    names something else (a stencil)."""
    if name in EXAMPLE_PROGRAMS:
        return EXAMPLE_PROGRAMS[name]()
    if ":" not in name or "[" in name:
        return None
    mod_name, attr = name.split(":", 1)
    try:
        obj = getattr(importlib.import_module(mod_name), attr)
    except (ImportError, AttributeError):
        return None
    if is_program(obj):
        return obj
    if callable(obj) and not inspect.signature(obj).parameters and not inspect.isclass(obj):
        try:
            made = obj()
        except Exception as exc:
            raise TuningError(f"program factory {name!r} failed: {type(exc).__name__}: {exc}") from exc
        if is_program(made):
            return made
    return None


def program_target(name: str, program: Any) -> ProgramTarget:
    try:
        halo = max(program.required_halo().values(), default=0)
    except Exception as exc:
        raise TuningError(f"program {name!r} is not complete: {exc}") from exc
    return ProgramTarget(
        name=name, program=program, calls=tuple(program_calls(program)), halo=max(halo, 1),
        inputs=tuple(program.inputs), outputs=tuple(program.outputs),
    )  # fmt: skip


# -- building and running a scheduled program --------------------------------------------------
def _union(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(max(x, y) for x, y in zip(a, b))


def group_fields(target: ProgramTarget, group: Sequence[int]) -> tuple[set[str], set[str]]:
    """(program fields the calls of ``group`` use, those of them that stay inside the group):
    written by the group, neither a program input/output nor read outside the group, so a
    fused stencil keeps them as GT4Py temporaries."""
    calls = target.calls
    members = [calls[i] for i in group]
    later = {f for c in calls[group[-1] + 1:] for f in c.reads | c.writes}
    earlier_or_io = set(target.inputs) | set(target.outputs)
    used = {f for c in members for f in set(c.bindings.values())}
    written = {f for c in members for f in c.writes}
    internal = {
        f for f in written
        if f not in later and f not in earlier_or_io
        and not any(f in c.reads for c in calls[: group[0]])
    }  # fmt: skip
    return used, internal


def group_params(target: ProgramTarget, used: set[str], internal: set[str]) -> list[str]:
    """The program fields a fused group takes as arguments, in program field order."""
    return sorted(used - internal, key=lambda f: target.program.fields.index(f))


def fused_program(program: Any, fuse: Sequence[int], cache_dir: str | Path, name: str | None = None) -> Any:
    """``program`` rewritten as a :class:`stencils.program.StencilProgram` whose calls are the
    groups of ``fuse``: a group of one keeps its call, a larger group becomes ONE call of its
    :class:`FusedDefinition` (fields internal to the group are not temporaries of the rewritten program).
    ``run`` of the result computes what ``program.run`` computes; ``()`` returns ``program``."""
    if not fuse:
        return program
    from stencils.program import StencilProgram

    target = program_target(name or program.name, program)
    groups = groups_of(fuse, len(target.calls))
    plan = []
    internal_all: set[str] = set()
    for group in groups:
        used, internal = group_fields(target, group)
        if len(group) > 1:  # a call left alone keeps every field it is bound to
            internal_all |= internal
        plan.append((group, used, internal))
    labels = ["+".join(target.calls[i].label for i in group) for group in groups]
    out = StencilProgram(
        f"{program.name}[fuse={'+'.join(map(str, fuse))}]",
        inputs=program.inputs, outputs=program.outputs,
        temporaries=[t for t in program.temporaries if t not in internal_all],
    )  # fmt: skip
    for (group, used, internal), label in zip(plan, labels):
        members = [target.calls[i] for i in group]
        if len(members) == 1:
            c = members[0]
            out.add(c.definition, label=c.label, externals=c.externals, **c.bindings, **c.scalars)
            continue
        fused = FusedDefinition(target.name, members, group_params(target, used, internal), Path(cache_dir))
        out.add(
            fused.definition, label=label, externals=fused.externals,
            **{f: f for f in fused.params}, **fused.scalar_values,
        )  # fmt: skip
    return out


def fusion_options(n_calls: int, schedules: Sequence[Schedule] = ()) -> list[tuple[int, ...]]:
    """Fusions transfer tries on a program of ``n_calls`` calls: none, all calls in one stencil,
    and the fusions of ``schedules`` (neighbour programs' bests) that split ``n_calls`` calls."""
    out: list[tuple[int, ...]] = [()]
    if n_calls > 1:
        out.append((n_calls,))
    for s in schedules:
        if s.fuse and sum(s.fuse) == n_calls and s.fuse not in out:
            out.append(s.fuse)
    return out


class ProgramRunner:
    """A program built with one schedule: ``ProgramRunner(target, schedule, cache_dir, compile)``
    builds each (fused) group with ``compile(definition, externals) -> (stencil, compiled)``;
    ``runner(fields, domain)`` runs the groups in order."""

    def __init__(
        self,
        target: ProgramTarget,
        schedule: Schedule,
        cache_dir: str | Path,
        compile_fn: Callable[[Callable[..., None], Mapping[str, Any]], tuple[Any, bool]],
    ) -> None:
        t0 = time.perf_counter()
        calls = target.calls
        extents = target.program.compute_extents()
        groups = groups_of(schedule.fuse, len(calls))
        self.compiled = False
        self.groups: list[tuple[Any, tuple[int, ...], dict[str, str], dict[str, Any]]] = []
        for gi, group in enumerate(groups):
            members = [calls[i] for i in group]
            used, internal = group_fields(target, group)
            exported = {f for c in members for f in c.writes} - internal
            ext = (0, 0, 0, 0)
            for i in group:
                if calls[i].writes & exported:
                    ext = _union(ext, extents[i])
            if len(members) == 1:
                call = members[0]
                stencil, compiled = compile_fn(call.definition, call.externals)
                args = {p: f for p, f in call.bindings.items()}
                scalars = dict(call.scalars)
            else:
                fused = FusedDefinition(target.name, members, group_params(target, used, internal), Path(cache_dir))
                stencil, compiled = compile_fn(fused.definition, fused.externals)
                args = {f: f for f in fused.params}
                scalars = dict(fused.scalar_values)
            self.compiled |= compiled
            self.groups.append((stencil, ext, args, scalars))
            log.debug("program %s group %d: calls %s, extent %s", target.name, gi, group, ext)
        self.seconds = time.perf_counter() - t0

    def __call__(self, fields: Mapping[str, Any], domain: Any) -> None:
        h = domain.halo
        for stencil, (ilo, ihi, jlo, jhi), args, scalars in self.groups:
            stencil(
                **{p: fields[f] for p, f in args.items()}, **scalars,
                origin=(h - ilo, h - jlo, 0), domain=(domain.nx + ilo + ihi, domain.ny + jlo + jhi, domain.nz),
                validate_args=False,
            )  # fmt: skip

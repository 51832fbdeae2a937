"""Run specs: YAML workflows validated by pydantic, swept, hashed.

A spec names a workflow and its steps. Each step has a ``kind`` (see
:mod:`workflows.kinds`) and kind-specific parameters; a step can ``sweep`` some of its
parameters (every combination becomes one step instance) and depend on earlier steps
(``after``, or the kind's input fields such as ``data_from``). Any value that can reach a
command line is restricted to a safe character set, so a spec cannot inject shell.

The canonical hash of a spec (sorted-key JSON of the validated model, descriptions left
out) identifies its run: ``runs/<name>-<hash[:10]>/``.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    Strict,
    ValidationError,
    model_serializer,
    model_validator,
)

from stencils.errors import InputFileError
from stencils.textfile import read_text
from workflows.errors import SpecError

# --- safe scalar types -------------------------------------------------------------------

NAME_PATTERN = r"^[A-Za-z][A-Za-z0-9_-]{0,63}$"
_SAFE_ARG = re.compile(r"^[A-Za-z0-9_.,:=+/@%{}-]*$")
SAFE_ARG_CHARS = "letters, digits and _ . , : = + - / @ % { }"


def _safe_arg(value: str) -> str:
    if not _SAFE_ARG.match(value):
        bad = sorted({c for c in value if not _SAFE_ARG.match(c)})
        shown = ", ".join(repr(c) for c in bad)
        raise ValueError(
            f"value {value!r} contains characters that could reach a shell ({shown}); "
            f"allowed: {SAFE_ARG_CHARS} (split arguments into list items instead of spaces)"
        )
    return value


def _safe_name(value: str) -> str:
    if not re.match(NAME_PATTERN, value):
        raise ValueError(
            f"name {value!r} must start with a letter and contain only letters, digits, "
            "'_' and '-' (at most 64 characters)"
        )
    return value


Name = Annotated[str, AfterValidator(_safe_name)]
Arg = Annotated[str, AfterValidator(_safe_arg)]
Backend = Literal[
    "numpy",
    "debug",
    "gt:cpu_ifirst",
    "gt:cpu_kfirst",
    "dace:cpu",
    "dace:cpu_kfirst",
    "dace:cpu_KJI",
    "gt:gpu",
    "dace:gpu",
    "cuda",
]
Scalar = int | float | bool | Arg
# Numbers and switches are strict: YAML's ``yes``/``true`` is not a number, "24" is not an int.
Int = Annotated[int, Strict()]
Float = Annotated[float, Strict()]  # an int is a float too
Bool = Annotated[bool, Strict()]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# --- steps ---------------------------------------------------------------------------------


class StepBase(_Model):
    """Fields every step kind has."""

    name: Name
    description: str = ""
    after: tuple[Name, ...] = ()
    retries: Int | None = Field(default=None, ge=0, le=10)
    sweep: dict[str, list[Scalar]] = Field(default_factory=dict)

    # fields naming other steps whose outputs this step reads (overridden by kinds)
    input_fields: ClassVar[tuple[str, ...]] = ()
    # the kinds of step each input field may name (a field not listed may name any step)
    input_kinds: ClassVar[dict[str, tuple[str, ...]]] = {}
    # fields holding paths of input files, checked for existence and hashed by content
    path_fields: ClassVar[tuple[str, ...]] = ()

    def file_fields(self) -> tuple[str, ...]:
        """The path fields of this step that name files (checked, resolved, hashed)."""
        return self.path_fields

    def check_inputs(self) -> None:
        """Check the content of the step's input files once their paths are resolved (called
        by :func:`parse_spec` for every step instance); raises ValueError naming the problem."""

    @model_validator(mode="after")
    def _check_sweep(self) -> StepBase:
        fixed = {"name", "kind", "description", "after", "retries", "sweep"}
        allowed = sorted(set(type(self).model_fields) - fixed)
        for key, values in self.sweep.items():
            if key not in allowed:
                raise ValueError(
                    f"sweep key {key!r} is not a parameter of kind {self.kind!r}; "  # type: ignore[attr-defined]
                    f"allowed: {', '.join(allowed)}"
                )
            if not values:
                raise ValueError(f"sweep key {key!r} needs a non-empty list of values")
        return self

    def inputs(self) -> list[str]:
        """Names of the steps whose outputs this step reads."""
        names: list[str] = []
        for f in self.input_fields:
            value = getattr(self, f)
            if value is None:
                continue
            names.extend([value] if isinstance(value, str) else list(value))
        return names


class CommandStep(StepBase):
    """Run an argument vector (never through a shell). ``{out}`` is the step's output
    folder, ``{input.NAME}`` the output folder of step NAME (which becomes a dependency)."""

    kind: Literal["command"]
    argv: tuple[Arg, ...] = Field(min_length=1)
    ranks: Int = Field(default=1, ge=1, le=1024)

    @model_validator(mode="after")
    def _check_placeholders(self) -> CommandStep:
        for i, arg in enumerate(self.argv):
            for ref in re.findall(r"{([^{}]*)}", arg):
                name = ref.removeprefix("input.")
                if ref != "out" and not (ref.startswith("input.") and name in self.after):
                    raise ValueError(
                        f"argv[{i}]: unknown placeholder {{{ref}}}; allowed: {{out}} and "
                        "{input.NAME} for a step NAME listed in 'after'"
                    )
        return self


class MPIStep(StepBase):
    """Run a Python script (mpi4py) on ``ranks`` MPI ranks with the site's MPI launcher."""

    kind: Literal["mpi"]
    script: Path
    args: tuple[Arg, ...] = ()
    ranks: Int = Field(default=2, ge=1, le=1024)
    path_fields: ClassVar[tuple[str, ...]] = ("script",)


class StencilsDemoStep(StepBase):
    """Compile, run and verify the stencil library (``stratoflow stencils demo``)."""

    kind: Literal["stencils_demo"]
    backend: Backend | None = None


class FV3Step(StepBase):
    """An FV3 dynamical-core case on 6 * layout**2 MPI ranks (``stratoflow fv3 run``).

    ``case``: one of ``fv3core.config.CASES``. ``tuning_db``: a tuning database whose applied
    schedules the run builds its stencils with (``stratoflow fv3 run --tuning-db``); without
    it every stencil is built with ``backend``. ``namelist``: an FV3 Fortran namelist
    (``input.nml``) that gives the run (``stratoflow fv3 run --namelist``, refused at spec
    time if fv3core cannot read or run it); then ``case``, ``resolution``, ``layout`` and
    ``days`` come from the namelist unless the step sets them (an override). Without a
    namelist they default to williamson2, 24, 1 and 1.0.  ``levels``: the 3-D cases' layers
    (``stratoflow fv3 run --levels``, FV3's npz; default 26); ``hydrostatic``: false runs the
    3-D cases on FV3's non-hydrostatic core (``--non-hydrostatic``; default: hydrostatic, or
    the namelist's)."""

    kind: Literal["fv3"]
    case: Arg | None = None
    resolution: Int | None = Field(default=None, ge=4, le=4096)
    layout: Int | None = Field(default=None, ge=1, le=16)
    days: Float | None = Field(default=None, gt=0, le=1000)
    levels: Int | None = Field(default=None, ge=5, le=200)
    hydrostatic: Bool | None = None
    backend: Backend = "numpy"
    warm_cache: Bool = True
    tuning_db: Path | None = None
    namelist: Path | None = None
    path_fields: ClassVar[tuple[str, ...]] = ("tuning_db", "namelist")
    #: the run without a namelist
    DEFAULTS: ClassVar[dict[str, Any]] = {"case": "williamson2", "resolution": 24, "layout": 1,
                                          "days": 1.0}  # fmt: skip
    #: the fields that override a namelist's settings (``stratoflow fv3 run`` options)
    OVERRIDES: ClassVar[tuple[str, ...]] = ("case", "resolution", "layout", "days", "levels", "hydrostatic")

    @model_validator(mode="before")
    @classmethod
    def _defaults_without_namelist(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("namelist") is None:
            unset = {k: v for k, v in cls.DEFAULTS.items() if data.get(k) is None}
            data = {**data, **unset}
        return data

    @model_serializer(mode="wrap")
    def _without_unset_namelist(self, handler: Any) -> dict[str, Any]:
        # a step without a namelist or levels dumps (and hashes) as before those fields existed
        data = handler(self)
        for key in ("namelist", "levels", "hydrostatic"):
            if data.get(key, "") is None:
                del data[key]
        return data

    def file_fields(self) -> tuple[str, ...]:
        return tuple(f for f in self.path_fields if getattr(self, f) is not None)

    @model_validator(mode="after")
    def _check_case(self) -> FV3Step:
        from fv3core.config import CASES

        if self.case is not None and self.case not in CASES:
            raise ValueError(
                f"step {self.name}: FV3 case {self.case!r} is not one fv3core runs; "
                f"cases: {', '.join(CASES)}"
            )
        return self

    def overrides(self) -> dict[str, Any]:
        """The FV3Config keys the step sets itself (all of OVERRIDES without a namelist)."""
        return {k: getattr(self, k) for k in self.OVERRIDES if getattr(self, k) is not None}

    def fv3_config(self) -> Any:
        """The ``fv3core.config.FV3Config`` the step runs (reads the namelist, if any)."""
        from fv3core.config import FV3Config

        values = {**self.overrides(), "backend": self.backend}
        if "levels" in values:
            values["nz"] = values.pop("levels")
        if self.namelist is not None:
            return FV3Config.from_namelist(self.namelist, **values)
        return FV3Config.from_dict(values, source=f"step {self.name}")

    def check_inputs(self) -> None:
        """The run's FV3Config is valid (resolution divisible by layout, a namelist fv3core
        reads and runs), so every sweep combination is refused before anything runs."""
        from fv3core.errors import FV3ConfigError

        if self.tuning_db is not None:  # a tuning database, not a folder or another database
            from mapping.tuning.db import KIND
            from stencils.dbfile import identify
            from stencils.errors import DatabaseIdentityError

            if self.tuning_db.is_dir():
                raise ValueError(f"tuning_db: {self.tuning_db} is a folder, not a tuning database file")
            try:
                identify(self.tuning_db, KIND)
            except DatabaseIdentityError as exc:
                raise ValueError(f"tuning_db: {exc}") from None
        try:
            self.fv3_config()
        except FV3ConfigError as exc:
            msg = str(exc).removeprefix(f"step {self.name}: ")  # the caller names the step
            raise ValueError(f"namelist: {msg}" if self.namelist is not None else msg) from None

    @property
    def ranks(self) -> int:
        layout = self.layout if self.layout is not None else self.fv3_config().layout
        return 6 * layout**2


#: a program ``stratoflow map`` generates itself instead of reading a file
GENERATED_PROGRAM = re.compile(r"^(library|synthetic):[A-Za-z0-9_]+(:[0-9]+){0,2}$")


class MapStep(StepBase):
    """Map a stencil-program DAG with StencilFlow and simulate it (``stratoflow map``).

    ``program`` is a StencilFlow JSON file, ``library:NAME[:SIZE]`` (a GTScript stencil of
    ``stencils.library`` translated through its GTIR) or ``synthetic:KIND:N[:SIZE]``."""

    kind: Literal["map"]
    program: Path | Annotated[str, Field(pattern=GENERATED_PROGRAM.pattern)]
    devices: Int = Field(default=1, ge=1, le=64)
    simulate: Bool = True
    path_fields: ClassVar[tuple[str, ...]] = ("program",)

    def file_fields(self) -> tuple[str, ...]:
        return () if GENERATED_PROGRAM.match(str(self.program)) else self.path_fields


class TuneStep(StepBase):
    """Tune one stencil's schedule (``stratoflow tune search|transfer``). A ``transfer`` step
    starts from the tuning database of the ``search`` step named in ``db_from``."""

    kind: Literal["tune"]
    stencil: Arg = "hdiff"
    mode: Literal["search", "transfer"] = "transfer"
    space: Literal["tiny", "compact", "full"] = "tiny"
    k: Int = Field(default=1, ge=1, le=64)
    domain: Arg | None = Field(default=None, pattern=r"^\d+,\d+,\d+$")
    db_from: Name | None = None
    input_fields: ClassVar[tuple[str, ...]] = ("db_from",)
    input_kinds: ClassVar[dict[str, tuple[str, ...]]] = {"db_from": ("tune",)}

    @model_validator(mode="after")
    def _check_domain(self) -> TuneStep:
        from mapping.tuning.records import parse_domain  # the check of `tune --domain`

        if self.domain is not None:
            parse_domain(self.domain)
        return self

    @model_validator(mode="after")
    def _transfer_needs_db(self) -> TuneStep:
        if self.mode == "transfer" and self.db_from is None:
            raise ValueError(
                "db_from: a transfer step needs the name of a 'search' tune step whose "
                "tuning database it transfers from"
            )
        return self


class ENS10SampleStep(StepBase):
    """Write the ENS-10 sample data set (``ens10.sample.make_sample``)."""

    kind: Literal["ens10_sample"]
    grid: Float = Field(default=5.0, gt=0, description="grid spacing in degrees")
    years: str = Field(default="1998-2017", pattern=r"^\d{4}-\d{4}$")
    n_dates: Int = Field(default=20, ge=1, le=105)
    layouts: tuple[Literal["grib", "netcdf"], ...] = ("netcdf",)

    @model_validator(mode="after")
    def _check_grid(self) -> ENS10SampleStep:
        from ens10.errors import ENS10DataError
        from ens10.grid import FINEST_GRID, check_grid  # the check of `ens10 make-sample --grid`

        try:
            check_grid(self.grid, finest=FINEST_GRID)
        except ENS10DataError as exc:
            raise ValueError(f"grid: {exc}") from None
        return self


class ENS10TrainStep(StepBase):
    """Train one ENS-10 baseline (``ens10.train.train``) on a sample step's data."""

    kind: Literal["ens10_train"]
    model: Literal["emos", "mlp", "lenet", "unet", "transformer"]
    target: Literal["t2m", "z500", "t850"] = "t2m"
    epochs: Int = Field(default=5, ge=1, le=10000)
    data_from: Name
    input_fields: ClassVar[tuple[str, ...]] = ("data_from",)
    input_kinds: ClassVar[dict[str, tuple[str, ...]]] = {"data_from": ("ens10_sample",)}


class ENS10EvaluateStep(StepBase):
    """Evaluate trained ENS-10 baselines (``ens10.evaluate.evaluate``): CRPS, EECRPS..."""

    kind: Literal["ens10_evaluate"]
    data_from: Name
    models_from: tuple[Name, ...] = Field(min_length=1)
    input_fields: ClassVar[tuple[str, ...]] = ("data_from", "models_from")
    input_kinds: ClassVar[dict[str, tuple[str, ...]]] = {
        "data_from": ("ens10_sample",), "models_from": ("ens10_train",),
    }  # fmt: skip


STEP_MODELS: tuple[type[StepBase], ...] = (
    CommandStep,
    MPIStep,
    StencilsDemoStep,
    FV3Step,
    MapStep,
    TuneStep,
    ENS10SampleStep,
    ENS10TrainStep,
    ENS10EvaluateStep,
)
KIND_MODELS: dict[str, type[StepBase]] = {
    m.model_fields["kind"].annotation.__args__[0]: m  # type: ignore[union-attr]
    for m in STEP_MODELS
}

Step = Annotated[
    CommandStep
    | MPIStep
    | StencilsDemoStep
    | FV3Step
    | MapStep
    | TuneStep
    | ENS10SampleStep
    | ENS10TrainStep
    | ENS10EvaluateStep,
    Field(discriminator="kind"),
]


class WorkflowSpec(_Model):
    """A workflow: named steps, run in dependency order, each retried on failure."""

    name: Name
    description: str = ""
    retries: Int = Field(default=1, ge=0, le=10)
    backoff_s: Float = Field(default=1.0, ge=0, le=600)
    steps: tuple[Step, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _check_graph(self) -> WorkflowSpec:
        names = [s.name for s in self.steps]
        seen: set[str] = set()
        for i, step in enumerate(self.steps):
            if step.name in seen:
                raise ValueError(f"steps[{i}].name: step name {step.name!r} is used twice")
            for ref in (*step.after, *step.inputs()):
                if ref == step.name:
                    raise ValueError(
                        f"steps[{i}] ({step.name}): depends on itself ({ref!r} in "
                        f"{'after' if ref in step.after else 'its inputs'}); a step can only "
                        "depend on other steps: remove it"
                    )
                if ref not in names:
                    raise ValueError(
                        f"steps[{i}] ({step.name}): refers to unknown step {ref!r}; "
                        f"known steps: {', '.join(n for n in names if n != step.name)}"
                    )
            seen.add(step.name)
        kinds = {s.name: s.kind for s in self.steps}  # type: ignore[attr-defined]
        for i, step in enumerate(self.steps):
            for f, allowed in step.input_kinds.items():
                value = getattr(step, f)
                for ref in [value] if isinstance(value, str) else list(value or ()):
                    if kinds[ref] not in allowed:
                        raise ValueError(
                            f"steps[{i}] ({step.name}).{f}: step {ref!r} is a {kinds[ref]!r} "
                            f"step; {f} must name a step of kind {' or '.join(allowed)}"
                        )
        _toposort({s.name: set(s.after) | set(s.inputs()) for s in self.steps})
        return self

    def canonical_json(self) -> str:
        data = self.model_dump(mode="json", exclude={"description"})
        for step in data["steps"]:
            step.pop("description", None)
        return json.dumps(data, sort_keys=True, separators=(",", ":"))

    @property
    def hash(self) -> str:
        return hashlib.sha256(self.canonical_json().encode()).hexdigest()

    @property
    def run_id(self) -> str:
        return f"{self.name}-{self.hash[:10]}"


def _toposort(deps: dict[str, set[str]]) -> list[str]:
    order: list[str] = []
    done: set[str] = set()
    pending = dict(deps)
    while pending:
        ready = [n for n, d in pending.items() if d <= done]  # spec order among the ready
        if not ready:
            raise ValueError(f"the steps {', '.join(sorted(pending))} depend on each other (cycle)")
        for n in ready:
            order.append(n)
            done.add(n)
            del pending[n]
    return order


# --- step instances (after sweep expansion) -------------------------------------------------


@dataclass(frozen=True)
class StepInstance:
    """One concrete step to run: a step spec with its sweep values filled in."""

    id: str  # e.g. ``tc2`` or ``tc2[backend=numpy,resolution=24]``
    spec_name: str  # the step's ``name`` in the spec
    step: StepBase
    depends_on: tuple[str, ...] = field(default=())  # instance ids

    @property
    def dirname(self) -> str:
        if self.id == self.spec_name:
            return self.id
        safe = re.sub(r"[^A-Za-z0-9_.=-]+", "_", self.id.replace("[", ".").rstrip("]"))
        return safe


#: step instances a spec may expand to unless ``--max-steps`` or ``$STRATOFLOW_MAX_STEPS`` says
#: otherwise (a sweep's instances multiply; each one gets a folder and database rows)
DEFAULT_MAX_STEPS = 1000
MAX_STEPS_OPTION = "--max-steps N or $STRATOFLOW_MAX_STEPS"


def max_steps(value: int | None = None) -> int:
    """The bound on step instances: ``value``, else ``$STRATOFLOW_MAX_STEPS``, else
    :data:`DEFAULT_MAX_STEPS`."""
    if value is not None:
        return value
    text = os.environ.get("STRATOFLOW_MAX_STEPS", "").strip()
    if not text:
        return DEFAULT_MAX_STEPS
    if not text.isdigit() or int(text) < 1:
        raise SpecError(f"$STRATOFLOW_MAX_STEPS={text!r}: give a whole number >= 1")
    return int(text)


def instance_counts(spec: WorkflowSpec) -> dict[str, int]:
    """Step name -> how many instances its sweep expands to (counted, not expanded)."""
    return {s.name: math.prod(len(v) for v in s.sweep.values()) for s in spec.steps}


def check_size(spec: WorkflowSpec, limit: int | None = None, source: str = "<spec>") -> int:
    """The number of step instances of ``spec``; SpecError stating the count when it exceeds
    the bound (:func:`max_steps`), before anything is expanded or written."""
    counts = instance_counts(spec)
    total, bound = sum(counts.values()), max_steps(limit)
    if total > bound:
        biggest = sorted(counts.items(), key=lambda kv: -kv[1])[:3]
        shown = ", ".join(f"{name}: {n:,}" for name, n in biggest)
        raise SpecError(
            f"{source}: the spec expands to {total:,} step instances ({shown}), more than the "
            f"limit of {bound:,}: shorten the sweeps, split the spec, or raise the limit with "
            f"{MAX_STEPS_OPTION}"
        )
    return total


def expand(spec: WorkflowSpec, limit: int | None = None) -> list[StepInstance]:
    """Expand sweeps into step instances, in dependency order (at most :func:`max_steps`)."""
    check_size(spec, limit)
    by_name: dict[str, list[StepInstance]] = {}
    order = _toposort({s.name: set(s.after) | set(s.inputs()) for s in spec.steps})
    steps = {s.name: s for s in spec.steps}
    out: list[StepInstance] = []
    errors: list[str] = []
    for name in order:
        step = steps[name]
        deps = tuple(
            inst.id for ref in (*step.after, *step.inputs()) for inst in by_name[ref]
        )
        instances: list[StepInstance] = []
        if not step.sweep:
            instances.append(StepInstance(name, name, step, deps))
        else:
            keys = sorted(step.sweep)
            for combo in itertools.product(*(step.sweep[k] for k in keys)):
                data = step.model_dump(exclude={"sweep"}) | dict(zip(keys, combo))
                label = ",".join(f"{k}={v}" for k, v in zip(keys, combo))
                try:
                    concrete = type(step).model_validate(data)
                except ValidationError as exc:
                    msgs = "; ".join(
                        ".".join(map(str, e["loc"])) + ": " + _error_message(e) if e["loc"]
                        else _error_message(e)
                        for e in exc.errors()
                    )
                    errors.append(f"step {name}, sweep [{label}]: {msgs}")
                    continue
                instances.append(StepInstance(f"{name}[{label}]", name, concrete, deps))
        by_name[name] = instances
        out.extend(instances)
    if errors:
        raise SpecError("\n  ".join(errors))
    return out


_TYPE_ERRORS = {"int_type", "float_type", "bool_type", "string_type", "int_parsing", "float_parsing"}


def _error_message(err: Any) -> str:
    """A pydantic error's message, with the value given for a wrong type."""
    msg = err["msg"].removeprefix("Value error, ")
    if err["type"] in _TYPE_ERRORS:
        value = err.get("input")
        msg += f", got {value!r} ({type(value).__name__})"
        if isinstance(value, bool):
            msg += "; YAML reads yes/no/true/false/on/off as booleans"
    return msg


# --- loading -----------------------------------------------------------------------------------


def _format_loc(loc: Iterable[Any], data: Any) -> str:
    parts: list[str] = []
    node = data
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
            node = node[item] if isinstance(node, list | tuple) and item < len(node) else None
        elif isinstance(node, dict) and item in node:
            parts.append(f".{item}" if parts else str(item))
            node = node[item]
        elif item in KIND_MODELS:  # the union's tag in the location, not a key: name the step
            name = node.get("name") if isinstance(node, dict) else None
            parts.append(f" ({name}, kind {item})" if isinstance(name, str) else f" (kind {item})")
        else:
            parts.append(f".{item}" if parts else str(item))
            node = None
    return "".join(parts).replace(") .", ").") or "<top level>"


def _allowed_keys(loc: tuple[Any, ...], data: Any) -> str:
    model: type[BaseModel] = WorkflowSpec
    for item in loc[:-1]:
        if item in KIND_MODELS:
            model = KIND_MODELS[item]
    return ", ".join(model.model_fields)


def format_validation_error(exc: ValidationError, data: Any, source: str) -> str:
    lines = []
    errors = exc.errors()
    for err in errors:
        loc = tuple(err["loc"])
        if err["type"] == "too_short" and loc == ("steps",) and len(errors) > 1:
            continue  # the steps that failed validation are reported themselves
        where = _format_loc(loc, data)
        msg = _error_message(err)
        if err["type"] == "extra_forbidden":
            msg = f"unknown key; allowed keys: {_allowed_keys(loc, data)}"
        elif err["type"] == "union_tag_invalid":
            msg = f"unknown kind; allowed kinds: {', '.join(KIND_MODELS)}"
        elif err["type"] == "union_tag_not_found":
            msg = f"missing 'kind'; allowed kinds: {', '.join(KIND_MODELS)}"
        lines.append(msg if not loc else f"{where}: {msg}")
    return f"{source}: invalid spec:\n  " + "\n  ".join(lines)


def _resolve_file(value: Any, base: Path, where: str, errors: list[str]) -> Path | None:
    """``value`` as an absolute path under ``base``; appends to ``errors`` if it is missing or
    has characters that could reach a shell."""
    path = Path(value).expanduser()
    path = path if path.is_absolute() else base / path
    if not path.exists():
        errors.append(f"{where}: file not found: {path} (relative paths are relative to {base})")
        return None
    if not _SAFE_ARG.match(str(path)):
        errors.append(
            f"{where}: path {str(path)!r} contains characters that could reach a shell; "
            f"allowed: {SAFE_ARG_CHARS}"
        )
        return None
    return path


def _spec_error(source: str, errors: list[str]) -> SpecError:
    return SpecError(f"{source}: invalid spec:\n  " + "\n  ".join(errors))


def parse_spec(
    data: Any, source: str = "<spec>", base_dir: Path | None = None, limit: int | None = None
) -> WorkflowSpec:
    """Validate a spec given as plain data; relative paths are resolved against ``base_dir``.

    Every step instance (each sweep combination) is validated, and every problem found is
    reported in one SpecError: all missing files, all invalid combinations. A spec of more
    step instances than ``limit`` (:func:`max_steps`) is refused before it is expanded."""
    if not isinstance(data, dict):
        raise SpecError(f"{source}: a spec is a YAML mapping with 'name' and 'steps'")
    try:
        spec = WorkflowSpec.model_validate(data)
    except ValidationError as exc:
        raise SpecError(format_validation_error(exc, data, source)) from None
    check_size(spec, limit, source)
    base = (base_dir or Path.cwd()).resolve()
    errors: list[str] = []
    steps = []
    for i, step in enumerate(spec.steps):
        updates: dict[str, Any] = {}
        for f in step.file_fields():
            path = _resolve_file(getattr(step, f), base, f"steps[{i}] ({step.name}).{f}", errors)
            if path is not None:
                updates[f] = path
        sweep = dict(step.sweep)
        for key in set(sweep) & set(step.path_fields):  # swept files are files too
            values = []
            for j, value in enumerate(sweep[key]):
                if isinstance(step, MapStep) and GENERATED_PROGRAM.match(str(value)):
                    values.append(value)
                    continue
                where = f"steps[{i}] ({step.name}).sweep.{key}[{j}]"
                path = _resolve_file(value, base, where, errors)
                values.append(str(path) if path is not None else value)
            sweep[key] = values
        if sweep != step.sweep:
            updates["sweep"] = sweep
        steps.append(step.model_copy(update=updates) if updates else step)
    if errors:
        raise _spec_error(source, errors)
    spec = spec.model_copy(update={"steps": tuple(steps)})
    try:
        instances = expand(spec, limit)  # every sweep combination is a valid step
    except SpecError as exc:
        raise _spec_error(source, str(exc).split("\n  ")) from None
    index = {s.name: i for i, s in enumerate(spec.steps)}
    for inst in instances:
        try:
            inst.step.check_inputs()
        except ValueError as exc:
            where = f"steps[{index[inst.spec_name]}] ({inst.id})"
            msg = str(exc)
            errors.append(f"{where}.{msg}" if re.match(r"^\w+(\[\d+\])?: ", msg) else f"{where}: {msg}")
    if errors:
        raise _spec_error(source, errors)
    return spec


def load_spec(path: str | Path, limit: int | None = None) -> WorkflowSpec:
    """Read and validate a YAML spec file (at most ``limit`` step instances, see
    :func:`max_steps`)."""
    path = Path(path)
    try:
        text = read_text(path, "a YAML run spec (name and steps)", what="spec")
    except InputFileError as exc:
        raise SpecError(str(exc)) from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise SpecError(f"{path}:{where}: not valid YAML: {exc}") from None
    return parse_spec(data, str(path), path.parent, limit)

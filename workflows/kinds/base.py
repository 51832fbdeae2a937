"""What a step kind is: an adapter from a validated step to a command line.

A kind turns a step spec into a :class:`TaskPlan` (an argument vector, a rank count, an
optional serial cache warm-up) and names the code its command runs (``packages`` and
``libraries``, the step's code key: :mod:`workflows.kinds.code`). Kinds call capabilities only through their CLI command
(``python -m workflows.cli ...``) or a Python entry point run by :mod:`workflows.step_main`, so
every step is a separate process that Parsl (or Slurm) can place, retry and log. A step a kind
cannot run is refused when the spec is validated (its pydantic model in :mod:`workflows.spec`).

A step process that fails with an error that recurs on every try (a usage or configuration
error: a bad option, layout or input file) says so in the file named by ``$STRATOFLOW_STEP_ERROR``
(:func:`record_step_error`); the engine then does not retry it.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workflows.kinds.code import CODE
from workflows.spec import StepBase

STEP_ERROR_ENV = "STRATOFLOW_STEP_ERROR"
STEP_ERROR_FILE = ".step-error.json"  # in the try's work folder


@dataclass(frozen=True)
class TaskPlan:
    """A step's command: ``argv`` on ``ranks`` MPI ranks (1: a plain serial process)."""

    argv: tuple[str, ...]
    ranks: int = 1
    warm_argv: tuple[str, ...] | None = None  # run serially before an MPI launch
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class PlanContext:
    """Where a step runs: its (temporary) output folder and its inputs' output folders."""

    out_dir: Path
    inputs: dict[str, list[Path]]  # step name in the spec -> output folders of its instances

    def input_dir(self, name: str) -> Path:
        dirs = self.inputs[name]
        return dirs[0]


class Kind:
    """Base class of step kinds. Subclasses set ``name`` and implement :meth:`plan`."""

    name: str = ""
    summary: str = ""
    packages: tuple[str, ...] = ()  # stratoflow packages the command imports
    libraries: tuple[str, ...] = ()  # distributions whose version the results depend on
    # exit statuses that mean "this fails the same way every time" (not retried)
    permanent_exit_codes: frozenset[int] = frozenset()

    def plan(self, step: StepBase, ctx: PlanContext) -> TaskPlan:
        raise NotImplementedError

    def version(self) -> str:
        """Part of the step hash: change it when the adapter's command line changes."""
        return "1"

    def code_key(self) -> dict[str, Any]:
        """Part of the step hash: the sources of :attr:`packages` and the versions of
        :attr:`libraries` (:meth:`workflows.kinds.code.CodeIdentity.key`)."""
        return CODE.key(self.packages, self.libraries)

    def hash_context(self, step: StepBase) -> dict[str, Any]:
        """What decides this step's result besides its parameters, input files and the steps
        it reads from (e.g. the tuned schedules its stencils are built with); part of the
        step hash when not empty."""
        return {}


PYTHON = sys.executable


def cli_argv(*args: str) -> tuple[str, ...]:
    """The ``stratoflow`` command line run with this interpreter."""
    return (PYTHON, "-m", "workflows.cli", *args)


class CliKind(Kind):
    """A kind that runs a ``stratoflow`` sub-command (argparse exits 2 on a usage error)."""

    command: tuple[str, ...] = ()  # e.g. ("fv3", "run")
    packages = ("workflows",)
    permanent_exit_codes = frozenset({2})


class EntryKind(Kind):
    """A kind that calls a Python function ``module:function(**kwargs)`` in its own process
    (through :mod:`workflows.step_main`)."""

    target: str = ""

    def kwargs(self, step: StepBase, ctx: PlanContext) -> dict[str, Any]:
        raise NotImplementedError

    def plan(self, step: StepBase, ctx: PlanContext) -> TaskPlan:
        params = {"target": self.target, "kwargs": self.kwargs(step, ctx)}
        path = ctx.out_dir / "params.json"
        path.write_text(json.dumps(params, indent=2, default=str))
        return TaskPlan((PYTHON, "-m", "workflows.step_main", str(path)))


def record_step_error(exc: BaseException) -> None:
    """In a step process started by the engine (``$STRATOFLOW_STEP_ERROR`` set), record that
    it fails with ``exc``: permanent (not retried) when ``exc`` is a usage or configuration
    error (:func:`is_permanent`). Does nothing outside a step."""
    path = os.environ.get(STEP_ERROR_ENV)
    if not path:
        return
    record = {"error": type(exc).__name__, "message": str(exc)[:2000],
              "permanent": is_permanent(exc)}  # fmt: skip
    try:
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            json.dump(record, f)
        os.replace(tmp, path)
    except OSError:  # the step's own error matters more than this note
        pass


def is_permanent(exc: BaseException) -> bool:
    """Whether ``exc`` recurs on every try with the same inputs: the user errors that are
    ``ValueError`` (SpecError, FV3ConfigError, PartitionError, StencilFlowError,
    ENS10DataError, StencilError, ...) and usage errors (``SystemExit(2)``)."""
    from workflows.errors import is_user_error

    if isinstance(exc, SystemExit):
        return exc.code == 2
    return is_user_error(exc) and isinstance(exc, ValueError)


def read_step_error(workdir: Path) -> dict[str, Any] | None:
    """The error a failed try recorded in its work folder, if any."""
    path = workdir / STEP_ERROR_FILE
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None

"""What a step kind is: an adapter from a validated step to a command line.

A kind turns a step spec into a :class:`TaskPlan` (an argument vector, a rank count, an
optional serial cache warm-up) and says whether the capability it calls has landed. Kinds
call capabilities only through their CLI command (``python -m workflows.cli ...``) or a
Python entry point run by :mod:`workflows.step_main`, so every step is a separate process
that Parsl (or Slurm) can place, retry and log.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import io
import json
import sys
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from workflows.spec import StepBase


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

    def missing(self) -> str | None:
        """Why the capability is not available (None when it is)."""
        return None

    def missing_for(self, step: StepBase) -> str | None:
        """Why this particular step cannot run (e.g. a case not implemented yet)."""
        return self.missing()

    def plan(self, step: StepBase, ctx: PlanContext) -> TaskPlan:
        raise NotImplementedError

    def version(self) -> str:
        """Part of the step hash: change it when the adapter's command line changes."""
        return "1"

    def hash_context(self, step: StepBase) -> dict[str, Any]:
        """What decides this step's result besides its parameters, input files and the steps
        it reads from (e.g. the tuned schedules its stencils are built with); part of the
        step hash when not empty."""
        return {}


PYTHON = sys.executable


def cli_argv(*args: str) -> tuple[str, ...]:
    """The ``stratoflow`` command line run with this interpreter."""
    return (PYTHON, "-m", "workflows.cli", *args)


@cache
def cli_rejects(args: tuple[str, ...]) -> str | None:
    """None if ``stratoflow ARGS`` parses, else why not (the sub-command's usage error)."""
    try:
        from workflows.cli import build_parser

        parser = build_parser()
    except Exception as exc:  # a half-landed command module breaks only the kinds using it
        return f"the stratoflow CLI does not load ({type(exc).__name__}: {exc})"
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            parser.parse_args(list(args))
    except SystemExit as exc:
        if exc.code not in (0, None):
            lines = [ln for ln in err.getvalue().strip().splitlines() if ln.strip()]
            return lines[-1] if lines else "usage error"
    return None


class CliKind(Kind):
    """A kind that runs a ``stratoflow`` sub-command; landed when the sub-command parses
    the arguments this adapter passes."""

    command: tuple[str, ...] = ()  # e.g. ("fv3", "run")

    def probe_args(self) -> tuple[str, ...]:
        """Arguments of a typical call, parsed (not run) to check the interface exists."""
        return self.command

    def missing(self) -> str | None:
        reason = cli_rejects(self.probe_args())
        if reason is None:
            return None
        return f"`stratoflow {' '.join(self.command)}` is not available: {reason}"


def entry_missing(target: str, params: tuple[str, ...] = ()) -> str | None:
    """Why ``module:function`` cannot be called with keyword ``params`` (None if it can)."""
    module_name, func_name = target.split(":")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        return f"{module_name} is not importable ({type(exc).__name__}: {exc})"
    func = getattr(module, func_name, None)
    if not callable(func):
        return f"{target} does not exist"
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return None
    has_kwargs = any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())
    unknown = [p for p in params if p not in sig.parameters and not has_kwargs]
    if unknown:
        return f"{target}{sig} takes no parameter {', '.join(unknown)}"
    return None


class EntryKind(Kind):
    """A kind that calls a Python function ``module:function(**kwargs)`` in its own process
    (through :mod:`workflows.step_main`)."""

    target: str = ""
    params: tuple[str, ...] = ()

    def missing(self) -> str | None:
        return entry_missing(self.target, self.params)

    def kwargs(self, step: StepBase, ctx: PlanContext) -> dict[str, Any]:
        raise NotImplementedError

    def plan(self, step: StepBase, ctx: PlanContext) -> TaskPlan:
        params = {"target": self.target, "kwargs": self.kwargs(step, ctx)}
        path = ctx.out_dir / "params.json"
        path.write_text(json.dumps(params, indent=2, default=str))
        return TaskPlan((PYTHON, "-m", "workflows.step_main", str(path)))

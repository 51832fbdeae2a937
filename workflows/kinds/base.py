"""What a step kind is: an adapter from a validated step to a command line.

A kind turns a step spec into a :class:`TaskPlan` (an argument vector, a rank count, an
optional serial cache warm-up). Kinds call capabilities only through their CLI command
(``python -m workflows.cli ...``) or a Python entry point run by :mod:`workflows.step_main`, so
every step is a separate process that Parsl (or Slurm) can place, retry and log. A step a kind
cannot run is refused when the spec is validated (its pydantic model in :mod:`workflows.spec`).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
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


class CliKind(Kind):
    """A kind that runs a ``stratoflow`` sub-command."""

    command: tuple[str, ...] = ()  # e.g. ("fv3", "run")


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

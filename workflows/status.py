"""The statuses of steps and runs, stored in the run database as their string values."""

from __future__ import annotations

from enum import StrEnum


class StepStatus(StrEnum):
    """Where a step instance stands."""

    PENDING = "pending"  # validated, waiting for its dependencies or a worker
    RUNNING = "running"  # a try is running
    DONE = "done"  # ran and published its outputs
    CACHED = "cached"  # the outputs of an identical finished step were reused
    FAILED = "failed"  # every try failed, or it could not start
    BLOCKED = "blocked"  # a step it depends on did not finish
    INTERRUPTED = "interrupted"  # the workflow was stopped while the step was pending or running

    @property
    def finished(self) -> bool:
        """Whether the step's outputs are complete (it ran, or reused identical outputs)."""
        return self in FINISHED


#: step statuses whose outputs are complete
FINISHED: frozenset[StepStatus] = frozenset({StepStatus.DONE, StepStatus.CACHED})


class RunStatus(StrEnum):
    """Where a run stands."""

    RUNNING = "running"
    DONE = "done"  # every step finished
    FAILED = "failed"  # a step failed or was blocked
    INTERRUPTED = "interrupted"  # the workflow process was stopped

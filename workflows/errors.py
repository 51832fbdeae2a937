"""Errors of the workflow layer, and which exceptions are the user's to fix."""

from __future__ import annotations


class WorkflowError(RuntimeError):
    """A workflow cannot run: a failed step, a missing run, a scheduler that refused a job.

    The message names the run, step, file or job and what to do.
    """


class SpecError(WorkflowError, ValueError):
    """A run spec is invalid; the message names the key and the allowed values."""


# Package errors whose message is meant for the user (no traceback unless -vv).
_USER_ERROR_NAMES = {
    "SpecError",
    "WorkflowError",
    "StencilError",
    "StencilFlowError",
    "HaloError",
    "PartitionError",
    "FV3ConfigError",
    "ENS10DataError",
    "TuningError",
    "BenchmarkError",
    "InputFileError",
    "DatabaseIdentityError",
}


def is_user_error(exc: BaseException) -> bool:
    return any(cls.__name__ in _USER_ERROR_NAMES for cls in type(exc).__mro__)

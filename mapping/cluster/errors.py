"""The exceptions of :mod:`mapping.cluster` (shown to CLI users without a traceback)."""

from __future__ import annotations


class HaloError(RuntimeError):
    """A halo exchange was set up or used wrongly; the message names the field/rank and the fix."""


class PartitionError(HaloError, ValueError):
    """A domain decomposition is impossible or was asked an invalid question (layout, rank, size)."""

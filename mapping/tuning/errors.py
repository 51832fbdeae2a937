"""The tuning package's error class, and the signal that a search was stopped on purpose."""

from __future__ import annotations


class TuningError(RuntimeError):
    """Tuning cannot proceed: an unknown stencil or schedule, a bad database, a failed search.

    The message names the stencil, schedule (hash), file or key and what to do.
    """


class SearchStopped(Exception):
    """A search stopped because its caller asked it to (a time limit), not because it failed:
    every evaluation made so far is stored, so running the same search again resumes it."""

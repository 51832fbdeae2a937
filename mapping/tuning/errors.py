"""The tuning package's one error class."""

from __future__ import annotations


class TuningError(RuntimeError):
    """Tuning cannot proceed: an unknown stencil or schedule, a bad database, a failed search.

    The message names the stencil, schedule (hash), file or key and what to do.
    """

"""Errors of the FV3 core that are the user's to fix."""

from __future__ import annotations


class FV3ConfigError(ValueError):
    """An FV3 run is misconfigured; the message names the offending key/value and the fix."""


class FV3ReferenceError(ValueError):
    """A Fortran FV3 reference run (``../shared/fv3-reference/<run>``) lacks a file or holds one
    that cannot be read; the message names the file (and line or variable) and what to do."""

"""Errors of the FV3 core that are the user's to fix."""

from __future__ import annotations


class FV3ConfigError(ValueError):
    """An FV3 run is misconfigured; the message names the offending key/value and the fix."""

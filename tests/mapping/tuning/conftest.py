"""Tuning tests build into the test suite's stencil cache, never into the user's tuning cache."""

from __future__ import annotations

import os

# tests/conftest.py sets STRATOFLOW_CACHE_DIR; TunedStencilFactory's default build cache follows.
os.environ.setdefault("STRATOFLOW_TUNING_CACHE", os.environ["STRATOFLOW_CACHE_DIR"])

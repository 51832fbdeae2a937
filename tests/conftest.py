"""Test-suite wide settings: a private stencil cache, and the backend lists tests use."""

from __future__ import annotations

import os
from pathlib import Path

# Keep compiled stencils of the test suite in one project-controlled place (reused across runs).
os.environ.setdefault(
    "STRATOFLOW_CACHE_DIR", str(Path(__file__).resolve().parent.parent / ".stratoflow_cache")
)

# Each test's peak memory, with the largest in the terminal summary and a limit (tests/memory_peaks.py).
pytest_plugins = ["tests.memory_peaks"]

"""Test-suite wide settings: a private stencil cache, and the backend lists tests use."""

from __future__ import annotations

import os
from pathlib import Path

# Keep compiled stencils of the test suite in one project-controlled place (reused across runs).
os.environ.setdefault(
    "STRATOFLOW_CACHE_DIR", str(Path(__file__).resolve().parent.parent / ".stratoflow_cache")
)

# The benchmarks' STREAM triad on arrays of 2**22 doubles (96 MiB in all, not 1.5 GiB): the tests
# run its code path, not the machine's limit (benchmarks/common.py, STREAM_ELEMENTS).
os.environ.setdefault("STRATOFLOW_STREAM_ELEMENTS", str(1 << 22))

# The ranks mpi-pytest starts for a `parallel` test (`mpiexec ... python -m pytest NODEID`, with
# _PYTEST_MPI_CHILD_PROCESS set) run no dace backend: they do not import dace (stencils/dace_guard.py),
# 60 MiB less per rank.
if os.environ.get("_PYTEST_MPI_CHILD_PROCESS"):
    from stencils.dace_guard import keep_dace_out

    keep_dace_out(os.environ.get("STRATOFLOW_BACKEND") or "numpy",
                  "a rank of an mpi-pytest `parallel` test (tests/conftest.py)")  # fmt: skip

# Each test's peak memory, with the largest in the terminal summary and a limit (tests/memory_peaks.py).
pytest_plugins = ["tests.memory_peaks"]

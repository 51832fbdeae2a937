"""Default locations: the runs folder and the run database (both configurable).

A runs folder that exists as a file, or one that cannot be created or written
(:func:`writable_dir`), is a :class:`~workflows.errors.WorkflowError` naming the path and the
option to change.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from workflows.errors import WorkflowError

DEFAULT_SPEC = Path(__file__).resolve().parent / "examples" / "default.yaml"


_RUNS_OPTION = "pass --runs-dir DIR (or set $STRATOFLOW_RUNS_DIR) to a writable folder"


def runs_dir(arg: str | None = None) -> Path:
    """``--runs-dir``, else ``$STRATOFLOW_RUNS_DIR``, else ``./runs`` (refused when it exists
    and is not a folder)."""
    path = Path(arg or os.environ.get("STRATOFLOW_RUNS_DIR") or "runs")
    if path.exists() and not path.is_dir():
        raise WorkflowError(f"runs folder {path} is a file, not a folder; {_RUNS_OPTION}")
    return path


def writable_dir(path: Path, what: str = "runs folder", fix: str = _RUNS_OPTION) -> Path:
    """Create folder ``path`` if needed and check that a file can be made in it (``what``
    and ``fix`` word the error)."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        blocker = next((p for p in (path, *path.parents) if p.exists()), None)
        why = (f"{blocker} is a file, not a folder" if blocker is not None and not blocker.is_dir()
               else exc.strerror or str(exc))  # fmt: skip
        raise WorkflowError(f"cannot create {what} {path}: {why}; {fix}") from None
    try:  # a probe file: also catches read-only mounts, immutable folders and root squashing
        fd, probe = tempfile.mkstemp(prefix=".stratoflow-write-check.", dir=path)
    except OSError as exc:
        raise WorkflowError(f"{what} {path} is not writable ({exc.strerror or exc}); {fix}") from None
    os.close(fd)
    os.unlink(probe)
    return path


def db_path(arg: str | None = None, runs: Path | None = None) -> Path:
    """``--db``, else ``$STRATOFLOW_DB``, else ``<runs dir>/stratoflow.db``."""
    return Path(arg or os.environ.get("STRATOFLOW_DB") or (runs or runs_dir()) / "stratoflow.db")


def add_location_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--runs-dir", metavar="DIR",
        help="folder holding runs/<run-id>/ (default: $STRATOFLOW_RUNS_DIR or ./runs)",
    )  # fmt: skip
    parser.add_argument(
        "--db", metavar="FILE",
        help="run database (default: $STRATOFLOW_DB or <runs dir>/stratoflow.db)",
    )  # fmt: skip

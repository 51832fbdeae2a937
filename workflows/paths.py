"""Default locations: the runs folder and the run database (both configurable)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

DEFAULT_SPEC = Path(__file__).resolve().parent / "examples" / "default.yaml"


def runs_dir(arg: str | None = None) -> Path:
    """``--runs-dir``, else ``$STRATOFLOW_RUNS_DIR``, else ``./runs``."""
    return Path(arg or os.environ.get("STRATOFLOW_RUNS_DIR") or "runs")


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

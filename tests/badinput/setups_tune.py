"""Setups of the tuning bad-input cases: damaged tuning databases (``setup: setups_tune:NAME``)."""

from __future__ import annotations

from pathlib import Path

from mapping.tuning.db import TuningDB
from mapping.tuning.schedule import Schedule

PAGE = 4096  # SQLite's default page size


def _garbage(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(bytes(range(256)) * 16)


def garbage_default_db(case_dir: Path) -> None:
    """The default tuning database (the case's ``$STRATOFLOW_TUNING_DB``) holds garbage bytes."""
    _garbage(case_dir / "home" / ".cache" / "stratoflow" / "tuning.sqlite")


def garbage_db(case_dir: Path) -> None:
    """``case_dir/tuning.sqlite`` holds garbage bytes."""
    _garbage(case_dir / "tuning.sqlite")


def damaged_db(case_dir: Path) -> None:
    """``case_dir/tuning.sqlite``: a real tuning database (applied schedules over several pages)
    whose third page is overwritten with garbage."""
    path = case_dir / "tuning.sqlite"
    db = TuningDB(path, machine="badinput")
    for i in range(60):
        db.apply(f"stencil_{i:03d}_" + "x" * 100, Schedule("numpy"), 1.0)
    assert path.stat().st_size > 4 * PAGE
    with open(path, "r+b") as f:
        f.seek(2 * PAGE)
        f.write(bytes(range(256)) * (PAGE // 256))

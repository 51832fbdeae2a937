"""Set-ups of the ``runs-*`` bad-input cases: damaged run databases, unwritable runs folders."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from workflows.provenance import ProvenanceDB
from workflows.status import RunStatus, StepStatus

RUN_ID = "demo-0123456789"


def recorded_run(db_path: Path, run_id: str = RUN_ID) -> Path:
    """A run database at ``db_path`` holding one finished run with one step, whose folder
    (beside the database) exists; returns the run folder."""
    run_dir = db_path.parent / run_id
    (run_dir / "steps" / "s" / "out").mkdir(parents=True)
    with ProvenanceDB(db_path) as db:
        db.begin_run(run_id, "demo", "0" * 64, "{}", "demo.yaml", "inline", str(run_dir))
        db.set_step(run_id, "s", status=StepStatus.DONE, kind="command", step_hash="1" * 64,
                    message="x" * 2000, ended=time.time())  # fmt: skip
        db.update_run(run_id, status=RunStatus.DONE, ended=time.time())
    return run_dir


def damage_page(db_path: Path, page: int = 2) -> None:
    """Overwrite page ``page`` (1-based) of an SQLite file with garbage bytes."""
    with sqlite3.connect(db_path) as conn:
        size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    with open(db_path, "r+b") as f:
        f.seek((page - 1) * size)
        f.write(bytes((i * 37 + 11) % 256 for i in range(size)))


def garbage_db(case_dir: Path) -> None:
    """``runs/stratoflow.db`` is 4 KiB of bytes that are no SQLite database."""
    (case_dir / "runs").mkdir()
    (case_dir / "runs" / "stratoflow.db").write_bytes(bytes((i * 7 + 3) % 256 for i in range(4096)))


def damaged_db(case_dir: Path) -> None:
    """``runs/stratoflow.db`` is a real run database with one run whose page 2 is overwritten."""
    (case_dir / "runs").mkdir()
    recorded_run(case_dir / "runs" / "stratoflow.db")
    damage_page(case_dir / "runs" / "stratoflow.db")


def one_run(case_dir: Path) -> None:
    """``runs/stratoflow.db`` holds one finished run, ``runs/demo-0123456789/``."""
    (case_dir / "runs").mkdir()
    recorded_run(case_dir / "runs" / "stratoflow.db")


def readonly_dir(case_dir: Path) -> None:
    """``ro`` is a folder nobody can create files in: mode 0555, or, for root (whom file
    modes do not stop), a link to /sys, where even root cannot create files."""
    ro = case_dir / "ro"
    if os.geteuid() == 0:
        ro.symlink_to("/sys")
    else:
        ro.mkdir()
        ro.chmod(0o555)


def two_runs(case_dir: Path) -> None:
    """``runs/stratoflow.db`` holding two runs whose ids start with ``demo``."""
    recorded_run(case_dir / "runs" / "stratoflow.db", "demo-0123456789")
    recorded_run(case_dir / "runs" / "stratoflow.db", "demo-9876543210")

"""The Slurm pilot jobs of a run: recorded as Parsl submits them, cancelled if the run dies.

Parsl cancels its pilot jobs (blocks) when a run ends normally. When ``stratoflow run`` is
killed outright (kill -9, a lost node), nobody would: the jobs would hold their nodes until
their worker pools notice the lost interchange. So the Slurm provider appends every job id it
submits to ``<run>/parsl/slurm-jobs.txt`` (:func:`recording_slurm_provider`), a reaper process
(``python -m workflows.task_main reap``) runs ``scancel`` on them as soon as the run's process
is gone, and a rerun of the run cancels any that are still listed (:func:`cancel_jobs`).
Stdlib only at import: the reaper loads this module.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

JOBS_FILE = "slurm-jobs.txt"
_JOB_ID = re.compile(r"^[0-9]+(_[0-9]+)?$")


def record_job(jobs_file: Path, job_id: str) -> None:
    """Append ``job_id`` to ``jobs_file`` (flushed to disk before returning)."""
    with open(jobs_file, "a", encoding="ascii") as f:
        f.write(f"{job_id}\n")
        f.flush()
        os.fsync(f.fileno())


def recorded_jobs(jobs_file: Path) -> list[str]:
    """The job ids in ``jobs_file`` (none if it does not exist; lines that are not job ids are
    skipped)."""
    try:
        lines = jobs_file.read_text(encoding="ascii", errors="replace").split()
    except FileNotFoundError:
        return []
    return list(dict.fromkeys(line for line in lines if _JOB_ID.match(line)))


def cancel_jobs(jobs_file: Path) -> list[str]:
    """``scancel`` the jobs listed in ``jobs_file`` (finished ones are ignored by Slurm), then
    remove the file; the ids it listed. Nothing happens without ``scancel`` on PATH."""
    jobs = recorded_jobs(jobs_file)
    scancel = shutil.which("scancel")
    if not jobs or scancel is None:
        return []
    try:
        proc = subprocess.run([scancel, "--quiet", *jobs], capture_output=True, text=True,
                              timeout=60)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("could not cancel Slurm jobs %s listed in %s: %s", ", ".join(jobs), jobs_file,
                    exc)  # fmt: skip
        return []
    if proc.returncode != 0:
        log.warning("scancel %s exited %d: %s", " ".join(jobs), proc.returncode,
                    proc.stderr.strip())  # fmt: skip
    jobs_file.unlink(missing_ok=True)
    return jobs


def recording_slurm_provider(jobs_file: Path, **options: Any) -> Any:
    """Parsl's ``SlurmProvider(**options)`` that records each job it submits in ``jobs_file``."""
    from parsl.providers import SlurmProvider

    class RecordingSlurmProvider(SlurmProvider):
        def submit(self, command: str, tasks_per_node: int, job_name: str = "parsl.slurm") -> str:
            job_id = super().submit(command, tasks_per_node, job_name)
            if job_id is not None:
                record_job(jobs_file, str(job_id))
            return job_id

    return RecordingSlurmProvider(**options)

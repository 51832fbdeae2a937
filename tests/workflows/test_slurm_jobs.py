"""The Slurm pilot-job ledger and reaper (workflows.slurm_jobs, ``task_main reap``), without a
Slurm: ``scancel`` is a script on PATH that records its argument vector, so the tests check
the exact command the reaper and a rerun would give Slurm."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from workflows.slurm_jobs import cancel_jobs, record_job, recorded_jobs
from workflows.task_main import process_start_time

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def scancel(tmp_path: Path, monkeypatch) -> Path:
    """An ``scancel`` on PATH that appends its arguments (one line, NUL-separated) to a file."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "scancel-calls"
    script = bin_dir / "scancel"
    script.write_text(f"#!{sys.executable}\nimport sys\n"
                      f"open({str(calls)!r}, 'a').write('\\0'.join(sys.argv[1:]) + '\\n')\n")  # fmt: skip
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return calls


def test_ledger_keeps_job_ids_in_order_and_skips_other_lines(tmp_path) -> None:
    """Appended ids come back once each, in order; a line that is not a job id is ignored."""
    ledger = tmp_path / "slurm-jobs.txt"
    assert recorded_jobs(ledger) == []
    for job in ("101", "102_3", "101"):
        record_job(ledger, job)
    with open(ledger, "a") as f:
        f.write("$(touch /tmp/x)\n")
    assert recorded_jobs(ledger) == ["101", "102_3"]


def test_cancel_gives_scancel_the_ids_as_arguments_and_clears_the_ledger(tmp_path, scancel) -> None:
    ledger = tmp_path / "slurm-jobs.txt"
    record_job(ledger, "7")
    record_job(ledger, "8")
    assert cancel_jobs(ledger) == ["7", "8"]
    assert scancel.read_text() == "--quiet\x007\x008\n"
    assert not ledger.exists()
    assert cancel_jobs(ledger) == []  # nothing listed: scancel is not called again
    assert scancel.read_text().count("\n") == 1


def test_reaper_cancels_the_jobs_once_the_watched_process_is_gone(tmp_path, scancel) -> None:
    """``task_main reap PID:START FILE`` on a live process does nothing; once the process is
    killed, it runs scancel on the ledger's ids within 5 s and exits 0."""
    ledger = tmp_path / "slurm-jobs.txt"
    record_job(ledger, "42")
    target = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        start = process_start_time(target.pid)
        reaper = subprocess.Popen(
            [sys.executable, "-m", "workflows.task_main", "reap", f"{target.pid}:{start}",
             str(ledger)], cwd=REPO, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        time.sleep(1.5)
        assert reaper.poll() is None and not scancel.exists()
    finally:
        target.kill()
        target.wait()
    _, err = reaper.communicate(timeout=5)
    assert reaper.returncode == 0
    assert scancel.read_text() == "--quiet\x0042\n"
    assert "cancelled Slurm jobs 42" in err

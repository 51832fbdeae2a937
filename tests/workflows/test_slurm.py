"""A real one-node Slurm: Parsl's SlurmProvider (pilot jobs + srun) and `stratoflow submit`.

Start Slurm first (root, Debian/Ubuntu): ``sudo bash .ci/start_slurm.sh`` (``.ci/run`` does it),
then ``python -m pytest tests/workflows -m slurm``. Without an idle Slurm node these tests skip.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.workflows.fault_runs import (
    assert_nothing_left,
    rerun_resumes,
    start_fault_run,
    wait_for_slow_step,
)
from tests.workflows.nasty_paths import run_everywhere_nasty
from workflows.cli import main
from workflows.engine import WorkflowRunner
from workflows.outputs import sha256_file
from workflows.sites import load_site
from workflows.slurm_jobs import JOBS_FILE, recorded_jobs
from workflows.spec import parse_spec


def _why_no_slurm() -> str | None:
    if shutil.which("sinfo") is None or shutil.which("sbatch") is None:
        return "Slurm client not installed; start one with `sudo bash .ci/start_slurm.sh`"
    try:
        states = subprocess.run(["sinfo", "-h", "-N", "-o", "%T"], capture_output=True,
                                text=True, timeout=20).stdout.split()  # fmt: skip
    except (OSError, subprocess.SubprocessError) as exc:
        return f"sinfo failed ({exc}); start Slurm with `sudo bash .ci/start_slurm.sh`"
    if not any(s.rstrip("*~#") in ("idle", "mixed") for s in states):
        return f"no idle Slurm node (sinfo: {states or 'no nodes'}); run .ci/start_slurm.sh"
    return None


REASON = _why_no_slurm()
pytestmark = [pytest.mark.slurm, pytest.mark.skipif(REASON is not None, reason=REASON or "")]


def _spec(scripts: dict[str, Path], tmp_path: Path, name: str) -> dict:
    return {"name": name, "retries": 1, "backoff_s": 0.5, "steps": [
        {"name": "ranks", "kind": "mpi", "script": str(scripts["mpi_sum"]), "ranks": 2,
         "args": ["{out}"]},
        {"name": "flaky", "kind": "mpi", "script": str(scripts["fail_once"]), "ranks": 1,
         "args": [str(tmp_path / f"{name}.marker"), "{out}"], "after": ["ranks"]}]}  # fmt: skip


def test_parsl_slurm_provider_runs_mpi_and_retries(scripts, tmp_path, runs, db):
    """An MPI step in a Parsl pilot job (srun inside the allocation) and a step that fails once.
    The MPI result is checked against the analytic sum n(n+1)/2 (exact)."""
    spec = parse_spec(_spec(scripts, tmp_path, "parsl-slurm"), "slurm.yaml")
    outcome = WorkflowRunner(spec, load_site("slurm"), runs, db, progress=False)()
    assert outcome.status == "done", outcome.steps
    assert json.loads((outcome.run_dir / "steps/ranks/out/sum.json").read_text()) == {
        "ranks": 2, "sum": 3}
    attempts = db.attempts(outcome.run_id)
    assert [(a["step_id"], a["exit_code"]) for a in attempts] == [
        ("ranks", 0), ("flaky", 3), ("flaky", 0)]
    assert all(a["slurm_job_id"] and a["slurm_job_id"].isdigit() for a in attempts)
    submit_scripts = [p for p in (outcome.run_dir / "parsl").rglob("submit_scripts/parsl.*")
                      if p.suffix not in (".stdout", ".stderr")]  # fmt: skip
    assert submit_scripts  # the pilot job script Parsl gave sbatch
    text = "\n".join(p.read_text() for p in submit_scripts)
    # our --ntasks-per-node comes after Parsl's default (=1), so it is the one sbatch uses
    assert text.rstrip().count("#SBATCH --ntasks-per-node=2") == len(submit_scripts)
    assert "--exclusive" not in text


def test_submit_plain_sbatch_job_with_retry(scripts, tmp_path, runs, db, capsys):
    spec = tmp_path / "submit.yaml"
    spec.write_text(json.dumps(_spec(scripts, tmp_path, "sbatch")))
    rc = main(["submit", str(spec), "--runs-dir", str(runs), "--timeout", "300"])
    out = capsys.readouterr().out
    assert rc == 0, out
    run = db.list_runs()[0]
    assert run["status"] == "done" and run["slurm_job_id"].isdigit()
    assert f"Slurm job {run['slurm_job_id']}: COMPLETED" in out
    run_dir = Path(run["run_dir"])
    assert json.loads((run_dir / "steps/ranks/out/sum.json").read_text())["sum"] == 3
    assert [a["exit_code"] for a in db.attempts(run["run_id"], "flaky")] == [3, 0]
    assert (run_dir / f"slurm-{run['slurm_job_id']}.out").is_file()


def test_submit_failing_job_reports_failure(tmp_path, runs, db, capsys):
    spec = tmp_path / "fail.yaml"
    spec.write_text("name: fails\nretries: 0\nsteps:\n  - {name: nope, kind: command, argv: ['false']}\n")
    assert main(["submit", str(spec), "--runs-dir", str(runs), "--timeout", "300"]) == 1
    run = db.list_runs()[0]
    assert run["status"] == "failed"
    step = db.get_step(run["run_id"], "nope")
    assert step["status"] == "failed" and Path(step["log_dir"], "try-1.err").is_file()


def test_metacharacter_paths_reach_no_shell_on_slurm(tmp_path):
    """tests/workflows/test_injection.py's metacharacter paths on Parsl's SlurmProvider (pilot
    jobs): the run finishes with its outputs and no shell created a marker file."""
    run_everywhere_nasty(tmp_path, "slurm", via_env=True)


def _live_jobs(job_ids: list[str]) -> list[str]:
    """Those of ``job_ids`` Slurm still lists as pending, running or completing."""
    out = subprocess.run(["squeue", "-h", "-o", "%i %T", "-j", ",".join(job_ids)],
                         capture_output=True, text=True, timeout=30).stdout  # fmt: skip
    return [line for line in out.splitlines() if line.split()[-1] != "COMPLETED"]


def test_kill_9_mid_step_cancels_the_pilot_jobs_and_the_rerun_resumes(scripts, tmp_path, runs):
    """kill -9 of `stratoflow run --site slurm` while step 2 of 3 runs in a Parsl pilot job:
    within 10 s Slurm lists none of the run's pilot jobs (recorded in parsl/slurm-jobs.txt as
    they were submitted) and no process of the run is left on this node; the rerun memoises
    step 1 and finishes the others."""
    cmd, cwd, proc, _ = start_fault_run(scripts, tmp_path, runs, "slurm")
    info = wait_for_slow_step(proc, runs)
    (run_dir,) = runs.glob("fault-*")
    jobs = recorded_jobs(run_dir / "parsl" / JOBS_FILE)
    assert jobs and jobs[0] == info.get("slurm_job_id", jobs[0])
    before = sha256_file(run_dir / "steps/first/out/count.txt")
    proc.kill()
    assert proc.wait(timeout=10) == -signal.SIGKILL
    deadline = time.monotonic() + 10
    while (live := _live_jobs(jobs)) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not live, f"pilot jobs still queued or running 10 s after kill -9: {live}"
    assert_nothing_left(tmp_path, info)
    rerun_resumes(cmd, cwd, runs, tmp_path, run_dir.name, before)

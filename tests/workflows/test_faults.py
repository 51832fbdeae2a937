"""Faults of `stratoflow run` mid-step: SIGINT (Ctrl-C) and kill -9, on the inline site and
on Parsl's local site. Nothing of the run may be left running, and the rerun resumes."""

from __future__ import annotations

import os
import signal
import subprocess

import pytest

from tests.workflows.fault_runs import (
    assert_nothing_left,
    rerun_resumes,
    start_fault_run,
    wait_for_slow_step,
)
from workflows.outputs import sha256_file
from workflows.provenance import ProvenanceDB


@pytest.mark.parametrize("site", ["inline", "local"])
def test_sigint_mid_step_stops_the_run_and_the_rerun_resumes(site, scripts, tmp_path, runs):
    """SIGINT while step 2 of 3 runs: exit 130 within 10 s with the message naming one step
    cancelled and one stopped, run and both steps recorded as interrupted, no process of the
    run left after 10 s; the rerun memoises step 1 (its output's SHA-256 unchanged) and
    finishes the others."""
    cmd, cwd, proc, err = start_fault_run(scripts, tmp_path, runs, site)
    info = wait_for_slow_step(proc, runs)
    (run_dir,) = runs.glob("fault-*")
    before = sha256_file(run_dir / "steps/first/out/count.txt")
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=10) == 130
    err.seek(0)
    stderr = err.read()
    assert "interrupted: 1 step cancelled, 1 stopped; rerun to resume" in stderr, stderr[-3000:]
    assert "Traceback" not in stderr
    with ProvenanceDB(runs / "stratoflow.db") as db:
        assert db.get_run(run_dir.name)["status"] == "interrupted"
        assert {s["step_id"]: s["status"] for s in db.steps(run_dir.name)} == {
            "first": "done", "slow": "interrupted", "last": "interrupted"}  # fmt: skip
    assert_nothing_left(tmp_path, info)
    rerun_resumes(cmd, cwd, runs, tmp_path, run_dir.name, before)


@pytest.mark.parametrize("site", ["inline", "local"])
def test_kill_9_mid_step_orphans_nothing_and_the_rerun_resumes(site, scripts, tmp_path, runs):
    """kill -9 of `stratoflow run` while step 2 of 3 runs: after 10 s no process of the run is
    left (the step, Parsl's interchange and worker pool); the rerun memoises step 1 and
    finishes the others."""
    cmd, cwd, proc, err = start_fault_run(scripts, tmp_path, runs, site)
    info = wait_for_slow_step(proc, runs)
    (run_dir,) = runs.glob("fault-*")
    before = sha256_file(run_dir / "steps/first/out/count.txt")
    proc.kill()
    assert proc.wait(timeout=10) == -signal.SIGKILL
    assert_nothing_left(tmp_path, info)
    rerun_resumes(cmd, cwd, runs, tmp_path, run_dir.name, before)


def test_rerun_kills_a_task_left_running_by_a_killed_run(scripts, tmp_path, runs, db, caplog):
    """A process group recorded in a killed try's .taskinfo (host, pid = pgid, start time) that
    still runs is killed when the run starts again, with a warning naming it; the run then
    finishes. Reference: the process is gone (its exit status is -SIGKILL)."""
    from workflows.engine import WorkflowRunner
    from workflows.sites import load_site
    from workflows.spec import parse_spec
    from workflows.task_main import process_start_time

    spec = parse_spec({"name": "left", "retries": 0, "steps": [
        {"name": "s", "kind": "command", "argv": ["touch", "{out}/s.txt"]}]}, "left.yaml")  # fmt: skip
    stray = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        try_dir = runs / spec.run_id / "steps/s/.try-1"
        try_dir.mkdir(parents=True)
        (try_dir / ".taskinfo").write_text(
            f"host={os.uname().nodename}\nslurm_job_id=\npid={stray.pid}\npgid={stray.pid}\n"
            f"start={process_start_time(stray.pid)}\n"
        )  # fmt: skip
        with caplog.at_level("WARNING", logger="workflows.engine"):
            outcome = WorkflowRunner(spec, load_site("inline"), runs, db, progress=False)()
        assert stray.wait(timeout=10) == -signal.SIGKILL
        assert f"killed process group {stray.pid}" in caplog.text
        assert outcome.status == "done"
    finally:
        stray.kill()
        stray.wait()

"""Faults of `stratoflow run` mid-step: SIGINT (Ctrl-C) and kill -9, on the inline site and
on Parsl's local site. Nothing of the run may be left running, and the rerun resumes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from workflows.executors import read_taskinfo
from workflows.outputs import sha256_file
from workflows.provenance import ProvenanceDB


def _spec(scripts: dict[str, Path], tmp_path: Path) -> dict:
    """first (finishes), slow (sleeps 120 s the first time it runs), last (after slow)."""
    return {"name": "fault", "retries": 0, "steps": [
        {"name": "first", "kind": "mpi", "script": str(scripts["count"]), "ranks": 1,
         "args": [str(tmp_path / "counter.txt"), "{out}"]},
        {"name": "slow", "kind": "mpi", "script": str(scripts["slow_once"]), "ranks": 1,
         "args": [str(tmp_path / "slow.marker"), "{out}"], "after": ["first"]},
        {"name": "last", "kind": "command", "argv": ["touch", "{out}/last.txt"],
         "after": ["slow"]}]}  # fmt: skip


def _start(scripts, tmp_path: Path, runs: Path, site: str):
    spec_path = tmp_path / "fault.yaml"
    spec_path.write_text(json.dumps(_spec(scripts, tmp_path)))
    cwd = tmp_path / "cwd"
    cwd.mkdir(exist_ok=True)
    cmd = [sys.executable, "-m", "workflows.cli", "run", str(spec_path), "--site", site,
           "--runs-dir", str(runs), "--no-progress"]  # fmt: skip
    err = open(tmp_path / f"stderr-{time.monotonic_ns()}.txt", "w+")
    # a session of its own: the signals of the test reach the workflow only
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=err,
                            start_new_session=True)  # fmt: skip
    return cmd, cwd, proc, err


def _wait_for_slow_step(proc, runs: Path) -> dict[str, str]:
    """The slow step's .taskinfo once its process runs (the script wrote its marker)."""
    deadline = time.monotonic() + 180
    while True:
        infos = [read_taskinfo(p.parent) for p in runs.glob("*/steps/slow/.try-*/.taskinfo")]
        if infos and (runs.parent / "slow.marker").exists():
            return infos[0]
        assert proc.poll() is None, "the workflow ended before its slow step ran"
        assert time.monotonic() < deadline, "the slow step did not start"
        time.sleep(0.2)


def _run_processes(tmp_path: Path, info: dict[str, str]) -> list[str]:
    """Processes of the run still alive: in the slow step's process group, or with a working
    folder or command line under tmp_path (Parsl's interchange and worker pool, the steps)."""
    left = []
    for p in psutil.process_iter(["pid", "cmdline", "cwd", "status"]):
        try:
            if p.info["status"] == psutil.STATUS_ZOMBIE:
                continue
            text = " ".join(p.info["cmdline"] or [])
            in_group = os.getpgid(p.pid) == int(info["pgid"])
            if in_group or str(tmp_path) in text or (p.info["cwd"] or "").startswith(str(tmp_path)):
                left.append(f"{p.pid}: {text[:200]}")
        except (psutil.Error, ProcessLookupError):
            continue
    return left


def _assert_nothing_left(tmp_path: Path, info: dict[str, str]) -> None:
    deadline = time.monotonic() + 10
    while (left := _run_processes(tmp_path, info)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not left, f"left running 10 s after the fault: {left}"


def _rerun_resumes(cmd, cwd: Path, runs: Path, tmp_path: Path, run_id: str, before: str) -> None:
    # inline: the run id and the step hashes do not depend on the site, and no second Parsl
    # start is needed to check the resume
    cmd = [*cmd[: cmd.index("--site") + 1], "inline", *cmd[cmd.index("--site") + 2 :]]
    rerun = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=240)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert "finished with identical inputs; skipped" in rerun.stderr  # first was memoised
    assert (tmp_path / "counter.txt").read_text().count("ran") == 1  # ... not recomputed
    assert sha256_file(runs / run_id / "steps/first/out/count.txt") == before
    assert (runs / run_id / "steps/slow/out/slow.txt").read_text() == "finished\n"
    assert (runs / run_id / "steps/last/out/last.txt").is_file()
    with ProvenanceDB(runs / "stratoflow.db") as db:
        assert db.get_run(run_id)["status"] == "done"
        assert {s["step_id"]: s["status"] for s in db.steps(run_id)} == {
            "first": "done", "slow": "done", "last": "done"}  # fmt: skip


@pytest.mark.parametrize("site", ["inline", "local"])
def test_sigint_mid_step_stops_the_run_and_the_rerun_resumes(site, scripts, tmp_path, runs):
    """SIGINT while step 2 of 3 runs: exit 130 within 10 s with the message naming one step
    cancelled and one stopped, run and both steps recorded as interrupted, no process of the
    run left after 10 s; the rerun memoises step 1 (its output's SHA-256 unchanged) and
    finishes the others."""
    cmd, cwd, proc, err = _start(scripts, tmp_path, runs, site)
    info = _wait_for_slow_step(proc, runs)
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
    _assert_nothing_left(tmp_path, info)
    _rerun_resumes(cmd, cwd, runs, tmp_path, run_dir.name, before)


@pytest.mark.parametrize("site", ["inline", "local"])
def test_kill_9_mid_step_orphans_nothing_and_the_rerun_resumes(site, scripts, tmp_path, runs):
    """kill -9 of `stratoflow run` while step 2 of 3 runs: after 10 s no process of the run is
    left (the step, Parsl's interchange and worker pool); the rerun memoises step 1 and
    finishes the others."""
    cmd, cwd, proc, err = _start(scripts, tmp_path, runs, site)
    info = _wait_for_slow_step(proc, runs)
    (run_dir,) = runs.glob("fault-*")
    before = sha256_file(run_dir / "steps/first/out/count.txt")
    proc.kill()
    assert proc.wait(timeout=10) == -signal.SIGKILL
    _assert_nothing_left(tmp_path, info)
    _rerun_resumes(cmd, cwd, runs, tmp_path, run_dir.name, before)


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

"""A three-step workflow to interrupt mid-step, and the checks after the fault: nothing of
the run left running, and a rerun that resumes (tests/workflows/test_faults.py, and
tests/workflows/test_slurm.py for the Slurm site)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import psutil

from workflows.executors import read_taskinfo
from workflows.outputs import sha256_file
from workflows.provenance import ProvenanceDB


def fault_spec(scripts: dict[str, Path], tmp_path: Path) -> dict:
    """first (finishes), slow (sleeps 120 s the first time it runs), last (after slow)."""
    return {"name": "fault", "retries": 0, "steps": [
        {"name": "first", "kind": "mpi", "script": str(scripts["count"]), "ranks": 1,
         "args": [str(tmp_path / "counter.txt"), "{out}"]},
        {"name": "slow", "kind": "mpi", "script": str(scripts["slow_once"]), "ranks": 1,
         "args": [str(tmp_path / "slow.marker"), "{out}"], "after": ["first"]},
        {"name": "last", "kind": "command", "argv": ["touch", "{out}/last.txt"],
         "after": ["slow"]}]}  # fmt: skip


def start_fault_run(scripts, tmp_path: Path, runs: Path, site: str):
    spec_path = tmp_path / "fault.yaml"
    spec_path.write_text(json.dumps(fault_spec(scripts, tmp_path)))
    cwd = tmp_path / "cwd"
    cwd.mkdir(exist_ok=True)
    cmd = [sys.executable, "-m", "workflows.cli", "run", str(spec_path), "--site", site,
           "--runs-dir", str(runs), "--no-progress"]  # fmt: skip
    err = open(tmp_path / f"stderr-{time.monotonic_ns()}.txt", "w+")
    # a session of its own: the signals of the test reach the workflow only
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=err,
                            start_new_session=True)  # fmt: skip
    return cmd, cwd, proc, err


def wait_for_slow_step(proc, runs: Path) -> dict[str, str]:
    """The slow step's .taskinfo once its process runs (the script wrote its marker)."""
    deadline = time.monotonic() + 180
    while True:
        infos = [read_taskinfo(p.parent) for p in runs.glob("*/steps/slow/.try-*/.taskinfo")]
        if infos and (runs.parent / "slow.marker").exists():
            return infos[0]
        assert proc.poll() is None, "the workflow ended before its slow step ran"
        assert time.monotonic() < deadline, "the slow step did not start"
        time.sleep(0.2)


def run_processes(tmp_path: Path, info: dict[str, str]) -> list[str]:
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


def assert_nothing_left(tmp_path: Path, info: dict[str, str]) -> None:
    deadline = time.monotonic() + 10
    while (left := run_processes(tmp_path, info)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not left, f"left running 10 s after the fault: {left}"


def rerun_resumes(cmd, cwd: Path, runs: Path, tmp_path: Path, run_id: str, before: str) -> None:
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

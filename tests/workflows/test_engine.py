"""The engine end to end: Parsl local site, memoisation, retries, failures, resume after kill."""

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

from workflows.engine import WorkflowRunner
from workflows.outputs import sha256_file
from workflows.provenance import ProvenanceDB
from workflows.sites import load_site
from workflows.spec import parse_spec


def _run(spec: dict, runs: Path, db: ProvenanceDB, site: str = "threads", force: bool = False):
    parsed = parse_spec(spec, "test.yaml")
    return WorkflowRunner(parsed, load_site(site), runs, db, force=force, progress=False)()


def _counting_spec(scripts: dict[str, Path], tmp_path: Path, ranks: int = 3) -> dict:
    return {
        "name": "small",
        "retries": 0,
        "steps": [
            {"name": "count", "kind": "mpi", "script": str(scripts["count"]), "ranks": 1,
             "args": [str(tmp_path / "counter.txt"), "{out}"]},
            {"name": "ranks", "kind": "mpi", "script": str(scripts["mpi_sum"]), "ranks": ranks,
             "args": ["{out}"], "after": ["count"]},
        ],
    }  # fmt: skip


def test_local_site_end_to_end(scripts, tmp_path, runs, db):
    """Parsl MPIExecutor + LocalProvider run a serial and a 3-rank MPI step. The MPI result is
    checked against the analytic sum 1+2+...+n = n(n+1)/2 (exact, integers); provenance
    rows against the files on disk (SHA-256 equality)."""
    outcome = _run(_counting_spec(scripts, tmp_path), runs, db, site="local")
    assert outcome.status == "done", outcome.steps
    result = json.loads((outcome.run_dir / "steps/ranks/out/sum.json").read_text())
    assert result == {"ranks": 3, "sum": 3 * 4 // 2}
    run = db.get_run(outcome.run_id)
    assert run["status"] == "done" and run["site"] == "local"
    assert len(run["git_commit"]) >= 40 and json.loads(run["packages"])["parsl"] != "not installed"
    steps = {s["step_id"]: s for s in db.steps(outcome.run_id)}
    assert all(json.loads(s["parsl_task_ids"]) for s in steps.values())  # Parsl task ids recorded
    for out in db.outputs(outcome.run_id):
        path = outcome.run_dir / "steps" / out["step_id"] / "out" / out["path"]
        assert sha256_file(path) == out["sha256"]
    report = (outcome.run_dir / "report.md").read_text()
    assert "| ranks | mpi | done |" in report and "report/timeline.png" in report
    assert (outcome.run_dir / "report" / "timeline.png").read_bytes()[:4] == b"\x89PNG"
    assert (outcome.run_dir / "parsl").is_dir()  # Parsl's runinfo lives under the run


def test_memoised_rerun_and_force(scripts, tmp_path, runs, db):
    spec = _counting_spec(scripts, tmp_path, ranks=2)
    first = _run(spec, runs, db)
    assert first.status == "done"
    second = _run(spec, runs, db)
    assert [s.status for s in second.steps] == ["done", "done"]
    assert all(s.message.startswith("memoised") and s.tries == 0 for s in second.steps)
    assert (tmp_path / "counter.txt").read_text().count("ran") == 1  # not recomputed
    forced = _run(spec, runs, db, force=True)
    assert all(s.tries == 1 for s in forced.steps)
    assert (tmp_path / "counter.txt").read_text().count("ran") == 2


def test_identical_step_of_another_run_is_reused(scripts, tmp_path, runs, db):
    spec = _counting_spec(scripts, tmp_path, ranks=2)
    _run(spec, runs, db)
    other = _run(spec | {"name": "other"}, runs, db)
    assert {s.status for s in other.steps} == {"cached"}
    assert (other.run_dir / "steps/ranks/out/sum.json").is_file()
    assert (tmp_path / "counter.txt").read_text().count("ran") == 1


def test_task_failing_once_is_retried(scripts, tmp_path, runs, db):
    spec = {"name": "retry", "retries": 2, "backoff_s": 0.1, "steps": [
        {"name": "flaky", "kind": "mpi", "script": str(scripts["fail_once"]), "ranks": 1,
         "args": [str(tmp_path / "marker"), "{out}"]}]}  # fmt: skip
    outcome = _run(spec, runs, db)
    assert outcome.status == "done"
    assert outcome.steps[0].tries == 2
    attempts = db.attempts(outcome.run_id, "flaky")
    assert [a["exit_code"] for a in attempts] == [3, 0]
    assert "failing on purpose" in Path(attempts[0]["stderr"]).read_text()  # first log kept
    assert (outcome.run_dir / "steps/flaky/out/ok.txt").read_text() == "second try\n"


def test_failed_step_keeps_logs_blocks_dependents_and_spares_outputs(scripts, tmp_path, runs, db):
    spec = {"name": "broken", "retries": 1, "backoff_s": 0.0, "steps": [
        {"name": "good", "kind": "mpi", "script": str(scripts["count"]), "ranks": 1,
         "args": [str(tmp_path / "counter.txt"), "{out}"]},
        {"name": "bad", "kind": "command", "argv": ["false"], "after": ["good"]},
        {"name": "later", "kind": "command", "argv": ["true"], "after": ["bad"]}]}  # fmt: skip
    outcome = _run(spec, runs, db)
    status = {s.id: s.status for s in outcome.steps}
    assert status == {"good": "done", "bad": "failed", "later": "blocked"}
    assert outcome.status == "failed"
    bad_dir = outcome.run_dir / "steps/bad"
    assert not (bad_dir / "out").exists()  # nothing published for a failed step
    assert len(list((bad_dir / "logs").glob("try-*.err"))) == 2  # both tries logged
    assert (outcome.run_dir / "steps/good/out/count.txt").read_text() == "hello\n"
    # rerun: the finished step is not recomputed, the failed one is tried again
    again = _run(spec, runs, db)
    assert {s.id: s.status for s in again.steps}["good"] == "done"
    assert (tmp_path / "counter.txt").read_text().count("ran") == 1


def _kill_tree(pid: int) -> None:
    proc = psutil.Process(pid)
    for p in [proc, *proc.children(recursive=True)]:
        try:
            p.send_signal(signal.SIGKILL)
        except psutil.NoSuchProcess:
            pass


def test_resume_after_killed_workflow(scripts, tmp_path, runs):
    """Kill `stratoflow run` (and its children) while step 2 runs; the rerun skips step 1,
    finishes step 2, and step 1's outputs are intact."""
    spec_path = tmp_path / "resume.yaml"
    spec_path.write_text(json.dumps({"name": "resume", "retries": 0, "steps": [
        {"name": "first", "kind": "mpi", "script": str(scripts["count"]), "ranks": 1,
         "args": [str(tmp_path / "counter.txt"), "{out}"]},
        {"name": "slow", "kind": "mpi", "script": str(scripts["slow_once"]), "ranks": 1,
         "args": [str(tmp_path / "slow.marker"), "{out}"], "after": ["first"]}]}))  # fmt: skip
    cmd = [sys.executable, "-m", "workflows.cli", "run", str(spec_path), "--site", "threads",
           "--runs-dir", str(runs), "--no-progress"]  # fmt: skip
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}")
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not (tmp_path / "slow.marker").exists():  # step 2 has started
        assert proc.poll() is None and time.monotonic() < deadline, "workflow did not reach step 2"
        time.sleep(0.2)
    _kill_tree(proc.pid)
    proc.wait()
    with ProvenanceDB(runs / "stratoflow.db") as db:
        run_id = db.list_runs()[0]["run_id"]
        assert db.get_step(run_id, "first")["status"] == "done"
        assert db.get_step(run_id, "slow")["status"] == "running"  # killed mid-step
    first_out = runs / run_id / "steps/first/out/count.txt"
    before = sha256_file(first_out)
    rerun = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert (tmp_path / "counter.txt").read_text().count("ran") == 1  # step 1 not recomputed
    assert sha256_file(first_out) == before
    assert (runs / run_id / "steps/slow/out/slow.txt").read_text() == "finished\n"
    assert not list((runs / run_id / "steps/slow").glob(".try-*"))  # killed try cleaned up
    with ProvenanceDB(runs / "stratoflow.db") as db:
        assert db.get_run(run_id)["status"] == "done"
        assert db.get_step(run_id, "slow")["status"] == "done"


@pytest.mark.parametrize("bad", ["../x", "a b"])
def test_unsafe_paths_never_reach_a_shell(bad, tmp_path):
    from workflows.errors import SpecError

    folder = tmp_path / bad.replace("/", "_")
    folder.mkdir()
    (folder / "s.py").write_text("")
    if bad == "../x":
        spec = {"name": "p", "steps": [{"name": "m", "kind": "mpi", "script": "s.py"}]}
        parse_spec(spec, "p.yaml", folder)  # a safe path is fine
    else:
        spec = {"name": "p", "steps": [{"name": "m", "kind": "mpi", "script": "s.py"}]}
        with pytest.raises(SpecError, match="could reach a shell"):
            parse_spec(spec, "p.yaml", folder)


def test_fv3_step_hash_follows_the_applied_tuned_schedules(tmp_path, monkeypatch):
    """Reference: the definition of the step hash -- an FV3 step with a tuning_db builds its
    stencils with the schedules applied there, so applying one must change the hash, and the
    hash must not change while the database stays the same. A step without tuning_db builds
    no tuned stencil: the user's own tuning database does not enter its hash."""
    from mapping.tuning.db import TuningDB
    from mapping.tuning.schedule import Schedule
    from workflows.engine import step_hash
    from workflows.kinds import KINDS
    from workflows.spec import expand

    user_db = tmp_path / "user.sqlite"
    monkeypatch.setenv("STRATOFLOW_TUNING_DB", str(user_db))
    step = {"name": "tc2", "kind": "fv3", "days": 0.1}
    (plain,) = expand(parse_spec({"name": "fv3", "steps": [step]}, "test.yaml"))
    untuned = step_hash(plain, [])
    TuningDB(user_db).apply("dgrid_to_agrid", Schedule("gt:cpu_ifirst"), 1.5)
    assert step_hash(plain, []) == untuned and KINDS["fv3"].hash_context(plain.step) == {}

    db_path = tmp_path / "tuning.sqlite"
    TuningDB(db_path)  # an empty database: nothing applied
    spec = parse_spec({"name": "fv3", "steps": [step | {"tuning_db": str(db_path)}]}, "test.yaml")
    (inst,) = expand(spec)
    assert KINDS["fv3"].hash_context(inst.step) == {}
    before = step_hash(inst, [])
    assert before != untuned and step_hash(inst, []) == before  # reading it changes nothing
    TuningDB(db_path).apply("dgrid_to_agrid", Schedule("gt:cpu_ifirst"), 1.5)
    context = KINDS["fv3"].hash_context(inst.step)
    assert context == {"tuned_schedules": {"dgrid_to_agrid": Schedule("gt:cpu_ifirst").to_dict()}}
    tuned = step_hash(inst, [])
    assert tuned != before and step_hash(inst, []) == tuned


def test_steps_build_into_the_one_stencil_cache(tmp_path, runs, db, monkeypatch):
    """A step that builds stencils (the stencil library demo, numpy) builds them into the
    stencil cache of the run's environment ($STRATOFLOW_CACHE_DIR), so its recorded outputs
    and the report list only what it wrote (reference: the cache folder holds the builds; no
    output path lies in a cache)."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("STRATOFLOW_CACHE_DIR", str(cache))
    spec = {"name": "cache", "retries": 0,
            "steps": [{"name": "stencils", "kind": "stencils_demo", "backend": "numpy"}]}  # fmt: skip
    outcome = _run(spec, runs, db)
    assert outcome.status == "done", outcome.steps
    assert any(cache.rglob("*.py"))  # the generated numpy stencils
    paths = [out["path"] for out in db.outputs(outcome.run_id)]
    cached = [p for p in paths if "cache" in p or p.startswith(".") or "/." in p]
    assert not cached, cached
    step_dir = outcome.run_dir / "steps" / "stencils" / "out"
    assert not list(step_dir.glob(".*cache*")) and not (step_dir / ".dace.conf").exists()

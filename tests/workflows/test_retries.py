"""Retries: try numbers that never collide, and failures that recur are not retried."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

import workflows.engine as engine
from workflows.cli import main
from workflows.engine import WorkflowRunner, _claim_try
from workflows.errors import SpecError, WorkflowError
from workflows.kinds.base import STEP_ERROR_ENV, is_permanent, read_step_error
from workflows.sites import load_site
from workflows.spec import parse_spec


def _run(spec: dict, runs: Path, db, base_dir: Path | None = None):
    parsed = parse_spec(spec, "t.yaml", base_dir)
    return WorkflowRunner(parsed, load_site("inline"), runs, db, progress=False)()


class _FirstLaunchLost:
    """An executor whose first task fails like a lost launch: it exits 1 and its log files
    are never created where the engine expects them."""

    def __init__(self, real, elsewhere: Path):
        self.real, self.elsewhere, self.lost = real, elsewhere, False

    def submit(self, plan, workdir, stdout, stderr):
        if not self.lost:
            self.lost = True
            plan = replace(plan, argv=("false",), warm_argv=None)
            return self.real.submit(plan, workdir, self.elsewhere / "o", self.elsewhere / "e")
        return self.real.submit(plan, workdir, stdout, stderr)

    def __getattr__(self, name):
        return getattr(self.real, name)


def test_launch_failure_without_logs_is_retried_as_try_2(tmp_path, runs, db, monkeypatch):
    """Reference: try numbering = one above every recorded try. A first try that fails
    without writing its logs (a lost launch) is followed by try 2 in its own folder (the
    count of log files, 0, would reuse number 1 and collide), which succeeds."""
    elsewhere = tmp_path / "lost"
    elsewhere.mkdir()
    real = engine.make_executor
    monkeypatch.setattr(engine, "make_executor",
                        lambda site, run_dir: _FirstLaunchLost(real(site, run_dir), elsewhere))  # fmt: skip
    script = tmp_path / "ok.py"
    script.write_text("import pathlib, sys\npathlib.Path(sys.argv[1], 'ok.txt').write_text('ok')\n")
    spec = {"name": "lost", "retries": 1, "backoff_s": 0, "steps": [
        {"name": "s", "kind": "command", "argv": [sys.executable, str(script), "{out}"]}]}  # fmt: skip
    outcome = _run(spec, runs, db)
    assert outcome.status == "done", outcome.steps
    assert outcome.steps[0].tries == 2
    attempts = db.attempts(outcome.run_id, "s")
    assert [(a["try"], a["exit_code"]) for a in attempts] == [(1, 1), (2, 0)]
    logs = outcome.run_dir / "steps/s/logs"
    names = {p.name for p in logs.iterdir()}
    assert {"try-2.err", "try-2.out"} <= names and not any(n.startswith("try-1") for n in names)
    assert (outcome.run_dir / "steps/s/out/ok.txt").read_text() == "ok"


def test_claim_try_skips_every_used_number(tmp_path):
    """Reference: the numbering rule. With logs of tries 1 and 4, a work folder .try-5 and
    try 2 in the database, the next try is 6, created exclusively; the next after it 7."""
    step, logs = tmp_path / "step", tmp_path / "step" / "logs"
    logs.mkdir(parents=True)
    (logs / "try-1.out").write_text("")
    (logs / "try-4.err").write_text("")
    (step / ".try-5").mkdir()
    assert _claim_try(step, logs, 2) == (6, step / ".try-6")
    assert (step / ".try-6").is_dir()
    assert _claim_try(step, logs, 2)[0] == 7


def test_configuration_error_is_not_retried(tmp_path, runs, db):
    """Reference: StencilFlowError is a configuration error (it recurs). A map step whose
    program file is not a StencilFlow program fails once, with retries left, and the step
    says it was not retried and why (the error its process recorded)."""
    (tmp_path / "bad.json").write_text('{"not": "a program"}')
    spec = {"name": "cfg", "retries": 2, "backoff_s": 0, "steps": [
        {"name": "m", "kind": "map", "program": "bad.json"}]}  # fmt: skip
    outcome = _run(spec, runs, db, tmp_path)
    step = outcome.steps[0]
    assert step.status == "failed" and step.tries == 1
    assert "not retried" in step.message and "StencilFlowError" in step.message
    assert len(db.attempts(outcome.run_id, "m")) == 1
    assert "not retried" in db.get_step(outcome.run_id, "m")["message"]


def test_transient_failure_is_still_retried(tmp_path, runs, db):
    """Reference: a failure that records no configuration error is retried. A command step
    exiting 2 (exit statuses of user commands carry no meaning) runs all 1 + 2 tries."""
    spec = {"name": "flaky", "retries": 2, "backoff_s": 0, "steps": [
        {"name": "c", "kind": "command", "argv": [sys.executable, "-c", "raise SystemExit(2)"]}]}  # fmt: skip
    with pytest.raises(SpecError):  # (the argv check refuses spaces: use a script instead)
        parse_spec(spec, "t.yaml")
    script = tmp_path / "exit2.py"
    script.write_text("raise SystemExit(2)\n")
    spec["steps"][0]["argv"] = [sys.executable, str(script)]
    outcome = _run(spec, runs, db)
    assert outcome.steps[0].status == "failed" and outcome.steps[0].tries == 3
    assert [a["try"] for a in db.attempts(outcome.run_id, "c")] == [1, 2, 3]


def test_cli_records_the_error_of_a_step(tmp_path, monkeypatch):
    """Reference: is_permanent's rule (user errors that are ValueErrors, usage errors). Inside
    a step ($STRATOFLOW_STEP_ERROR set) the CLI writes the error it exits with: a StencilFlow
    error and an argparse usage error are permanent; nothing is written outside a step."""
    (tmp_path / "bad.json").write_text("[]")
    record = tmp_path / ".step-error.json"
    monkeypatch.setenv(STEP_ERROR_ENV, str(record))
    assert main(["map", str(tmp_path / "bad.json")]) == 1
    saved = read_step_error(tmp_path)
    assert saved is not None and saved["error"] == "StencilFlowError" and saved["permanent"]
    record.unlink()
    with pytest.raises(SystemExit):
        main(["map", "--clock-mhz"])  # the option lacks its value
    assert json.loads(record.read_text())["permanent"] is True
    record.unlink()
    monkeypatch.delenv(STEP_ERROR_ENV)
    assert main(["map", str(tmp_path / "bad.json")]) == 1
    assert not record.exists()
    assert not is_permanent(WorkflowError("Parsl could not start"))
    assert not is_permanent(ValueError("a bug, not a user error"))
    assert is_permanent(SpecError("bad key"))

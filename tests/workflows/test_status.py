"""Step and run statuses: enums in the code, their string values in the run database."""

from __future__ import annotations

import sqlite3

import pytest

from workflows.cli import main
from workflows.report import build_report
from workflows.status import FINISHED, RunStatus, StepStatus


def test_statuses_and_what_counts_as_finished():
    assert [s.value for s in StepStatus] == [
        "pending", "running", "done", "cached", "failed", "blocked", "interrupted"]  # fmt: skip
    assert [s.value for s in RunStatus] == ["running", "done", "failed", "interrupted"]
    assert {s for s in StepStatus if s.finished} == FINISHED == {StepStatus.DONE, StepStatus.CACHED}
    assert StepStatus("cached") is StepStatus.CACHED and f"{StepStatus.BLOCKED}" == "blocked"
    assert "done" in FINISHED and "failed" not in FINISHED  # rows hold the strings


def test_database_stores_the_string_values(db):
    db.begin_run("r1", "r", "h", "{}", "", "threads", "/nowhere/r1")
    db.set_step("r1", "a", status=StepStatus.DONE, step_hash="x")
    db.update_run("r1", status=RunStatus.FAILED)
    raw = sqlite3.connect(db.path)
    assert raw.execute("SELECT status, typeof(status) FROM steps").fetchone() == ("done", "text")
    assert raw.execute("SELECT status FROM runs").fetchone() == ("failed",)
    raw.close()
    assert db.get_step("r1", "a")["status"] == StepStatus.DONE
    assert [r["step_id"] for r in db.finished_steps_with_hash("x")] == ["a"]
    with pytest.raises(ValueError, match="not_landed"):
        db.set_step("r1", "a", status="not_landed")  # only the statuses of StepStatus


def test_a_database_with_statuses_this_version_does_not_write_stays_readable(db, runs, capsys):
    """Rows with other status strings (e.g. a run 'incomplete', a step 'not_landed') are
    listed, shown and reported as they are."""
    db.begin_run("old-run", "old", "h", "{}", "", "local", str(runs / "old-run"))
    db.set_step("old-run", "tc2", kind="fv3", step_hash="y")
    db.set_step("old-run", "ok", kind="command", status=StepStatus.DONE, step_hash="z",
                out_dir=str(runs / "old-run/steps/ok/out"))  # fmt: skip
    with sqlite3.connect(db.path) as raw:
        raw.execute("UPDATE runs SET status = 'incomplete', ended = started + 1")
        raw.execute("UPDATE steps SET status = 'not_landed' WHERE step_id = 'tc2'")
    loc = ["--runs-dir", str(runs)]
    assert main(["runs", "list", *loc]) == 0
    listing = capsys.readouterr().out
    assert "| old-run | incomplete |" in listing and "1/2" in listing
    assert main(["runs", "show", "old-run", *loc]) == 0
    assert "| tc2 | fv3 | not_landed |" in capsys.readouterr().out
    text, _ = build_report(db, "old-run")
    assert "| tc2 | fv3 | not_landed |" in text and "### ok" in text

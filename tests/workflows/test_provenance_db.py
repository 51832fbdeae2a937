"""The run database and the `runs` commands on bad input: damaged files, odd run ids, runs
folders that are files, a reader of stdout that goes away."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.badinput.setups_runs import RUN_ID, damage_page, recorded_run
from workflows.cli import main
from workflows.errors import WorkflowError
from workflows.provenance import SCHEMA, ProvenanceDB


def _page_count(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        n = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.close()
    return n


@pytest.mark.parametrize("damage", ["garbage", "page-2", "last-page"])
def test_damaged_database_is_a_named_error(damage, tmp_path):
    """Reference: SQLite's own verdict (quick_check / SQLITE_CORRUPT / SQLITE_NOTADB). A file
    of garbage bytes, and a real run database with its second or its last page overwritten,
    are refused when opened, with a WorkflowError that names the file, says it is damaged and
    what to do (move it aside, --db / $STRATOFLOW_DB); the file is left as it was."""
    path = tmp_path / "runs" / "stratoflow.db"
    if damage == "garbage":
        path.parent.mkdir()
        path.write_bytes(bytes((i * 7 + 3) % 256 for i in range(8192)))
    else:
        recorded_run(path)
        damage_page(path, 2 if damage == "page-2" else _page_count(path))
    before = path.read_bytes()
    with pytest.raises(WorkflowError) as info:
        ProvenanceDB(path)
    message = str(info.value)
    assert str(path) in message and "damaged" in message
    assert "move it aside" in message and "--db" in message and "$STRATOFLOW_DB" in message
    assert path.read_bytes() == before


@pytest.mark.parametrize("argv", [["runs", "list"], ["runs", "show", RUN_ID],
                                  ["runs", "clean", "--all"]])  # fmt: skip
def test_runs_commands_on_a_damaged_database(argv, tmp_path, caplog):
    """Reference: the CLI's error contract (exit 1, one line naming the file). The `runs`
    commands on a database with an overwritten page fail with that message, and `clean`
    deletes no run folder."""
    runs = tmp_path / "runs"
    run_dir = recorded_run(runs / "stratoflow.db")
    damage_page(runs / "stratoflow.db")
    assert main([*argv, "--runs-dir", str(runs), "--db", str(runs / "stratoflow.db")]) == 1
    assert "is damaged" in caplog.text and str(runs / "stratoflow.db") in caplog.text
    assert run_dir.is_dir()


def test_older_database_gains_the_step_key_columns(tmp_path):
    """Reference: the current schema. A database written before the step-key columns existed
    opens, keeps its rows and gains step_key, inputs_hash and reason."""
    path = tmp_path / "old.db"
    old = SCHEMA.replace("    step_key TEXT, inputs_hash TEXT, reason TEXT,\n", "")
    assert old != SCHEMA
    with sqlite3.connect(path) as conn:
        conn.executescript(old)
        conn.execute("INSERT INTO steps (run_id, step_id, status) VALUES ('r-1', 's', 'done')")
    conn.close()
    with ProvenanceDB(path) as db:
        row = db.get_step("r-1", "s")
        assert row is not None and row["status"] == "done"
        assert {"step_key", "inputs_hash", "reason"} <= row.keys()
        db.set_step("r-1", "s", reason="ran: no earlier result")
        assert db.get_step("r-1", "s")["reason"] == "ran: no earlier result"


@pytest.mark.parametrize("bad", ["", "  ", "*", "demo*", "demo%", "de?o", "[d]emo", "demo 0"])
def test_run_ids_are_literal(bad, tmp_path):
    """Reference: run ids are [A-Za-z0-9_-]+, matched exactly or by unique prefix. Empty,
    blank and pattern-looking ids are refused with a message; `runs clean` with one deletes
    nothing (the run folder and record stay)."""
    runs = tmp_path / "runs"
    run_dir = recorded_run(runs / "stratoflow.db")
    with ProvenanceDB(runs / "stratoflow.db") as db:
        with pytest.raises(WorkflowError, match="names no run") as info:
            db.get_run(bad)
        assert ("empty run id" in str(info.value)) == (not bad.strip())
    assert main(["runs", "clean", bad, "--runs-dir", str(runs),
                 "--db", str(runs / "stratoflow.db")]) == 1  # fmt: skip
    assert run_dir.is_dir()
    with ProvenanceDB(runs / "stratoflow.db") as db:
        assert db.get_run(RUN_ID)["run_id"] == RUN_ID


def test_prefix_match_is_literal(tmp_path):
    """Reference: prefix matching by string comparison. '_' is no wildcard (it was one under
    SQL LIKE): 'demo_' does not match 'demo-0123456789'; 'demo-01' does."""
    with ProvenanceDB(tmp_path / "db.sqlite") as db:
        db.begin_run(RUN_ID, "demo", "0", "{}", "", "inline", str(tmp_path))
        assert db.get_run("demo-01")["run_id"] == RUN_ID
        with pytest.raises(WorkflowError, match="is not in"):
            db.get_run("demo_")


def test_runs_dir_that_is_a_file(tmp_path, caplog):
    """Reference: the CLI's error contract. --runs-dir naming a file is refused by `runs list`
    and `run` with a message naming it and the option, and the file is unchanged."""
    notadir = tmp_path / "notadir"
    notadir.write_text("a file\n")
    assert main(["runs", "list", "--runs-dir", str(notadir)]) == 1
    spec = tmp_path / "s.yaml"
    spec.write_text("name: s\nsteps:\n  - {name: s, kind: command, argv: ['true']}\n")
    assert main(["run", str(spec), "--site", "inline", "--runs-dir", str(notadir)]) == 1
    assert caplog.text.count(f"runs folder {notadir} is a file, not a folder") == 2
    assert "--runs-dir" in caplog.text and notadir.read_text() == "a file\n"
    with pytest.raises(WorkflowError, match="is a folder"):
        ProvenanceDB(tmp_path)


def test_database_folder_that_cannot_be_created(tmp_path):
    """Reference: the error contract. A database whose folder would be inside a file names
    that file; one in a folder where files cannot be created (/proc) names that folder (found
    by a probe file before SQLite opens anything) and the option that chooses another."""
    (tmp_path / "f").write_text("")
    with pytest.raises(WorkflowError, match=f"{tmp_path / 'f'} is a file, not a folder"):
        ProvenanceDB(tmp_path / "f" / "runs" / "stratoflow.db")
    if Path("/proc/self").is_dir():
        with pytest.raises(WorkflowError, match="run database folder /proc is not writable.*--db"):
            ProvenanceDB("/proc/stratoflow-test.db")


def test_show_into_a_closed_pipe_exits_quietly(tmp_path):
    """Reference: the Python docs' SIGPIPE recipe (`cmd | head`). `runs show` writing into a
    pipe whose reader has already gone exits with status 141 and no traceback."""
    runs = tmp_path / "runs"
    recorded_run(runs / "stratoflow.db")
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "workflows.cli", "runs", "show", RUN_ID, "--runs-dir",
             str(runs), "--db", str(runs / "stratoflow.db")],
            stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=120, cwd=tmp_path,
        )  # fmt: skip
    finally:
        os.close(write_end)
    assert proc.returncode == 141, proc.stderr
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr


def test_database_identity_and_read_only_open(tmp_path, caplog):
    """A run database carries its identity (a legacy one is stamped when a run opens it); the
    tuning database or another application's file is refused by name and left unchanged, by the
    writing and the reading commands; `runs list|show` create nothing."""
    from mapping.tuning.db import TuningDB
    from stencils.dbfile import header
    from workflows.provenance import KIND

    legacy = tmp_path / "legacy.db"
    with sqlite3.connect(legacy) as conn:
        conn.executescript(SCHEMA)
    conn.close()
    with ProvenanceDB(legacy, read_only=True) as db:
        assert db.list_runs() == []
    assert header(legacy) == (0, 0)  # reading does not stamp
    ProvenanceDB(legacy).close()
    assert header(legacy) == (KIND.application_id, KIND.version)
    tuning = tmp_path / "tuning.sqlite"
    TuningDB(tuning, machine="m")
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE runs (id)")
    conn.close()
    for path, why in ((tuning, "is a stratoflow tuning database"), (other, "not a run database")):
        before = path.read_bytes()
        for argv in (["runs", "list"], ["runs", "show", "x"], ["runs", "clean", "--all"]):
            caplog.clear()
            assert main([*argv, "--db", str(path), "--runs-dir", str(tmp_path)]) != 0
            assert why in caplog.text and path.name in caplog.text, (argv, caplog.text)
        assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["legacy.db", "other.sqlite", "tuning.sqlite"]
    caplog.clear()
    assert main(["runs", "list", "--runs-dir", str(tmp_path / "typo")]) == 1
    assert "runs folder" in caplog.text and "typo does not exist" in caplog.text
    assert not (tmp_path / "typo").exists()

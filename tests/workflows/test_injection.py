"""No path the user controls reaches a shell: runs dir, cwd, spec path, db path and a step's
output path full of shell metacharacters, on every site (inline, threads, local, slurm)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest

from tests.workflows.test_slurm import REASON as NO_SLURM
from workflows.outputs import sha256_file
from workflows.provenance import ProvenanceDB


def _nasty(marker: str) -> str:
    """A folder name with every kind of trouble: spaces, quotes, command substitution,
    backticks, ``;``, a newline and non-ASCII. Any shell that sees it unquoted creates a
    file whose name starts with ``marker``."""
    return f"q 'a\" $(touch {marker}1) `touch {marker}2`;touch {marker}3\nnl é✓"


SPEC = {"name": "inj", "retries": 0, "steps": [
    {"name": "a", "kind": "command", "argv": ["echo", "hello"]},
    {"name": "b", "kind": "command", "argv": ["cp", "{input.a}/stdout.log", "{out}/copy.txt"],
     "after": ["a"]}]}  # fmt: skip


def _parsl_links() -> set[Path]:
    return set(Path(tempfile.gettempdir()).glob("stratoflow-parsl-*"))


def _run_everywhere_nasty(tmp_path: Path, site: str, via_env: bool) -> None:
    marker = f"pwned-{uuid.uuid4().hex[:8]}-"
    top = tmp_path / _nasty(marker)
    cwd = top / _nasty(marker)
    cwd.mkdir(parents=True)
    spec_path = top / f"spec {_nasty(marker)}.yaml"
    spec_path.write_text(json.dumps(SPEC))
    runs = top / "runs" / _nasty(marker)
    db = top / f"d b $(touch {marker}db).db"
    cmd = [sys.executable, "-m", "workflows.cli", "run", str(spec_path), "--site", site,
           "--no-progress"]  # fmt: skip
    env = dict(os.environ)
    if via_env:
        env.update(STRATOFLOW_RUNS_DIR=str(runs), STRATOFLOW_DB=str(db))
    else:
        cmd += ["--runs-dir", str(runs), "--db", str(db)]
    links_before = _parsl_links()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # a shell's `touch` writes into its working folder: all of them are under tmp_path, or
    # the test's own folder, the temporary folder or home
    found = list(tmp_path.glob(f"**/{marker}*"))
    for folder in (Path.cwd(), Path(tempfile.gettempdir()), Path.home()):
        found += list(folder.glob(f"{marker}*"))
    assert not found, f"a shell ran a path's metacharacters: {found}"
    (run_dir,) = [p for p in runs.iterdir() if p.is_dir()]
    assert (run_dir / "steps/b/out/copy.txt").read_text() == "hello\n"
    with ProvenanceDB(db) as database:
        row = database.get_run(run_dir.name)
        assert row["status"] == "done" and row["spec_path"] == str(spec_path)
        outputs = {o["path"]: o["sha256"] for o in database.outputs(run_dir.name, "b")}
    assert outputs["copy.txt"] == sha256_file(run_dir / "steps/b/out/copy.txt")
    assert not [p for p in _parsl_links() - links_before
                if (p / "parsl").resolve().is_relative_to(tmp_path)]  # links removed  # fmt: skip


@pytest.mark.parametrize("site", ["inline", "threads", "local"])
def test_metacharacter_paths_reach_no_shell(site, tmp_path):
    """Runs dir and db path from STRATOFLOW_RUNS_DIR / STRATOFLOW_DB, cwd, spec path and the
    steps' output folders all hold quotes, ``$()``, backticks, ``;``, a newline and non-ASCII:
    the run finishes with the copied output (checked against the text the first step printed
    and against its recorded SHA-256), and no shell created a marker file anywhere."""
    _run_everywhere_nasty(tmp_path, site, via_env=True)


def test_metacharacter_paths_given_as_options(tmp_path):
    """The same paths given as --runs-dir and --db (inline site): same checks."""
    _run_everywhere_nasty(tmp_path, "inline", via_env=False)


@pytest.mark.slurm
@pytest.mark.skipif(NO_SLURM is not None, reason=NO_SLURM or "")
def test_metacharacter_paths_reach_no_shell_on_slurm(tmp_path):
    """The same on Parsl's SlurmProvider (pilot jobs); same checks."""
    _run_everywhere_nasty(tmp_path, "slurm", via_env=True)


def test_task_runs_warm_up_then_mpi_program_without_a_shell(tmp_path):
    """A task file run by workflows.task_main: the warm-up runs before the program (order
    file), its printout goes to stderr, the MPI prefix comes from $PARSL_MPI_PREFIX split into
    words, and an argument full of metacharacters arrives byte for byte as one argument."""
    marker = "pwned-task-"
    cwd = tmp_path / _nasty(marker)
    cwd.mkdir()
    weird = _nasty(marker)
    record = "import sys, os; open('order', 'a').write(sys.argv[1] + '|' + os.environ.get('PFX', '') + '\\n'); print('printed', sys.argv[1])"  # noqa: E501
    task = {
        "cwd": str(cwd), "env": {"STEP_VAR": weird},
        "warm_argv": [sys.executable, "-c", record, "warm"],
        "argv": [sys.executable, "-c", record, weird], "mpi": True, "mpi_prefix": None,
        "cancel_file": str(tmp_path / "task.cancel"),
    }  # fmt: skip
    task_file = tmp_path / "task.json"
    task_file.write_text(json.dumps(task))
    env = dict(os.environ, PARSL_MPI_PREFIX="env PFX=from-prefix")
    proc = subprocess.run([sys.executable, "-m", "workflows.task_main", "run", str(task_file)],
                          env=env, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert (cwd / "order").read_text() == f"warm|\n{weird}|from-prefix\n"
    assert proc.stdout == f"printed {weird}\n" and "printed warm" in proc.stderr
    info = dict(line.split("=", 1) for line in (cwd / ".taskinfo").read_text().splitlines())
    assert info["pid"] == info["pgid"]  # the task led its own process group
    assert not list(tmp_path.glob(f"**/{marker}*"))

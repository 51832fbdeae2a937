"""No path the user controls reaches a shell: runs dir, cwd, spec path, db path and a step's
output path full of shell metacharacters, on every site (inline, threads, local; slurm in
tests/workflows/test_slurm.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.workflows.nasty_paths import nasty, run_everywhere_nasty


@pytest.mark.parametrize("site", ["inline", "threads", "local"])
def test_metacharacter_paths_reach_no_shell(site, tmp_path):
    """Runs dir and db path from STRATOFLOW_RUNS_DIR / STRATOFLOW_DB, cwd, spec path and the
    steps' output folders all hold quotes, ``$()``, backticks, ``;``, a newline and non-ASCII:
    the run finishes with the copied output (checked against the text the first step printed
    and against its recorded SHA-256), and no shell created a marker file anywhere."""
    run_everywhere_nasty(tmp_path, site, via_env=True)


def test_metacharacter_paths_given_as_options(tmp_path):
    """The same paths given as --runs-dir and --db (inline site): same checks."""
    run_everywhere_nasty(tmp_path, "inline", via_env=False)


def test_task_runs_warm_up_then_mpi_program_without_a_shell(tmp_path):
    """A task file run by workflows.task_main: the warm-up runs before the program (order
    file), its printout goes to stderr, the MPI prefix comes from $PARSL_MPI_PREFIX split into
    words, and an argument full of metacharacters arrives byte for byte as one argument."""
    marker = "pwned-task-"
    cwd = tmp_path / nasty(marker)
    cwd.mkdir()
    weird = nasty(marker)
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

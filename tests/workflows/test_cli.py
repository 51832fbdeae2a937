"""The commands: stratoflow run / runs list|show|clean / submit --dry-run, and their errors."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from workflows.cli import main


def _spec(tmp_path: Path, scripts: dict[str, Path], name: str = "cli") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(json.dumps({"name": name, "retries": 0, "steps": [
        {"name": "count", "kind": "mpi", "script": str(scripts["count"]), "ranks": 1,
         "args": [str(tmp_path / "counter.txt"), "{out}"]},
        {"name": "ranks", "kind": "mpi", "script": str(scripts["mpi_sum"]), "ranks": 2,
         "args": ["{out}"], "after": ["count"]}]}))  # fmt: skip
    return path


def test_run_list_show_clean(tmp_path, scripts, runs, capsys):
    spec = _spec(tmp_path, scripts)
    loc = ["--runs-dir", str(runs)]
    assert main(["run", str(spec), "--site", "threads", "--no-progress", *loc]) == 0
    out = capsys.readouterr().out
    assert "| ranks | mpi | done | 1 |" in out and "report:" in out
    assert main(["runs", "list", *loc]) == 0
    listing = capsys.readouterr().out
    run_id = next(line.split("|")[1].strip() for line in listing.splitlines() if "cli-" in line)
    assert "| done | threads |" in listing and "2/2" in listing
    assert main(["runs", "show", run_id[:8], *loc]) == 0  # a unique prefix is enough
    shown = capsys.readouterr().out
    assert "sum.json" in shown and "spec hash" in shown and "stratoflow commit" in shown
    assert main(["runs", "clean", run_id, *loc]) == 0
    assert not (runs / run_id).exists()
    assert main(["runs", "list", *loc]) == 0
    assert "no runs recorded" in capsys.readouterr().out


def test_unknown_run_is_a_clear_error(runs, caplog):
    assert main(["runs", "show", "nope", "--runs-dir", str(runs)]) == 1
    assert "run 'nope' is not in the run database" in caplog.text


def test_injection_attempt_is_rejected_before_anything_runs(tmp_path, runs, caplog):
    spec = tmp_path / "evil.yaml"
    spec.write_text("name: evil\nsteps:\n  - name: x\n    kind: command\n"
                    "    argv: [echo, 'pwned; touch /tmp/pwned']\n")  # fmt: skip
    assert main(["run", str(spec), "--site", "threads", "--runs-dir", str(runs)]) == 1
    assert "kind command).argv[1]" in caplog.text and "could reach a shell" in caplog.text
    assert not any(runs.iterdir())  # nothing ran, nothing recorded


def test_missing_data_path_and_unknown_site(tmp_path, runs, caplog):
    spec = tmp_path / "map.yaml"
    spec.write_text("name: m\nsteps:\n  - {name: m, kind: map, program: missing.json}\n")
    assert main(["run", str(spec), "--runs-dir", str(runs)]) == 1
    assert "steps[0] (m).program: file not found" in caplog.text
    ok = tmp_path / "ok.yaml"
    ok.write_text("name: ok\nsteps:\n  - {name: a, kind: command, argv: ['true']}\n")
    assert main(["run", str(ok), "--site", "moon", "--runs-dir", str(runs)]) == 1
    assert "site 'moon': no such profile; allowed: inline, local, slurm, threads" in caplog.text


def test_submit_dry_run_script_is_quoted(tmp_path, scripts, runs, capsys):
    odd = tmp_path / "dir with 'quotes' $HOME"
    odd.mkdir()
    spec = _spec(tmp_path, scripts, name="batch")
    assert main(["submit", str(spec), "--dry-run", "--runs-dir", str(odd / "runs")]) == 0
    script = capsys.readouterr().out
    assert script.startswith("#!/bin/bash\n#SBATCH --job-name=batch-")
    assert "#SBATCH --ntasks=2" in script and "#SBATCH --overcommit" in script
    exec_line = next(line for line in script.splitlines() if line.startswith("exec "))
    argv = shlex.split(exec_line)[1:]
    assert argv[argv.index("--runs-dir") + 1] == str((odd / "runs").resolve())  # one word
    assert argv[argv.index("--site") + 1] == "inline"


def test_submit_needs_a_slurm_site(tmp_path, scripts, runs, caplog):
    spec = _spec(tmp_path, scripts)
    assert main(["submit", str(spec), "--site", "local", "--dry-run", "--runs-dir", str(runs)]) == 1
    assert "submit needs a Slurm site profile" in caplog.text


@pytest.mark.parametrize("command", ["run", "runs", "submit"])
def test_help_texts(command, capsys):
    with pytest.raises(SystemExit) as info:
        main([command, "--help"])
    assert info.value.code == 0
    assert len(capsys.readouterr().out) > 200

"""Paths full of shell metacharacters, and a workflow run through all of them on one site
(tests/workflows/test_injection.py, and tests/workflows/test_slurm.py for the Slurm site)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

from workflows.outputs import sha256_file
from workflows.provenance import ProvenanceDB


def nasty(marker: str) -> str:
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


def run_everywhere_nasty(tmp_path: Path, site: str, via_env: bool) -> None:
    """Run a two-step workflow on ``site`` with the runs dir, db, cwd, spec path and outputs
    under metacharacter folders; assert it finished and that no shell created a marker."""
    marker = f"pwned-{uuid.uuid4().hex[:8]}-"
    top = tmp_path / nasty(marker)
    cwd = top / nasty(marker)
    cwd.mkdir(parents=True)
    spec_path = top / f"spec {nasty(marker)}.yaml"
    spec_path.write_text(json.dumps(SPEC))
    runs = top / "runs" / nasty(marker)
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

"""Memoisation keyed on the code: a step reruns when the sources or libraries it runs change,
is reused when they do not, and the run database says which happened and why."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

import ens10
import workflows
from workflows.cli import main
from workflows.engine import WorkflowRunner, step_hash, step_key
from workflows.kinds import KINDS
from workflows.kinds.code import CODE, CodeIdentity, StepKey, code_changes, rerun_reason
from workflows.provenance import ProvenanceDB
from workflows.sites import load_site
from workflows.spec import expand, parse_spec

SAMPLE_SPEC = """\
name: codekey
retries: 0
steps:
  - name: sample
    kind: ens10_sample
    grid: 30
    n_dates: 1
    years: 2016-2017
"""


def _run_cli(spec: Path, runs: Path, src: Path, cwd: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STRATOFLOW_")}
    env |= {"PYTHONPATH": str(src), "STRATOFLOW_DB": str(runs / "stratoflow.db")}
    import subprocess

    proc = subprocess.run(
        [sys.executable, "-m", "workflows.cli", "run", str(spec), "--site", "inline",
         "--runs-dir", str(runs), "--no-progress"],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_changed_module_constant_reruns_the_step(tmp_path, capsys):
    """Reference: the definition of memoisation by code. An ens10_sample step runs from a copy
    of the ens10 (and workflows) sources on PYTHONPATH; rerun with the copy unchanged it is reused (one
    execution, identical outputs); after the module constant ``G`` in the copy's sample.py is
    changed it runs again, its z500 output differs from the first (the changed code ran), and
    the run database and ``runs show`` give the reason: the ens10 sources changed."""
    src = tmp_path / "src"  # ens10 and workflows (the kind's packages), frozen for the test
    for package in (ens10, workflows):
        shutil.copytree(Path(package.__file__).parent, src / package.__name__,
                        ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    spec, runs = tmp_path / "s.yaml", tmp_path / "runs"
    spec.write_text(SAMPLE_SPEC)

    _run_cli(spec, runs, src, tmp_path)
    with ProvenanceDB(runs / "stratoflow.db") as db:
        run_id = db.list_runs()[0]["run_id"]
        first = db.get_step(run_id, "sample")
        first_outputs = {o["path"]: o["sha256"] for o in db.outputs(run_id, "sample")}
    assert first["reason"] == "ran: no earlier result" and first["tries"] == 1
    code = json.loads(first["step_key"])["code"]
    assert set(code["sources"]) == {"ens10", "workflows"}
    assert code["sources"]["ens10"] == CodeIdentity().source_digest("ens10")  # same files
    assert code["sources"]["workflows"] != "not installed"
    assert code["libraries"]["xarray"] not in ("", "not installed")

    _run_cli(spec, runs, src, tmp_path)  # unchanged code: reused
    with ProvenanceDB(runs / "stratoflow.db") as db:
        again = db.get_step(run_id, "sample")
        assert {o["path"]: o["sha256"] for o in db.outputs(run_id, "sample")} == first_outputs
        assert len(db.attempts(run_id, "sample")) == 1  # not executed again
    assert again["reason"] == "reused: finished earlier in this run with the same key"
    assert again["step_hash"] == first["step_hash"]

    sample_py = src / "ens10" / "sample.py"
    text = sample_py.read_text()
    assert "\nG = 9.80665\n" in text
    sample_py.write_text(text.replace("\nG = 9.80665\n", "\nG = 9.5\n"))
    _run_cli(spec, runs, src, tmp_path)
    with ProvenanceDB(runs / "stratoflow.db") as db:
        changed = db.get_step(run_id, "sample")
        outputs = {o["path"]: o["sha256"] for o in db.outputs(run_id, "sample")}
        assert len(db.attempts(run_id, "sample")) == 2
    assert changed["step_hash"] != first["step_hash"]
    assert changed["reason"] == f"ran: code changed since run {run_id} step sample: ens10 sources"
    assert outputs.keys() == first_outputs.keys()
    for path in ("netcdf/ERA5_z500.nc", "netcdf/ENS10_z500_members.nc"):  # geopotential: G
        assert outputs[path] != first_outputs[path], path
    t850 = [p for p in outputs if "t850" in p]  # G enters geopotential only
    assert t850 and all(outputs[p] == first_outputs[p] for p in t850)

    capsys.readouterr()
    assert main(["runs", "show", run_id, "--runs-dir", str(runs),
                 "--db", str(runs / "stratoflow.db")]) == 0  # fmt: skip
    shown = capsys.readouterr().out
    assert "code changed since run" in shown and "ens10 sources" in shown
    assert f"ens10 {json.loads(changed['step_key'])['code']['sources']['ens10'][:12]}" in shown


def _package(root: Path, value: int) -> Path:
    pkg = root / "toypkg"
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text(f"VALUE = {value}\n")
    return pkg


def test_source_digest_follows_file_contents_only(tmp_path, monkeypatch):
    """Reference: the digest's definition (paths and contents of the package's files). Equal
    for an identical copy elsewhere, unchanged by bytecode caches and hidden files, different
    after one constant changes (once the per-process cache is cleared, not before)."""
    monkeypatch.syspath_prepend(str(tmp_path / "a"))
    pkg = _package(tmp_path / "a", 1)
    ident = CodeIdentity()
    before = ident.source_digest("toypkg")
    (pkg / "__pycache__").mkdir()
    (pkg / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"junk")
    (pkg / ".hidden").write_text("x")
    assert CodeIdentity().source_digest("toypkg") == before
    other = CodeIdentity()
    _package(tmp_path / "a", 2)
    assert ident.source_digest("toypkg") == before  # hashed once per process (cached)
    assert other.source_digest("toypkg") != before
    ident.clear()
    assert ident.source_digest("toypkg") == other.source_digest("toypkg")
    assert CodeIdentity().source_digest("no_such_package_xyz") == "not installed"


def test_step_hash_follows_code_key_and_library_versions(monkeypatch):
    """Reference: step hash = digest(inputs, deps, code key). A different library version or
    source digest of the kind's packages changes an ens10_sample step's hash; a package the
    kind does not import (fv3core) does not."""
    (inst,) = expand(parse_spec({"name": "k", "steps": [
        {"name": "s", "kind": "ens10_sample", "grid": 30, "n_dates": 1}]}, "k.yaml"))  # fmt: skip
    base = step_hash(inst, [])
    assert step_key(inst, []).code == KINDS["ens10_sample"].code_key()
    monkeypatch.setitem(CODE._versions, "xarray", "0.0.1")
    assert step_hash(inst, []) != base
    monkeypatch.setitem(CODE._versions, "xarray", CodeIdentity().version("xarray"))
    assert step_hash(inst, []) == base
    monkeypatch.setitem(CODE._sources, "fv3core", "changed")
    assert step_hash(inst, []) == base
    monkeypatch.setitem(CODE._sources, "ens10", "changed")
    assert step_hash(inst, []) != base


def test_rerun_reasons_name_the_changed_part():
    """Reference: the reason texts for each kind of difference between two step keys."""
    code = {"stratoflow": "0.1.0", "python": "3.11.7", "sources": {"ens10": "a", "workflows": "b"},
            "libraries": {"numpy": "2.0.0"}}  # fmt: skip
    key = StepKey({"kind": "x", "params": {"n": 1}}, ("d1",), code)
    row = {"run_id": "r-1", "step_id": "s", "step_key": key.to_json()}
    assert rerun_reason(key, None) == "no earlier result"
    assert rerun_reason(key, row) == "the result of run r-1 step s is no longer usable"
    params = StepKey({"kind": "x", "params": {"n": 2}}, ("d1",), code)
    assert rerun_reason(params, row).startswith("parameters or input files changed since run r-1")
    deps = StepKey(key.inputs, ("d2",), code)
    assert rerun_reason(deps, row) == "a step it reads from changed since run r-1 step s"
    newer = code | {"sources": {"ens10": "c", "workflows": "b"}, "libraries": {"numpy": "2.1.0"}}
    assert code_changes(code, newer) == ["ens10 sources", "numpy 2.0.0 -> 2.1.0"]
    assert rerun_reason(StepKey(key.inputs, ("d1",), newer), row) == (
        "code changed since run r-1 step s: ens10 sources, numpy 2.0.0 -> 2.1.0"
    )


WRITE = "import pathlib, sys\npathlib.Path(sys.argv[2], 'o.txt').write_text(sys.argv[1] + '\\n')\n"


def _command_spec(name: str, script: Path, text: str = "x") -> dict:
    return {"name": name, "retries": 0, "steps": [
        {"name": "w", "kind": "command", "argv": [sys.executable, str(script), text, "{out}"]}]}  # fmt: skip


def _run(spec: dict, runs: Path, db: ProvenanceDB, force: bool = False):
    parsed = parse_spec(spec, "t.yaml")
    return WorkflowRunner(parsed, load_site("inline"), runs, db, force=force, progress=False)()


@pytest.mark.parametrize("case", ["force", "checksum", "other-run", "parameters"])
def test_reason_recorded_for_each_decision(case, tmp_path, runs, db):
    """Reference: the decision rules of memoisation, on a one-step command workflow run twice
    (inline site): --force reruns; an output that no longer matches its checksum reruns; an
    identical step of another run is reused from it; changed parameters rerun, compared with
    the latest run of the same spec name."""
    script = tmp_path / "write.py"
    script.write_text(WRITE)
    first = _run(_command_spec("a", script), runs, db)
    out = first.run_dir / "steps/w/out/o.txt"
    assert out.read_text() == "x\n"
    if case == "force":
        again = _run(_command_spec("a", script), runs, db, force=True)
        expected = "ran: --force"
    elif case == "checksum":
        out.write_text("tampered\n")
        again = _run(_command_spec("a", script), runs, db)
        expected = f"ran: the outputs of run {first.run_id} step w (same key) failed their checksums"
    elif case == "other-run":
        again = _run(_command_spec("b", script), runs, db)
        expected = f"reused: from run {first.run_id} step w with the same key"
    else:
        again = _run(_command_spec("a", script, text="y"), runs, db)
        expected = f"ran: parameters or input files changed since run {first.run_id} step w"
    assert db.get_step(again.run_id, "w")["reason"] == expected
    assert (again.run_dir / "steps/w/out/o.txt").read_text() == ("y\n" if case == "parameters" else "x\n")
    assert again.steps[0].tries == (0 if case == "other-run" else 1)

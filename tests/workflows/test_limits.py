"""Runaway specs: the bound on step instances (counted before anything is expanded or written)
and SIGTERM answered within seconds while a large sweep is expanded."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from workflows.errors import SpecError
from workflows.spec import DEFAULT_MAX_STEPS, check_size, expand, max_steps, parse_spec

STRATOFLOW = Path(sys.executable).parent / "stratoflow"


def _sweep_spec(stencils: int, ks: int, spaces: int = 1) -> dict:
    return {"name": "huge", "steps": [
        {"name": "t", "kind": "tune", "mode": "search",
         "sweep": {"stencil": [f"s{i}" for i in range(stencils)], "k": list(range(1, ks + 1)),
                   "space": ["tiny", "compact", "full"][:spaces]}},
        {"name": "u", "kind": "tune", "mode": "search"},
    ]}  # fmt: skip


def test_the_bound_states_the_count_before_expansion(monkeypatch) -> None:
    data = _sweep_spec(300, 30, 3)  # 27,000 + 1
    with pytest.raises(SpecError, match=r"expands to 27,001 step instances \(t: 27,000, u: 1\), "
                                        r"more than the limit of 1,000.*--max-steps"):
        parse_spec(data, "big.yaml")
    spec = parse_spec(_sweep_spec(10, 10), "ok.yaml")  # 101 instances
    assert check_size(spec) == 101 and len(expand(spec)) == 101
    with pytest.raises(SpecError, match="limit of 100"):
        expand(spec, 100)
    monkeypatch.setenv("STRATOFLOW_MAX_STEPS", "50")
    assert max_steps() == 50 and max_steps(7) == 7
    with pytest.raises(SpecError, match="limit of 50.*STRATOFLOW_MAX_STEPS"):
        parse_spec(_sweep_spec(10, 10), "ok.yaml")
    monkeypatch.setenv("STRATOFLOW_MAX_STEPS", "many")
    with pytest.raises(SpecError, match=r"\$STRATOFLOW_MAX_STEPS='many'"):
        max_steps()
    monkeypatch.delenv("STRATOFLOW_MAX_STEPS")
    assert max_steps() == DEFAULT_MAX_STEPS


def test_sigterm_during_the_expansion_of_a_large_sweep_ends_within_5_s(tmp_path: Path) -> None:
    """192,000 step instances take far longer than 5 s to expand and validate: SIGTERM two
    seconds in ends the command within 5 s, as interrupted (143), without a traceback and
    without a runs folder."""
    spec = tmp_path / "huge.yaml"
    spec.write_text(yaml.safe_dump(_sweep_spec(1000, 64, 3)))
    env = {**os.environ, "STRATOFLOW_RUNS_DIR": str(tmp_path / "runs")}
    proc = subprocess.Popen(
        [str(STRATOFLOW), "run", str(spec), "--max-steps", "1000000", "--site", "threads"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    try:
        time.sleep(2.5)
        assert proc.poll() is None, proc.communicate()
        sent = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=5)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert took < 5, f"still running {took:.1f} s after SIGTERM"
    assert proc.returncode == 143, stderr
    assert "interrupted by SIGTERM" in stderr and "Traceback" not in stderr, stderr
    assert not (tmp_path / "runs").exists()


def test_a_signal_while_steps_are_checked_and_recorded_stops_the_run(tmp_path: Path) -> None:
    """The loop that checks and records each step before any runs stops at the first SIGTERM
    or SIGINT (here: the stop flag the signal handler sets, raised after the first step): the
    run ends interrupted and the later steps are never recorded."""
    from workflows.engine import WorkflowRunner
    from workflows.provenance import ProvenanceDB
    from workflows.sites import load_site

    spec = parse_spec({"name": "stop", "steps": [
        {"name": f"s{i}", "kind": "command", "argv": ["true"]} for i in range(5)
    ]}, "stop.yaml")  # fmt: skip
    runs = tmp_path / "runs"
    runs.mkdir()
    with ProvenanceDB(runs / "stratoflow.db") as db:
        runner = WorkflowRunner(spec, load_site("threads"), runs, db, progress=False)
        checked: list[str] = []
        original = runner._precheck

        def precheck(inst, outcomes):  # noqa: ANN001, ANN202
            checked.append(inst.id)
            runner._stop.set()  # what the first signal does
            return original(inst, outcomes)

        runner._precheck = precheck  # type: ignore[method-assign]
        with pytest.raises(KeyboardInterrupt):
            runner()
        assert checked == ["s0"]
        assert db.get_run(spec.run_id)["status"] == "interrupted"
        assert {s["step_id"] for s in db.steps(spec.run_id)} <= {"s0"}

"""Step kinds build the command lines of the capabilities they call (no execution here)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workflows.kinds import KINDS, PlanContext
from workflows.spec import parse_spec


def _step(data: dict, base: Path | None = None):
    return parse_spec({"name": "k", "steps": [data]}, "k.yaml", base).steps[0]


def test_fv3_plan_runs_on_6_layout2_ranks_after_a_serial_warm_up(tmp_path):
    kind = KINDS["fv3"]
    step = _step({"name": "tc", "kind": "fv3", "case": "williamson1", "resolution": 24,
                  "layout": 2, "days": 1})  # fmt: skip
    out = tmp_path / "out dir"
    plan = kind.plan(step, PlanContext(out, {}))
    assert plan.ranks == 24
    args = list(plan.argv)
    assert args[args.index("--case") + 1] == "williamson1"
    assert args[args.index("--layout") + 1] == "2"
    assert args[args.index("--output") + 1] == str(out / "williamson1_c24.nc")
    assert args[args.index("--backend") + 1] == "numpy" and "--no-progress" in args
    assert "--tuning-db" not in args  # no tuned schedules unless the step names a database
    warm = list(plan.warm_argv or ())
    assert "--output" not in warm and float(warm[warm.index("--days") + 1]) < 0.1
    assert warm[warm.index("--backend") + 1] == "numpy" and "--no-progress" in warm
    # workflows.task_main runs warm_argv serially before the MPI launch (tests/workflows/test_injection.py)


def test_fv3_plan_passes_the_tuning_database(tmp_path):
    """A step's tuning_db reaches the run and the serial warm-up (which builds the same tuned
    stencils), resolved against the spec's folder."""
    (tmp_path / "tuning.sqlite").write_bytes(b"")
    step = _step({"name": "tc", "kind": "fv3", "backend": "gt:cpu_ifirst",
                  "tuning_db": "tuning.sqlite"}, tmp_path)  # fmt: skip
    assert step.tuning_db == tmp_path / "tuning.sqlite" and step.file_fields() == ("tuning_db",)
    plan = KINDS["fv3"].plan(step, PlanContext(tmp_path / "out", {}))
    for argv in (list(plan.argv), list(plan.warm_argv or ())):
        assert argv[argv.index("--tuning-db") + 1] == str(tmp_path / "tuning.sqlite")
        assert argv[argv.index("--backend") + 1] == "gt:cpu_ifirst"


def test_fv3_plan_runs_the_non_hydrostatic_core(tmp_path):
    """``hydrostatic: false`` becomes ``--non-hydrostatic`` of the run and of its warm-up; a step
    without the key passes neither flag (the run's default or the namelist's)."""
    from workflows.cli import build_parser

    step = _step({"name": "nh", "kind": "fv3", "case": "baroclinic", "resolution": 12, "hydrostatic": False})
    plan = KINDS["fv3"].plan(step, PlanContext(tmp_path / "out", {}))
    for argv in (list(plan.argv), list(plan.warm_argv or ())):
        assert "--non-hydrostatic" in argv and "--hydrostatic" not in argv
    args = build_parser().parse_args(list(plan.argv)[list(plan.argv).index("fv3"):])
    assert args.hydrostatic is False
    assert step.fv3_config().hydrostatic is False
    plain = KINDS["fv3"].plan(_step({"name": "h", "kind": "fv3", "case": "baroclinic"}), PlanContext(tmp_path, {}))
    assert not {"--hydrostatic", "--non-hydrostatic"} & set(plain.argv)


def test_fv3_step_refuses_a_case_fv3core_does_not_run(tmp_path):
    """The spec is refused before anything runs, naming the step and fv3core's cases."""
    from fv3core.config import CASES
    from workflows.errors import SpecError

    with pytest.raises(SpecError) as info:
        _step({"name": "tc3", "kind": "fv3", "case": "williamson3"})
    msg = str(info.value)
    assert "kind fv3)" in msg and "step tc3" in msg and "'williamson3'" in msg
    assert "cases: " + ", ".join(CASES) in msg
    with pytest.raises(SpecError, match=r"step tc, sweep \[case=williamson4\].*williamson1"):
        _step({"name": "tc", "kind": "fv3", "sweep": {"case": ["williamson1", "williamson4"]}})
    with pytest.raises(SpecError, match="tuning_db: file not found"):
        _step({"name": "tc", "kind": "fv3", "tuning_db": "nope.sqlite"}, tmp_path)


def test_tune_transfer_copies_the_search_database(tmp_path):
    kind = KINDS["tune"]
    search_out = tmp_path / "search"
    search_out.mkdir()
    (search_out / "tuning.sqlite").write_bytes(b"db")
    step = parse_spec({"name": "k", "steps": [
        {"name": "search", "kind": "tune", "mode": "search", "stencil": "laplacian_3d"},
        {"name": "transfer", "kind": "tune", "stencil": "hdiff", "db_from": "search"}]},
        "k.yaml").steps[1]  # fmt: skip
    out = tmp_path / "out"
    out.mkdir()
    plan = kind.plan(step, PlanContext(out, {"search": [search_out]}))
    assert (out / "tuning.sqlite").read_bytes() == b"db"
    args = list(plan.argv)
    assert args[args.index("tune") + 1: args.index("tune") + 3] == ["transfer", "hdiff"]
    assert args[args.index("--db") + 1] == str(out / "tuning.sqlite")


def test_ens10_evaluate_uses_the_training_checkpoints(tmp_path):
    data, emos, out = tmp_path / "data", tmp_path / "emos", tmp_path / "out"
    for d in (data / "netcdf", emos, out):
        d.mkdir(parents=True)
    (emos / "result.json").write_text(json.dumps("emos_t2m.pt"))  # relative to the step folder
    spec = parse_spec({"name": "k", "steps": [
        {"name": "d", "kind": "ens10_sample"},
        {"name": "e", "kind": "ens10_train", "model": "emos", "data_from": "d"},
        {"name": "v", "kind": "ens10_evaluate", "data_from": "d", "models_from": ["e"]}]},
        "k.yaml")  # fmt: skip
    kind = KINDS["ens10_evaluate"]
    kwargs = kind.kwargs(spec.steps[2], PlanContext(out, {"d": [data], "e": [emos]}))
    assert kwargs == {"data_dir": str(data / "netcdf"), "checkpoints": [str(emos / "emos_t2m.pt")],
                      "out_dir": str(out)}  # fmt: skip


def test_command_placeholders(tmp_path):
    spec = parse_spec({"name": "k", "steps": [
        {"name": "a", "kind": "command", "argv": ["true"]},
        {"name": "b", "kind": "command", "argv": ["cp", "{input.a}/x", "{out}/y"],
         "after": ["a"]}]}, "k.yaml")  # fmt: skip
    plan = KINDS["command"].plan(spec.steps[1], PlanContext(tmp_path / "o", {"a": [tmp_path / "a"]}))
    assert plan.argv == ("cp", f"{tmp_path}/a/x", f"{tmp_path}/o/y")
    from workflows.errors import SpecError

    with pytest.raises(SpecError, match=r"unknown placeholder \{input.a\}"):
        parse_spec({"name": "k", "steps": [
            {"name": "a", "kind": "command", "argv": ["true"]},
            {"name": "b", "kind": "command", "argv": ["cat", "{input.a}"]}]}, "k.yaml")  # fmt: skip


@pytest.mark.parametrize("case", ["williamson1", "williamson2", "baroclinic"])
def test_fv3_warm_up_runs_at_least_a_step_of_each_case(case: str) -> None:
    """The serial cache warm-up of an fv3 step runs FV3Kind.WARM_DAYS of the case with its
    default time step: at least one step, never refused as shorter than half a step
    (reference: the case's default dt from FV3Config.from_dict)."""
    from fv3core.config import FV3Config
    from workflows.kinds.science import FV3Kind

    cfg = FV3Config.from_dict({"case": case, "days": FV3Kind.WARM_DAYS}, source="test")
    steps, dt = cfg.steps_for(1e-6)
    assert steps >= 1 and steps * dt <= 2 * 3600.0

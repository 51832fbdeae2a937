"""Run specs: validation errors name the key and allowed values; sweeps; canonical hashes."""

from __future__ import annotations

from pathlib import Path

import pytest

from workflows.errors import SpecError
from workflows.spec import expand, load_spec, parse_spec


def _spec(*steps: dict, **top) -> dict:
    return {"name": "t", "steps": list(steps)} | top


def _error(data: dict, base: Path | None = None) -> str:
    with pytest.raises(SpecError) as info:
        parse_spec(data, "t.yaml", base)
    return str(info.value)


def test_unknown_kind_lists_allowed_kinds():
    msg = _error(_spec({"name": "a", "kind": "quantum"}))
    assert "steps[0]: unknown kind" in msg
    assert "fv3" in msg and "ens10_train" in msg and "command" in msg


def test_wrong_types_name_the_key():
    msg = _error(_spec({"name": "a", "kind": "fv3", "resolution": "high", "layout": 0}))
    assert "kind fv3).resolution" in msg and "integer" in msg
    assert "kind fv3).layout" in msg and "greater than or equal to 1" in msg


def test_literal_errors_list_allowed_values():
    msg = _error(_spec({"name": "s", "kind": "ens10_sample"},
                       {"name": "a", "kind": "ens10_train", "model": "svm", "data_from": "s"}))  # fmt: skip
    assert "kind ens10_train).model" in msg
    assert "'emos'" in msg and "'mlp'" in msg


def test_unknown_key_lists_allowed_keys():
    msg = _error(_spec({"name": "a", "kind": "fv3", "resolutoin": 24}))
    assert "kind fv3).resolutoin: unknown key" in msg and "resolution" in msg


@pytest.mark.parametrize(
    "arg",
    ["$(rm -rf /)", "a;b", "`id`", "x && y", "a|b", "a > b", "it's", "line\nbreak", "$HOME"],
)
def test_shell_injection_is_rejected(arg: str):
    msg = _error(_spec({"name": "a", "kind": "command", "argv": ["echo", arg]}))
    assert "kind command).argv[1]" in msg and "could reach a shell" in msg


def test_injection_in_sweep_values_and_names_is_rejected():
    msg = _error(_spec({"name": "a", "kind": "tune", "sweep": {"stencil": ["x;reboot"]}}))
    assert "kind tune).sweep.stencil[0]" in msg
    msg = _error(_spec({"name": "a;b", "kind": "stencils_demo"}))
    assert "kind stencils_demo).name" in msg


def test_missing_data_path(tmp_path: Path):
    msg = _error(_spec({"name": "m", "kind": "map", "program": "nope.json"}), tmp_path)
    assert "steps[0] (m).program: file not found" in msg and str(tmp_path / "nope.json") in msg


def test_unknown_step_reference_and_cycle():
    msg = _error(_spec({"name": "e", "kind": "ens10_evaluate", "data_from": "s",
                        "models_from": ["m"]}))  # fmt: skip
    assert "refers to unknown step 's'" in msg
    msg = _error(_spec({"name": "a", "kind": "command", "argv": ["true"], "after": ["b"]},
                       {"name": "b", "kind": "command", "argv": ["true"], "after": ["a"]}))  # fmt: skip
    assert "cycle" in msg


def test_sweep_key_must_be_a_parameter():
    msg = _error(_spec({"name": "f", "kind": "fv3", "sweep": {"colour": [1]}}))
    assert "sweep key 'colour'" in msg and "resolution" in msg


def test_yaml_syntax_error_names_line(tmp_path: Path):
    path = tmp_path / "bad.yaml"
    path.write_text("name: x\nsteps:\n  - name: [unclosed\n")
    with pytest.raises(SpecError, match=r"bad.yaml: line \d+"):
        load_spec(path)


def test_sweep_expands_product_and_dependencies():
    spec = parse_spec(_spec(
        {"name": "prep", "kind": "command", "argv": ["true"]},
        {"name": "tc2", "kind": "fv3", "after": ["prep"],
         "sweep": {"resolution": [12, 24], "backend": ["numpy", "gt:cpu_ifirst"]}},
        {"name": "post", "kind": "command", "argv": ["true"], "after": ["tc2"]},
    ))  # fmt: skip
    inst = expand(spec)
    ids = [i.id for i in inst]
    assert ids[0] == "prep" and ids[-1] == "post" and len(ids) == 6
    assert "tc2[backend=gt:cpu_ifirst,resolution=24]" in ids
    sweep = [i for i in inst if i.spec_name == "tc2"]
    assert {(i.step.resolution, i.step.backend) for i in sweep} == {
        (12, "numpy"), (24, "numpy"), (12, "gt:cpu_ifirst"), (24, "gt:cpu_ifirst")}
    assert all(i.depends_on == ("prep",) for i in sweep)
    assert set(inst[-1].depends_on) == {i.id for i in sweep}
    assert all(":" not in i.dirname and "[" not in i.dirname for i in inst)


def test_hash_is_canonical():
    a = parse_spec({"name": "t", "description": "one",
                    "steps": [{"kind": "fv3", "name": "f", "resolution": 24}]})  # fmt: skip
    b = parse_spec({"steps": [{"resolution": 24, "name": "f", "kind": "fv3", "layout": 1}],
                    "name": "t", "description": "two"})  # fmt: skip
    c = parse_spec({"name": "t", "steps": [{"kind": "fv3", "name": "f", "resolution": 48}]})
    assert a.hash == b.hash  # key order, defaults and descriptions do not matter
    assert a.hash != c.hash
    assert a.run_id == f"t-{a.hash[:10]}"


def test_default_workflow_is_valid():
    from workflows.paths import DEFAULT_SPEC

    spec = load_spec(DEFAULT_SPEC)
    kinds = {s.kind for s in spec.steps}
    assert {"fv3", "map", "tune", "ens10_sample", "ens10_train", "ens10_evaluate"} <= kinds
    tc2 = next(s for s in spec.steps if s.name == "tc2")
    assert (tc2.case, tc2.resolution, tc2.ranks) == ("williamson2", 24, 6)


def test_example_specs_are_valid():
    from workflows.paths import DEFAULT_SPEC

    for path in sorted(DEFAULT_SPEC.parent.glob("*.yaml")):
        spec = load_spec(path)
        assert expand(spec), path
    sweep = load_spec(DEFAULT_SPEC.parent / "sweep.yaml")
    tc1 = [i for i in expand(sweep) if i.spec_name == "tc1"]
    assert sorted((i.step.resolution, i.step.ranks) for i in tc1) == [
        (12, 6), (12, 24), (24, 6), (24, 24)]


def test_generated_map_programs_need_no_file(tmp_path: Path):
    """`library:` and `synthetic:` programs are generated by `stratoflow map`: no file check,
    no path resolution; a string that is neither a file nor such a program is refused."""
    spec = parse_spec(_spec({"name": "m", "kind": "map", "program": "library:hdiff:32"}), base_dir=tmp_path)
    assert str(spec.steps[0].program) == "library:hdiff:32" and spec.steps[0].file_fields() == ()
    msg = _error(_spec({"name": "m", "kind": "map", "program": "library:hdiff;ls"}), tmp_path)
    assert "steps[0] (m).program" in msg


def test_numbers_and_switches_are_strict():
    """YAML booleans and quoted numbers are refused for number and switch fields (each named,
    with the value given), sweep values included; an int is still a valid float."""
    msg = _error(_spec({"name": "a", "kind": "fv3", "days": True, "layout": True,
                        "resolution": "24", "warm_cache": 1}))  # fmt: skip
    assert "kind fv3).days: Input should be a valid number, got True (bool)" in msg
    assert "kind fv3).layout: Input should be a valid integer, got True (bool)" in msg
    assert "kind fv3).resolution: Input should be a valid integer, got '24' (str)" in msg
    assert "kind fv3).warm_cache" in msg and "got 1 (int)" in msg
    msg = _error(_spec({"name": "m", "kind": "map", "program": "synthetic:chain:4",
                        "sweep": {"devices": [1, True]}}))  # fmt: skip
    assert "sweep [devices=True]: devices: Input should be a valid integer" in msg
    spec = parse_spec(_spec({"name": "a", "kind": "fv3", "days": 2}))
    assert spec.steps[0].days == 2.0 and isinstance(spec.steps[0].days, float)


def test_every_invalid_sweep_combination_is_reported():
    """resolution [12, 25] x layout [1, 7]: both layout-7 combinations are refused at load time
    (FV3Config's divisibility rule), in one error; the valid product loads."""
    msg = _error(_spec({"name": "tc", "kind": "fv3",
                        "sweep": {"resolution": [12, 25], "layout": [1, 7]}}))  # fmt: skip
    assert "steps[0] (tc[layout=7,resolution=12]): " in msg
    assert "steps[0] (tc[layout=7,resolution=25]): " in msg
    assert msg.count("not divisible by layout 7") == 2 and "layout=1" not in msg
    msg = _error(_spec({"name": "m", "kind": "map", "program": "synthetic:chain:4",
                        "sweep": {"devices": [0, 2, 100]}}))  # fmt: skip
    assert "sweep [devices=0]" in msg and "sweep [devices=100]" in msg and "devices=2" not in msg


def test_input_fields_name_steps_of_the_right_kind():
    """data_from must name an ens10_sample step, models_from ens10_train steps, db_from a tune
    step; the error names the field, the step and its kind."""
    msg = _error(_spec({"name": "prep", "kind": "command", "argv": ["true"]},
                       {"name": "tr", "kind": "ens10_train", "model": "emos", "data_from": "prep"}))  # fmt: skip
    assert "steps[1] (tr).data_from: step 'prep' is a 'command' step" in msg
    assert "ens10_sample" in msg
    msg = _error(_spec({"name": "d", "kind": "ens10_sample"},
                       {"name": "e", "kind": "ens10_evaluate", "data_from": "d", "models_from": ["d"]}))  # fmt: skip
    assert "(e).models_from: step 'd' is a 'ens10_sample' step" in msg and "ens10_train" in msg
    msg = _error(_spec({"name": "m", "kind": "map", "program": "synthetic:chain:4"},
                       {"name": "t", "kind": "tune", "db_from": "m"}))  # fmt: skip
    assert "(t).db_from: step 'm' is a 'map' step" in msg


def test_all_missing_files_are_reported(tmp_path: Path):
    """Two steps with missing scripts, and a missing swept script: every one is named."""
    (tmp_path / "ok.py").write_text("")
    msg = _error(_spec({"name": "a", "kind": "mpi", "script": "one.py"},
                       {"name": "b", "kind": "mpi", "script": "two.py"},
                       {"name": "c", "kind": "mpi", "script": "ok.py",
                        "sweep": {"script": ["ok.py", "three.py"]}}), tmp_path)  # fmt: skip
    assert "steps[0] (a).script: file not found: " + str(tmp_path / "one.py") in msg
    assert "steps[1] (b).script: file not found: " + str(tmp_path / "two.py") in msg
    assert "steps[2] (c).sweep.script[1]: file not found: " + str(tmp_path / "three.py") in msg


def test_swept_files_are_resolved(tmp_path: Path):
    """Swept script paths are made absolute against the spec's folder, like plain file fields."""
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text("")
    spec = parse_spec(_spec({"name": "c", "kind": "mpi", "script": "a.py",
                             "sweep": {"script": ["a.py", "b.py"]}}), base_dir=tmp_path)  # fmt: skip
    assert sorted(str(i.step.script) for i in expand(spec)) == [
        str(tmp_path / "a.py"), str(tmp_path / "b.py")]


def test_submit_dry_run_writes_nothing(tmp_path: Path, capsys, monkeypatch):
    """`submit --dry-run` prints the sbatch script (with the run's --ntasks) and creates no file
    or folder: the runs folder stays absent."""
    from workflows.cli import main

    spec = tmp_path / "s.yaml"
    spec.write_text("name: t\nsteps:\n  - name: a\n    kind: command\n    argv: [echo, hi]\n"
                    "    ranks: 3\n")  # fmt: skip
    monkeypatch.chdir(tmp_path)
    runs = tmp_path / "runs"
    assert main(["submit", str(spec), "--dry-run", "--runs-dir", str(runs)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("#!/bin/bash\n") and "#SBATCH --ntasks=3" in out
    assert f"{runs}/t-" in out and not runs.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.yaml"]

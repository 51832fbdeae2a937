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
    assert "steps[0] (fv3).resolution" in msg and "integer" in msg
    assert "steps[0] (fv3).layout" in msg and "greater than or equal to 1" in msg


def test_literal_errors_list_allowed_values():
    msg = _error(_spec({"name": "s", "kind": "ens10_sample"},
                       {"name": "a", "kind": "ens10_train", "model": "svm", "data_from": "s"}))  # fmt: skip
    assert "steps[1] (ens10_train).model" in msg
    assert "'emos'" in msg and "'mlp'" in msg


def test_unknown_key_lists_allowed_keys():
    msg = _error(_spec({"name": "a", "kind": "fv3", "resolutoin": 24}))
    assert "steps[0] (fv3).resolutoin: unknown key" in msg and "resolution" in msg


@pytest.mark.parametrize(
    "arg",
    ["$(rm -rf /)", "a;b", "`id`", "x && y", "a|b", "a > b", "it's", "line\nbreak", "$HOME"],
)
def test_shell_injection_is_rejected(arg: str):
    msg = _error(_spec({"name": "a", "kind": "command", "argv": ["echo", arg]}))
    assert "steps[0] (command).argv[1]" in msg and "could reach a shell" in msg


def test_injection_in_sweep_values_and_names_is_rejected():
    msg = _error(_spec({"name": "a", "kind": "tune", "sweep": {"stencil": ["x;reboot"]}}))
    assert "steps[0] (tune).sweep.stencil[0]" in msg
    msg = _error(_spec({"name": "a;b", "kind": "stencils_demo"}))
    assert "steps[0] (stencils_demo).name" in msg


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

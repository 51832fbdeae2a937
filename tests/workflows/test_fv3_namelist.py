"""An FV3 run from an FV3 namelist: ``stratoflow fv3 run --namelist`` and the fv3 step's
``namelist`` field (no model runs here: the driver is replaced by a recorder)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.fv3core.test_namelist import NAMELIST, REFERENCE
from workflows.cli import build_parser, main
from workflows.errors import SpecError
from workflows.kinds import KINDS, PlanContext
from workflows.spec import expand, parse_spec


@pytest.fixture
def namelist(tmp_path: Path) -> Path:
    path = tmp_path / "input.nml"
    path.write_text(NAMELIST)  # TC2 C24, n_split 2, nord 1, hord 8, dt_atmos 1200, 1 day
    return path


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> list:
    calls: list = []

    def fake_run(config, **kwargs):
        calls.append(config)
        return SimpleNamespace(is_root=False)

    monkeypatch.setattr("fv3core.experiments.driver.run", fake_run)
    return calls


def test_help_says_the_options_override_the_namelist(capsys) -> None:
    with pytest.raises(SystemExit) as info:
        main(["fv3", "run", "--help"])
    assert info.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "--namelist PATH" in text and "the options below override it" in text
    assert "not with --config" in text and "--dynamics" not in text
    args = build_parser().parse_args(["fv3", "run", "--namelist", "input.nml"])
    assert args.namelist == Path("input.nml") and args.config is None


def test_the_namelist_gives_the_config_and_options_override_it(namelist, runs) -> None:
    argv = ["fv3", "run", "--namelist", str(namelist), "--no-progress"]
    assert main(argv) == 0
    assert main([*argv, "--nord", "1", "--days", "0.25", "--resolution", "12",
                 "--backend", "debug", "--constants", "williamson"]) == 0  # fmt: skip
    namelist_only, overridden = runs
    assert (namelist_only.case, namelist_only.resolution, namelist_only.days) == (
        "williamson2", 24, 1.0)  # fmt: skip
    assert (namelist_only.dt, namelist_only.n_split, namelist_only.nord) == (1200.0, 2, 1)
    assert (namelist_only.constants, namelist_only.print_freq) == ("ufs", 6)
    assert (overridden.resolution, overridden.days, overridden.backend) == (12, 0.25, "debug")
    assert (overridden.constants, overridden.dt) == ("williamson", 1200.0)


def test_namelist_with_config_and_unrunnable_schemes_are_refused(namelist, runs, caplog,
                                                                 tmp_path) -> None:  # fmt: skip
    config = tmp_path / "run.yaml"
    config.write_text("case: williamson2\n")
    assert main(["fv3", "run", "--namelist", str(namelist), "--config", str(config)]) == 1
    assert f"--namelist {namelist} and --config {config}: give one of them" in caplog.text
    namelist.write_text(NAMELIST.replace("npz    = 1", "npz = 30"))
    assert main(["fv3", "run", "--namelist", str(namelist)]) == 1
    assert "test_case = 2 is not supported by fv3core's hydrostatic 3-D core" in caplog.text
    assert runs == []  # the driver is never reached


@pytest.mark.skipif(not (REFERENCE / "tc2_C24_d1" / "input.nml").is_file(),
                    reason="no reference namelist")  # fmt: skip
def test_a_reference_namelist_on_the_command_line(runs, caplog) -> None:
    path = REFERENCE / "tc2_C24_d1" / "input.nml"
    assert main(["fv3", "run", "--namelist", str(path), "--d4-bg", "0.5"]) == 1
    assert "d4_bg=0.5" in caplog.text
    assert main(["fv3", "run", "--namelist", str(path), "--nord", "1", "--no-progress"]) == 0
    (config,) = runs
    assert (config.resolution, config.n_split, config.dt, config.nord) == (24, 2, 1200.0, 1)


# --- the spec's fv3 step -----------------------------------------------------------------------


def _spec(step: dict, base: Path):
    return parse_spec({"name": "nml", "steps": [{"name": "tc2", "kind": "fv3", **step}]},
                      "nml.yaml", base)  # fmt: skip


def test_fv3_step_runs_a_namelist(namelist, tmp_path) -> None:
    """The namelist (resolved against the spec's folder) reaches the run and the warm-up; the
    step passes only what it overrides; the output name and rank count come from the file."""
    step = _spec({"namelist": "input.nml"}, tmp_path).steps[0]
    assert step.namelist == namelist and step.file_fields() == ("namelist",)
    assert (step.case, step.resolution, step.layout, step.days, step.ranks) == (
        None, None, None, None, 6)  # fmt: skip
    out = tmp_path / "out"
    plan = KINDS["fv3"].plan(step, PlanContext(out, {}))
    args = list(plan.argv)
    assert args[args.index("--namelist") + 1] == str(namelist)
    assert not {"--case", "--resolution", "--layout", "--days"} & set(args)
    assert args[args.index("--output") + 1] == str(out / "williamson2_c24.nc")
    warm = list(plan.warm_argv or ())
    assert warm[warm.index("--namelist") + 1] == str(namelist) and "--days" in warm
    step = _spec({"namelist": "input.nml", "resolution": 12, "days": 0.5}, tmp_path).steps[0]
    args = list(KINDS["fv3"].plan(step, PlanContext(out, {})).argv)
    assert args[args.index("--resolution") + 1] == "12" and args[args.index("--days") + 1] == "0.5"
    assert args[args.index("--output") + 1] == str(out / "williamson2_c12.nc")


def test_fv3_step_without_a_namelist_is_unchanged(tmp_path) -> None:
    step = _spec({}, tmp_path).steps[0]
    assert (step.case, step.resolution, step.layout, step.days) == ("williamson2", 24, 1, 1.0)
    assert "namelist" not in step.model_dump() and step.file_fields() == ()
    args = list(KINDS["fv3"].plan(step, PlanContext(tmp_path, {})).argv)
    assert "--namelist" not in args and args[args.index("--resolution") + 1] == "24"


def test_the_namelist_enters_the_step_hash(namelist, tmp_path) -> None:
    from workflows.engine import step_hash

    (inst,) = expand(_spec({"namelist": "input.nml"}, tmp_path))
    before = step_hash(inst, [])
    assert step_hash(inst, []) == before
    namelist.write_text(NAMELIST.replace("days  = 1", "days  = 2"))
    assert step_hash(inst, []) != before
    (plain,) = expand(_spec({}, tmp_path))
    assert step_hash(plain, []) != before


def test_fv3_step_refuses_a_namelist_fv3core_cannot_read(namelist, tmp_path) -> None:
    with pytest.raises(SpecError, match="namelist: file not found"):
        _spec({"namelist": "nope.nml"}, tmp_path)
    namelist.write_text(NAMELIST.replace("hord_mt = 8", "hord_mt = 7"))
    with pytest.raises(SpecError) as info:
        _spec({"namelist": "input.nml"}, tmp_path)
    msg = str(info.value)
    assert "steps[0] (tc2).namelist:" in msg and "hord_mt = 7 is not supported" in msg
    namelist.write_text(NAMELIST)
    with pytest.raises(SpecError, match=r"steps\[0\] \(tc2\[resolution=10\]\)\.namelist: .*"
                                        r"resolution C10 is not divisible by layout 3"):  # fmt: skip
        _spec({"namelist": "input.nml", "layout": 3, "sweep": {"resolution": [12, 10]}},
              tmp_path)  # fmt: skip


def test_a_3d_namelist_on_the_command_line(runs) -> None:
    """The Fortran JW run's namelist (FV3's hydrostatic build, npz 26) runs the 3-D core with
    its keys; the options still override it."""
    path = Path(__file__).resolve().parents[1] / "fv3core" / "data" / "fortran" / "jw_C24_L26" / "input.nml"
    assert main(["fv3", "run", "--namelist", str(path), "--resolution", "12", "--days", "0.25"]) == 0
    (cfg,) = runs
    assert (cfg.case, cfg.nz, cfg.resolution, cfg.days, cfg.k_split, cfg.n_split) == (
        "baroclinic", 26, 12, 0.25, 2, 4)  # fmt: skip
    assert (cfg.d2_bg_k1, cfg.n_sponge, cfg.kord_tm, cfg.hord_tr) == (0.15, 1, -8, 8)


def test_a_key_set_twice_is_flagged_and_the_last_counts(tmp_path: Path, caplog) -> None:
    """A namelist key given twice in a group (in any case, not inside strings or comments) is
    named in a warning; the last value counts, as in Fortran; a binary namelist is named."""
    from fv3core.errors import FV3ConfigError
    from fv3core.namelist import _repeated_keys, read_namelist

    text = ("&fv_core_nml\n  npx = 25, NPX = 49 ! npx = 3\n  name = 'npx = 1'\n/\n"
            "&main_nml\n days = 1\n days = 2 /\n&test_case_nml a(1) = 1, a(2) = 2 /\n")  # fmt: skip
    assert _repeated_keys(text) == [("fv_core_nml", "npx", 2), ("main_nml", "days", 2)]
    path = tmp_path / "input.nml"
    path.write_text(NAMELIST + "\n&fv_core_nml_extra\n/\n")
    assert _repeated_keys(path.read_text()) == []
    lines = NAMELIST.splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().lower().startswith("npx"))
    path.write_text("\n".join(lines[: at + 1] + [lines[at]] + lines[at + 1 :]) + "\n")
    with caplog.at_level("WARNING", logger="fv3core"):
        read_namelist(path, check_supported=False)
    assert "npx is set 2 times" in caplog.text and "input.nml" in caplog.text
    path.write_bytes(b"\x89PNG\x00\x00")
    with pytest.raises(FV3ConfigError, match="cannot read namelist .*input.nml: it is a binary file"):
        read_namelist(path)

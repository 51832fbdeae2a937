"""``stratoflow fv3 run --tuning-db``: which stencil factory an FV3 run is given."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from workflows.cli import build_parser, main
from workflows.commands.fv3 import stencil_factory
from workflows.errors import WorkflowError


def _tuning_db(path: Path, applied: bool) -> Path:
    from mapping.tuning.db import TuningDB
    from mapping.tuning.schedule import Schedule

    db = TuningDB(path)
    if applied:
        db.apply("dgrid_to_agrid", Schedule("gt:cpu_ifirst"), 1.5)
    return path


def test_tuning_db_option_parses_and_defaults_to_none(tmp_path):
    parser = build_parser()
    args = parser.parse_args(["fv3", "run", "--tuning-db", str(tmp_path / "t.sqlite")])
    assert args.tuning_db == tmp_path / "t.sqlite"
    assert parser.parse_args(["fv3", "run"]).tuning_db is None


def test_fv3_help_describes_the_tuning_db(capsys):
    with pytest.raises(SystemExit) as info:
        main(["fv3", "run", "--help"])
    assert info.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "--tuning-db PATH" in text
    assert "has an applied schedule in this tuning database" in text and "no tuned schedules" in text


def test_factory_without_with_and_with_a_missing_tuning_db(tmp_path):
    from mapping.tuning.factory import TunedStencilFactory

    assert stencil_factory("numpy", None) is None  # fv3core's plain StencilFactory(backend)
    factory = stencil_factory("numpy", _tuning_db(tmp_path / "t.sqlite", applied=True))
    assert isinstance(factory, TunedStencilFactory)
    assert factory.db.path == tmp_path / "t.sqlite" and list(factory.applied) == ["dgrid_to_agrid"]
    assert factory.config.backend == "numpy"
    with pytest.raises(WorkflowError, match=r"--tuning-db .*nope\.sqlite: no such file"):
        stencil_factory("numpy", tmp_path / "nope.sqlite")
    assert not (tmp_path / "nope.sqlite").exists()  # nothing is created


def test_missing_tuning_db_is_a_clear_error_before_the_run(tmp_path, caplog, monkeypatch):
    def no_run(*args, **kwargs):
        raise AssertionError("fv3core.experiments.driver.run must not be reached")

    monkeypatch.setattr("fv3core.experiments.driver.run", no_run)
    missing = tmp_path / "nope.sqlite"
    assert main(["fv3", "run", "--days", "0.01", "--tuning-db", str(missing)]) == 1
    assert f"--tuning-db {missing}: no such file" in caplog.text


def test_run_passes_the_factory_to_the_driver(tmp_path, monkeypatch):
    """The command calls fv3core.experiments.driver.run(config, factory=..., mpi=..., progress=...)."""
    calls = []

    def fake_run(config, **kwargs):
        calls.append((config, kwargs))
        return SimpleNamespace(is_root=False)

    monkeypatch.setattr("fv3core.experiments.driver.run", fake_run)
    db = _tuning_db(tmp_path / "t.sqlite", applied=True)
    argv = ["fv3", "run", "--case", "williamson2", "--resolution", "12", "--no-progress"]
    assert main([*argv, "--tuning-db", str(db)]) == 0
    assert main(argv) == 0
    (config, tuned), (_, plain) = calls
    assert config.case == "williamson2" and config.resolution == 12
    assert set(tuned) == {"factory", "mpi", "progress"} and tuned["progress"] is False
    assert tuned["factory"].db.path == db and "dgrid_to_agrid" in tuned["factory"].applied
    assert plain["factory"] is None


def test_baroclinic_options_reach_the_config_and_keep_daily_fields(tmp_path, monkeypatch):
    """``--case baroclinic --levels 30 --k-split 1 --consv-te 1`` gives FV3Config's 3-D keys
    (FV3's JW options for the rest; a non-finite --consv-te is an argument error); with
    --output the run keeps daily fields for the day-7/9/10 plot."""
    calls = []

    def fake_run(config, **kwargs):
        calls.append((config, kwargs))
        return SimpleNamespace(is_root=False)

    monkeypatch.setattr("fv3core.experiments.driver.run", fake_run)
    argv = ["fv3", "run", "--case", "baroclinic", "--resolution", "12", "--levels", "30",
            "--k-split", "1", "--consv-te", "1", "--no-progress", "--output", str(tmp_path / "jw.nc")]
    assert main(argv) == 0
    ((config, kwargs),) = calls
    assert (config.nz, config.k_split, config.n_split, config.dt, config.hord_tm) == (30, 1, 4, 1800.0, 10)
    assert config.consv_te == 1.0 and config.dynamics_options().consv_te == 1.0
    assert kwargs["history_every_s"] == 86400.0
    with pytest.raises(SystemExit) as info:
        main([*argv[:-3], "--consv-te", "nan"])
    assert info.value.code == 2 and len(calls) == 1


def test_output_that_cannot_be_written_is_refused_before_the_run(tmp_path, caplog, monkeypatch):
    """--output naming a directory or a missing folder: a named error, the run never starts."""
    def no_run(*args, **kwargs):
        raise AssertionError("fv3core.experiments.driver.run must not be reached")

    monkeypatch.setattr("fv3core.experiments.driver.run", no_run)
    base = ["fv3", "run", "--case", "baroclinic", "--resolution", "12", "--no-progress"]
    assert main([*base, "--output", str(tmp_path)]) == 1
    assert "is a directory" in caplog.text
    assert main([*base, "--output", str(tmp_path / "no" / "jw.nc")]) == 1
    assert "does not exist" in caplog.text

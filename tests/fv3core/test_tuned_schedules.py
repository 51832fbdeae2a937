"""fv3core runs build their stencils with the factory they are given: a TunedStencilFactory
applies the schedules of its tuning database, a plain run applies none (nothing is read from
the environment or the user's cache)."""

from __future__ import annotations

import logging

import numpy as np

from fv3core.config import FV3Config
from fv3core.experiments.driver import run
from mapping.tuning.db import TuningDB
from mapping.tuning.factory import TunedStencilFactory
from mapping.tuning.schedule import Schedule

TUNED = "fv3core.stencils.flux_divergence:apply_flux_divergence"


def test_applied_schedule_is_used_by_fv3_runs_given_the_tuned_factory(tmp_path, monkeypatch,
                                                                       caplog) -> None:  # fmt: skip
    """With a schedule applied to one transport stencil (the debug backend, a different
    GT4Py backend than the run's numpy), a TC1 C12 run given a TunedStencilFactory of that
    database builds that stencil with the schedule (logged by the tuned factory) and its h
    equals the untuned numpy run's (the reference) to 1e-12 relative; a run without a factory
    tunes nothing, even with the database named in STRATOFLOW_TUNING_DB."""
    db = tmp_path / "tuning.sqlite"
    monkeypatch.setenv("STRATOFLOW_TUNING_CACHE", str(tmp_path / "builds"))
    TuningDB(db).apply(TUNED, Schedule("debug"), None)
    cfg = FV3Config(resolution=12, days=0.1, alpha=1.5)

    monkeypatch.setenv("STRATOFLOW_TUNING_DB", str(db))
    with caplog.at_level(logging.INFO, logger="mapping.tuning.factory"):
        plain = run(cfg, progress=False)
    assert "tuned schedule" not in caplog.text

    caplog.clear()
    with caplog.at_level(logging.INFO, logger="mapping.tuning.factory"):
        tuned = run(cfg, factory=TunedStencilFactory(cfg.backend, db=db), progress=False)
    assert f"with tuned schedule debug ({TUNED})" in caplog.text, caplog.text
    scale = np.abs(plain.fields["h"]).max()
    np.testing.assert_allclose(tuned.fields["h"], plain.fields["h"], rtol=0, atol=1e-12 * scale)

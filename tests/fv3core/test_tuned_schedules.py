"""fv3core runs use the tuning database's applied schedules automatically (issue 7's
``stratoflow tune apply``), and ``STRATOFLOW_TUNED=0`` turns that off."""

from __future__ import annotations

import logging

import numpy as np

from fv3core.config import FV3Config
from fv3core.driver import run
from mapping.tuning.db import TuningDB
from mapping.tuning.schedule import Schedule

TUNED = "fv3core.stencils.transport:apply_flux_divergence"


def test_applied_schedule_is_used_by_fv3_runs(tmp_path, monkeypatch, caplog) -> None:
    """With a schedule applied to one transport stencil (the debug backend, a different
    GT4Py backend than the run's numpy), a TC1 C12 run builds that stencil with the schedule
    (logged by the tuned factory) and its h equals the untuned numpy run's (the reference)
    to 1e-12 relative; without a database, or with STRATOFLOW_TUNED=0, nothing is tuned."""
    monkeypatch.setenv("STRATOFLOW_TUNING_DB", str(tmp_path / "tuning.sqlite"))
    monkeypatch.setenv("STRATOFLOW_TUNING_CACHE", str(tmp_path / "builds"))
    cfg = FV3Config(resolution=12, days=0.1, alpha=1.5)
    with caplog.at_level(logging.INFO, logger="mapping.tuning.factory"):
        plain = run(cfg, progress=False)  # no database file: plain factory, none created
    assert not (tmp_path / "tuning.sqlite").exists()
    assert "tuned schedule" not in caplog.text

    TuningDB(tmp_path / "tuning.sqlite").apply(TUNED, Schedule("debug"), None)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="mapping.tuning.factory"):
        tuned = run(cfg, progress=False)
    assert f"with tuned schedule debug ({TUNED})" in caplog.text, caplog.text
    scale = np.abs(plain.fields["h"]).max()
    np.testing.assert_allclose(tuned.fields["h"], plain.fields["h"], rtol=0, atol=1e-12 * scale)

    monkeypatch.setenv("STRATOFLOW_TUNED", "0")
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="mapping.tuning.factory"):
        run(cfg, progress=False)
    assert "tuned schedule" not in caplog.text

"""The SQLite tuning database: evaluations, best schedule, recorded searches, apply, export/import."""

from __future__ import annotations

from pathlib import Path

import pytest

from mapping.tuning.db import TuningDB
from mapping.tuning.errors import TuningError
from mapping.tuning.features import Embedding
from mapping.tuning.measure import Evaluation
from mapping.tuning.schedule import Schedule

DOM = (8, 8, 4)


def _fill(db: TuningDB) -> None:
    db.put_embedding(Embedding("lap", {"reads": 5.0}), DOM, 1e-3, 10.0)
    db.put_evaluation("lap", DOM, Evaluation(Schedule("numpy"), "ok", median_s=4e-3))
    db.put_evaluation("lap", DOM, Evaluation(Schedule("gt:cpu_ifirst", threads=1), "ok", median_s=1e-3))
    db.put_evaluation("lap", DOM, Evaluation(Schedule("dace:cpu"), "invalid", error="boom"))


def test_best_and_speedup(tmp_path: Path) -> None:
    db = TuningDB(tmp_path / "t.sqlite", machine="m1")
    _fill(db)
    best = db.best("lap", DOM)
    assert best is not None and best.schedule == Schedule("gt:cpu_ifirst", threads=1)
    assert best.speedup == pytest.approx(4.0) and best.evaluations == 3
    assert db.stencils() == [("lap", "8x8x4", 3, 2)]
    # another machine sees nothing: timings are never mixed across machines
    assert TuningDB(tmp_path / "t.sqlite", machine="m2").best("lap", DOM) is None


def test_apply_export_import(tmp_path: Path) -> None:
    db = TuningDB(tmp_path / "a.sqlite", machine="m1")
    _fill(db)
    db.apply("lap", Schedule("gt:cpu_ifirst", threads=1), 4.0)
    keys = [Schedule("numpy").key, Schedule("dace:cpu").key]
    db.put_search("lap", DOM, '{"seed": 0}', keys)
    data = db.export()
    other = TuningDB(tmp_path / "b.sqlite", machine="m1")
    # embedding, its feature status, 3 evaluations, the recorded search, applied
    assert other.import_(data) == 1 + 1 + 3 + 1 + 1
    assert other.search_keys("lap", DOM, '{"seed": 0}') == keys and other.search_keys("lap", DOM, "{}") is None
    assert TuningDB(tmp_path / "b.sqlite", machine="m2").search_keys("lap", DOM, '{"seed": 0}') is None
    # an export made before searches were recorded has no such table and still imports
    old = {k: v for k, v in data.items() if k != "searches"}
    assert TuningDB(tmp_path / "c.sqlite", machine="m1").import_(old) == 1 + 1 + 3 + 1
    assert other.applied() == {"lap": Schedule("gt:cpu_ifirst", threads=1)}
    assert other.evaluations("lap", DOM) .keys() == db.evaluations("lap", DOM).keys()
    assert other.unapply("lap") and not other.unapply("lap")
    with pytest.raises(TuningError, match="format"):
        other.import_({"stencils": []})
    with pytest.raises(TuningError, match="unknown columns"):
        other.import_({"format": "stratoflow-tuning-db/1", "applied": [{"stencil": "x", "evil": 1}]})


def test_corrupt_database_is_a_tuning_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sqlite"
    bad.write_text("this is not sqlite" * 100)
    with pytest.raises(TuningError, match="bad.sqlite is damaged"):
        TuningDB(bad)

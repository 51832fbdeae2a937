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


def test_database_identity_new_legacy_and_foreign(tmp_path: Path) -> None:
    """A new database is stamped; one made before identities (same tables, none) is recognised
    and stamped; another application's file is refused and left unchanged; reading commands
    never create a database."""
    import sqlite3

    from mapping.tuning.db import _SCHEMA, KIND
    from stencils.dbfile import header

    TuningDB(tmp_path / "new.sqlite", machine="m1")
    assert header(tmp_path / "new.sqlite") == (KIND.application_id, KIND.version)
    legacy = tmp_path / "legacy.sqlite"
    con = sqlite3.connect(legacy)
    con.executescript(_SCHEMA.replace("CREATE TABLE IF NOT EXISTS searches", "CREATE TEMP TABLE s"))
    con.close()
    assert header(legacy) == (0, 0)
    TuningDB(legacy, machine="m1").apply("lap", Schedule("numpy"), None)
    assert header(legacy) == (KIND.application_id, KIND.version)
    other = tmp_path / "other.sqlite"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE notes (text)")
    con.commit()
    con.close()
    before = other.read_bytes()
    for read_only in (True, False):
        with pytest.raises(TuningError, match="other.sqlite is an SQLite database that is not a tuning"):
            TuningDB(other, read_only=read_only)
    assert other.read_bytes() == before
    with pytest.raises(TuningError, match="does not exist"):
        TuningDB(tmp_path / "sub" / "missing.sqlite", read_only=True)
    assert not (tmp_path / "sub").exists()


def test_rows_of_the_wrong_type_are_refused_at_import_and_at_read(tmp_path: Path) -> None:
    """An import with a schedule of the wrong type writes nothing; a bad row written by someone
    else is named (database, table, stencil, field) when it is read."""
    import sqlite3

    db = TuningDB(tmp_path / "a.sqlite", machine="m1")
    _fill(db)
    data = db.export()
    bad = dict(data, evaluations=[dict(data["evaluations"][0], schedule='{"threads": "abc"}')])
    target = TuningDB(tmp_path / "b.sqlite", machine="m1")
    with pytest.raises(TuningError, match=r"evaluations\[0\]: schedule: invalid schedule: threads"):
        target.import_(bad)
    assert target.export()["stencils"] == []  # nothing of the file was written
    wrong_key = dict(data, evaluations=[dict(data["evaluations"][0], key="0" * 16)])
    with pytest.raises(TuningError, match="is not the key of its schedule"):
        target.import_(wrong_key)
    typed = dict(data, evaluations=[dict(data["evaluations"][0], median_s="fast")])
    with pytest.raises(TuningError, match="median_s"):
        target.import_(typed)
    con = sqlite3.connect(tmp_path / "a.sqlite")
    con.execute("UPDATE evaluations SET schedule='{\"threads\": \"abc\"}' WHERE status='invalid'")
    con.commit()
    con.close()
    with pytest.raises(TuningError, match="a.sqlite, table evaluations, stencil 'lap'.*threads"):
        db.best("lap", DOM)

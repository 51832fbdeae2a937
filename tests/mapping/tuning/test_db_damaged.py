"""A damaged tuning database: a named TuningError (which file, what to do) instead of a raw
sqlite3.DatabaseError, and an FV3 run that goes on untuned."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest

from mapping.tuning.db import TuningDB
from mapping.tuning.errors import TuningError
from mapping.tuning.schedule import Schedule

PAGE = 4096


def _real_db(path: Path) -> TuningDB:
    db = TuningDB(path, machine="m1")
    for i in range(60):
        db.apply(f"stencil_{i:03d}_" + "x" * 100, Schedule("numpy"), 1.0)
    assert path.stat().st_size > 4 * PAGE
    return db


def _overwrite_page(path: Path, page: int) -> None:
    with open(path, "r+b") as f:
        f.seek(page * PAGE)
        f.write(bytes(range(256)) * (PAGE // 256))


def _assert_named(exc: pytest.ExceptionInfo[TuningError], path: Path) -> None:
    msg = str(exc.value)
    assert f"tuning database {path} is damaged" in msg and "\n" not in msg
    assert "move it aside" in msg and "STRATOFLOW_TUNING_DB" in msg and "--db" in msg


def test_garbage_file_is_named(tmp_path: Path) -> None:
    """A file of garbage bytes is refused at open with the file name and the way out."""
    path = tmp_path / "tuning.sqlite"
    path.write_bytes(bytes(range(256)) * 16)
    with pytest.raises(TuningError) as info:
        TuningDB(path)
    _assert_named(info, path)
    assert "not a database" in str(info.value)


def test_overwritten_page_is_found_at_open(tmp_path: Path) -> None:
    """A real database whose third page is overwritten passes sqlite's open but not the
    integrity check that TuningDB runs (``PRAGMA quick_check``)."""
    path = tmp_path / "tuning.sqlite"
    _real_db(path)
    _overwrite_page(path, 2)
    sqlite3.connect(path).execute("SELECT 1").fetchall()  # sqlite itself opens it
    with pytest.raises(TuningError) as info:
        TuningDB(path)
    _assert_named(info, path)


def test_damage_after_open_is_named_by_queries(tmp_path: Path) -> None:
    """A database damaged after it was opened: the next query raises the named TuningError."""
    path = tmp_path / "tuning.sqlite"
    db = _real_db(path)
    for page in range(1, path.stat().st_size // PAGE):  # every page but the schema's
        _overwrite_page(path, page)
    with pytest.raises(TuningError) as info:
        db.applied()
    _assert_named(info, path)


def test_folder_and_import_shapes_are_refused(tmp_path: Path) -> None:
    """A folder as the database, an import that is not a mapping or whose table is not a list of
    rows: each a TuningError saying what is expected."""
    with pytest.raises(TuningError, match="is a folder"):
        TuningDB(tmp_path)
    db = TuningDB(tmp_path / "t.sqlite")
    with pytest.raises(TuningError, match="not a stratoflow tuning export"):
        db.import_([1, 2])  # type: ignore[arg-type]
    with pytest.raises(TuningError, match="'applied' must be a list of rows"):
        db.import_({"format": "stratoflow-tuning-db/1", "applied": "hdiff"})


def test_fv3_run_goes_on_untuned_with_a_damaged_db(tmp_path: Path, caplog) -> None:
    """`fv3 run --tuning-db DAMAGED` gets no tuned factory (plain stencils) and a warning that
    names the file, instead of failing the run."""
    from workflows.commands.fv3 import stencil_factory

    path = tmp_path / "tuning.sqlite"
    path.write_bytes(b"\0garbage" * 512)
    with caplog.at_level(logging.WARNING, logger="workflows.commands.fv3"):
        assert stencil_factory("numpy", path) is None
    text = caplog.text
    assert f"tuning database {path} is damaged" in text and "untuned" in text

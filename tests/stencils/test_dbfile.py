"""The identity of stratoflow's SQLite databases (stencils.dbfile): new, ours, legacy and
refused files; a refused file is left byte-for-byte unchanged."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from stencils.dbfile import (
    RUN_DB_ID,
    TUNING_DB_ID,
    DatabaseKind,
    State,
    columns_of,
    header,
    identify,
    read_only_uri,
    stamp,
)
from stencils.errors import DatabaseIdentityError

SCHEMA = "CREATE TABLE a (x TEXT, y REAL); CREATE TABLE b (z TEXT, w TEXT);"
COLUMNS = columns_of(SCHEMA)
KIND = DatabaseKind(
    what="test database", application_id=TUNING_DB_ID, version=2, tables=COLUMNS,
    required={"a": frozenset({"x"})}, choose="pass another file",
)  # fmt: skip


def _db(path: Path, script: str, app_id: int = 0, version: int = 0) -> Path:
    con = sqlite3.connect(path)
    con.executescript(script)
    con.execute(f"PRAGMA application_id = {app_id}")
    con.execute(f"PRAGMA user_version = {version}")
    con.commit()
    con.close()
    return path


def test_missing_and_empty_files_are_new(tmp_path: Path) -> None:
    assert identify(tmp_path / "none.sqlite", KIND) is State.NEW
    (tmp_path / "empty.sqlite").touch()
    assert identify(tmp_path / "empty.sqlite", KIND) is State.NEW


def test_stamped_database_is_ours_and_header_reads_it(tmp_path: Path) -> None:
    path = tmp_path / "ours.sqlite"
    con = sqlite3.connect(path)
    stamp(con, KIND)
    con.executescript(SCHEMA)
    con.commit()
    con.close()
    assert header(path) == (TUNING_DB_ID, 2)
    assert identify(path, KIND) is State.OURS


def test_legacy_schema_is_recognised_only_when_exact(tmp_path: Path) -> None:
    assert identify(_db(tmp_path / "old.sqlite", "CREATE TABLE a (x TEXT);"), KIND) is State.LEGACY
    extra = _db(tmp_path / "extra.sqlite", SCHEMA + "CREATE TABLE c (q);")
    with pytest.raises(DatabaseIdentityError, match="not a test database .its tables: a, b, c"):
        identify(extra, KIND)
    alien_col = _db(tmp_path / "col.sqlite", "CREATE TABLE a (x TEXT, alien INT);")
    with pytest.raises(DatabaseIdentityError, match="col.sqlite"):
        identify(alien_col, KIND)


@pytest.mark.parametrize(
    ("app_id", "version", "message"),
    [
        (TUNING_DB_ID, 1, "incompatible schema, version 1"),
        (TUNING_DB_ID, 7, "incompatible schema, version 7 .this stratoflow reads version 2"),
        (RUN_DB_ID, 1, "is a stratoflow run database, not a test database"),
        (0x12345678, 0, "another application .SQLite application_id 0x12345678"),
        (0, 3, "another application"),
    ],
)
def test_other_databases_are_refused_and_unchanged(
    tmp_path: Path, app_id: int, version: int, message: str
) -> None:
    path = _db(tmp_path / "other.sqlite", SCHEMA, app_id, version)
    before = path.read_bytes()
    with pytest.raises(DatabaseIdentityError, match=message) as info:
        identify(path, KIND)
    assert "other.sqlite" in str(info.value)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.sqlite"]


def test_text_file_is_not_sqlite(tmp_path: Path) -> None:
    path = tmp_path / "notes.sqlite"
    path.write_text("hello\n" * 40)
    assert identify(path, KIND) is State.NOT_SQLITE


def test_read_only_uri_creates_nothing(tmp_path: Path) -> None:
    path = _db(tmp_path / "wal.sqlite", SCHEMA)
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode=WAL")
    con.close()
    before = path.read_bytes()
    con = sqlite3.connect(read_only_uri(path), uri=True)
    assert con.execute("SELECT count(*) FROM a").fetchone() == (0,)
    with pytest.raises(sqlite3.OperationalError):
        con.execute("INSERT INTO a VALUES ('x', 1)")
    con.close()
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["wal.sqlite"]

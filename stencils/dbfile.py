"""The identity of stratoflow's SQLite databases (the run database, the tuning database).

Each database kind carries an identity in the SQLite header: ``PRAGMA application_id`` (which
stratoflow database it is) and ``PRAGMA user_version`` (its schema version). Before a file is
opened, :func:`identify` reads the 100-byte header (without SQLite, so nothing is written) and
decides:

- ``NEW``: the file does not exist or is empty; the caller creates it and stamps it
  (:func:`stamp`);
- ``OURS``: the kind's application id and schema version;
- ``LEGACY``: no application id, no user_version, and exactly the tables and columns of the
  kind (a database made before identities existed); a caller that writes stamps it, a reader
  reads it as it is;
- ``NOT_SQLITE``: not an SQLite file at all (damaged or not a database): the caller's own
  damaged-file handling answers.

Anything else raises :class:`~stencils.errors.DatabaseIdentityError` naming the file: another
application's database (its application id, or tables that are not the kind's), the other
stratoflow database, or another schema version ("incompatible schema, version N"). A refused
file is never opened for writing, so it stays byte-for-byte unchanged.
"""

from __future__ import annotations

import enum
import os
import sqlite3
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from stencils.errors import DatabaseIdentityError

_MAGIC = b"SQLite format 3\x00"

#: application ids of stratoflow's databases ("SFRN", "SFTU") and what each one is
RUN_DB_ID = 0x5346524E
TUNING_DB_ID = 0x53465455
KNOWN_IDS: dict[int, str] = {RUN_DB_ID: "stratoflow run database",
                             TUNING_DB_ID: "stratoflow tuning database"}  # fmt: skip


class State(enum.Enum):
    NEW = "new"
    OURS = "ours"
    LEGACY = "legacy"
    NOT_SQLITE = "not sqlite"


@dataclass(frozen=True)
class DatabaseKind:
    """One stratoflow database: its name in messages, identity and schema.

    ``tables``: every table and its columns in the current schema; ``required``: the tables
    (and their columns) a database without identity must have to be recognised as this kind
    (older versions lacked some tables or columns that opening adds)."""

    what: str
    application_id: int
    version: int
    tables: Mapping[str, frozenset[str]]
    required: Mapping[str, frozenset[str]]
    choose: str  # how to pass another file, e.g. "pass another file with --db"


def header(path: Path) -> tuple[int, int] | None:
    """(application_id, user_version) from the SQLite header of ``path``; None when the file is
    not an SQLite database (shorter than a header, or another magic string)."""
    with open(path, "rb") as fh:
        head = fh.read(100)
    if len(head) < 100 or not head.startswith(_MAGIC):
        return None
    (user_version,) = struct.unpack(">i", head[60:64])
    (app_id,) = struct.unpack(">i", head[68:72])
    return app_id & 0xFFFFFFFF, user_version


def read_only_uri(path: Path) -> str:
    """An SQLite URI that opens ``path`` for reading and never writes it or creates files
    beside it: ``immutable=1`` (no journal, no shared-memory file) unless a write-ahead log
    beside it shows a writer at work, whose log and shared memory are then read."""
    path = Path(path).resolve()
    live = Path(f"{path}-wal").exists()
    return f"file:{quote(str(path))}?mode=ro" + ("" if live else "&immutable=1")


def schema(path: Path) -> dict[str, frozenset[str]]:
    """The tables of ``path`` and their columns, read without writing anything."""
    con = sqlite3.connect(read_only_uri(path), uri=True)
    try:
        names = [r[0] for r in con.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'"
        )]  # fmt: skip
        return {n: frozenset(r[1] for r in con.execute(f"PRAGMA table_info('{n}')")) for n in names}
    finally:
        con.close()


def identify(path: str | os.PathLike[str], kind: DatabaseKind) -> State:
    """What ``path`` is for ``kind`` (see the module docstring); DatabaseIdentityError when it
    is another database. Reads only."""
    path = Path(path)
    if not path.exists() or path.stat().st_size == 0:
        return State.NEW
    try:
        found = header(path)
    except OSError:
        return State.NOT_SQLITE  # the caller's open reports why it cannot be read
    if found is None:
        return State.NOT_SQLITE
    app_id, version = found
    label = f"{kind.what} {path}"
    if app_id == kind.application_id:
        if version == kind.version:
            return State.OURS
        newer = version > kind.version
        raise DatabaseIdentityError(
            f"{label}: incompatible schema, version {version} (this stratoflow reads version "
            f"{kind.version}); "
            + ("use the stratoflow that wrote it, or " if newer else
               "export it with the stratoflow that wrote it and import it into a new file, or ")
            + kind.choose
        )
    if app_id in KNOWN_IDS:
        raise DatabaseIdentityError(
            f"{label} is a {KNOWN_IDS[app_id]}, not a {kind.what}; left unchanged; {kind.choose}"
        )
    if app_id != 0 or version != 0:
        raise DatabaseIdentityError(
            f"{label} belongs to another application (SQLite application_id {app_id:#010x}, "
            f"user_version {version}); left unchanged; {kind.choose}"
        )
    try:
        tables = schema(path)
    except sqlite3.DatabaseError:
        return State.NOT_SQLITE
    if _is_legacy(tables, kind):
        return State.LEGACY
    shown = ", ".join(sorted(tables)) or "none"
    raise DatabaseIdentityError(
        f"{label} is an SQLite database that is not a {kind.what} (its tables: {shown}); left "
        f"unchanged; {kind.choose}"
    )


def _is_legacy(tables: Mapping[str, frozenset[str]], kind: DatabaseKind) -> bool:
    if not set(kind.required) <= set(tables) <= set(kind.tables):
        return False
    return all(
        kind.required.get(name, frozenset()) <= cols <= kind.tables[name]
        for name, cols in tables.items()
    )


def stamp(con: sqlite3.Connection, kind: DatabaseKind) -> None:
    """Give the database of ``con`` the identity of ``kind`` (a new or legacy one)."""
    con.execute(f"PRAGMA application_id = {int(kind.application_id)}")  # < 2**31: positive
    con.execute(f"PRAGMA user_version = {int(kind.version)}")


def columns_of(schema_sql: str) -> dict[str, frozenset[str]]:
    """Tables and columns of a ``CREATE TABLE`` script, from an in-memory database."""
    con = sqlite3.connect(":memory:")
    try:
        con.executescript(schema_sql)
        names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {n: frozenset(r[1] for r in con.execute(f"PRAGMA table_info('{n}')")) for n in names}
    finally:
        con.close()

"""The tuning database: stencil embeddings, every evaluated schedule, the schedules each
budgeted search chose, applied schedules.

SQLite at ``--db``, ``$STRATOFLOW_TUNING_DB`` or ``~/.cache/stratoflow/tuning.sqlite``.
Evaluations are keyed by (stencil, machine, domain, schedule key), so searches resume: a
schedule already measured on this machine and domain is not measured again.
"""

from __future__ import annotations

import json
import os
import platform
import shlex
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mapping.tuning.errors import TuningError
from mapping.tuning.features import Embedding
from mapping.tuning.measure import Evaluation
from mapping.tuning.records import check_row, read_json_column
from mapping.tuning.schedule import Schedule
from stencils.dbfile import (
    TUNING_DB_ID,
    DatabaseKind,
    State,
    columns_of,
    identify,
    read_only_uri,
    stamp,
)
from stencils.errors import DatabaseIdentityError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS stencils (
    stencil TEXT, machine TEXT, domain TEXT, features TEXT, baseline_s REAL, stream_gbs REAL,
    updated REAL, PRIMARY KEY (stencil, machine, domain));
CREATE TABLE IF NOT EXISTS evaluations (
    stencil TEXT, machine TEXT, domain TEXT, key TEXT, schedule TEXT, status TEXT,
    median_s REAL, min_s REAL, max_s REAL, noise REAL, build_seconds REAL, built INTEGER,
    error TEXT, created REAL, PRIMARY KEY (stencil, machine, domain, key));
CREATE TABLE IF NOT EXISTS feature_status (
    stencil TEXT, machine TEXT, domain TEXT, status TEXT, PRIMARY KEY (stencil, machine, domain));
CREATE TABLE IF NOT EXISTS searches (
    stencil TEXT, machine TEXT, domain TEXT, spec TEXT, keys TEXT, created REAL,
    PRIMARY KEY (stencil, machine, domain, spec));
CREATE TABLE IF NOT EXISTS applied (
    stencil TEXT PRIMARY KEY, schedule TEXT, machine TEXT, speedup REAL, applied REAL);
"""

_TABLES_COLUMNS = columns_of(_SCHEMA)
#: The identity of a tuning database (:mod:`stencils.dbfile`); a database without one that has
#: these tables (``searches`` came later) is recognised and stamped when opened.
KIND = DatabaseKind(
    what="tuning database", application_id=TUNING_DB_ID, version=1, tables=_TABLES_COLUMNS,
    required={t: c for t, c in _TABLES_COLUMNS.items() if t != "searches"},
    choose="pass another file with --db or $STRATOFLOW_TUNING_DB",
)

#: Exported and imported tables (an export without ``searches`` imports as before).
_TABLES = ("stencils", "feature_status", "evaluations", "searches", "applied")


#: the export format :meth:`TuningDB.export` writes, and the older ones :meth:`TuningDB.import_`
#: reads (format 1 named targets by the modules of their time: see ``Tunable.renamed``)
EXPORT_FORMAT = "stratoflow-tuning-db/2"
OLDER_FORMATS = ("stratoflow-tuning-db/1",)


def _renamed_targets(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with every row's ``stencil`` named as today (rows of retired definitions
    dropped)."""
    from mapping.tuning.registry import current_name

    out: dict[str, Any] = {"format": EXPORT_FORMAT}
    for table, rows in data.items():
        if table == "format":
            continue
        if not isinstance(rows, list):
            out[table] = rows
            continue
        kept = []
        for row in rows:
            name = row.get("stencil") if isinstance(row, dict) else None
            if isinstance(name, str):
                new = current_name(name)
                if new is None:
                    continue
                row = {**row, "stencil": new}
            kept.append(row)
        out[table] = kept
    return out


def default_db_path() -> Path:
    env = os.environ.get("STRATOFLOW_TUNING_DB")
    return Path(env) if env else Path.home() / ".cache" / "stratoflow" / "tuning.sqlite"


def machine_id() -> str:
    """Host, CPU model and core count: measurements are only compared on the same machine."""
    cpu = platform.processor() or "cpu"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{platform.node()}|{cpu}|{os.cpu_count()}"


def domain_key(domain: tuple[int, ...]) -> str:
    return "x".join(str(int(d)) for d in domain)


@dataclass(frozen=True)
class BestSchedule:
    stencil: str
    schedule: Schedule
    median_s: float
    default_s: float | None
    evaluations: int

    @property
    def speedup(self) -> float | None:
        return self.default_s / self.median_s if self.default_s else None


#: sqlite3 messages of a file that is not (or no longer) a sound SQLite database
_DAMAGED = ("malformed", "not a database", "disk image", "encrypted", "corrupt")


def database_error(path: Path, exc: BaseException) -> TuningError:
    """The TuningError for an SQLite failure on ``path``: which file, and what to do."""
    other = "or choose another database with --db or $STRATOFLOW_TUNING_DB"
    text = " ".join(str(exc).split())  # one line
    if any(word in text.lower() for word in _DAMAGED):
        return TuningError(
            f"tuning database {path} is damaged ({text}): move it aside "
            f"(mv {shlex.quote(str(path))} {shlex.quote(str(path) + '.damaged')}) and rerun to start an empty one, {other}"
        )
    return TuningError(
        f"tuning database {path} cannot be used ({text}): check that the file and its folder "
        f"are writable, {other}"
    )


class TuningDB:
    """Thin typed wrapper over the SQLite file (one connection per call, safe across processes).

    Opening checks the file (``PRAGMA quick_check``); every SQLite failure is a TuningError that
    names the file and what to do."""

    def __init__(
        self, path: Path | str | None = None, machine: str | None = None, *, read_only: bool = False
    ) -> None:
        """``read_only``: the file must exist and is never written (``tune db list|show|export``,
        a run that reads applied schedules); else it is created if missing."""
        self.path = Path(path) if path else default_db_path()
        self.machine = machine or machine_id()
        self.read_only = read_only
        if self.path.is_dir():
            raise TuningError(
                f"tuning database {self.path} is a folder, not a file; pass a file with --db or "
                "$STRATOFLOW_TUNING_DB"
            )
        try:
            state = identify(self.path, KIND)
        except DatabaseIdentityError as exc:
            raise TuningError(str(exc)) from None
        if read_only and state is State.NEW:
            raise TuningError(
                f"tuning database {self.path} does not exist (nothing has been tuned into it); "
                "check --db or $STRATOFLOW_TUNING_DB, or create it with 'stratoflow tune search'"
            )
        if not read_only:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise database_error(self.path, exc) from None
        with self._conn() as con:
            problems = [row[0] for row in con.execute("PRAGMA quick_check").fetchall()]
            if problems != ["ok"]:
                raise database_error(
                    self.path, sqlite3.DatabaseError("malformed: " + "; ".join(problems[:3]))
                )
            if not read_only:
                con.executescript(_SCHEMA)
                if state in (State.NEW, State.LEGACY):
                    stamp(con, KIND)

    @contextmanager
    def _conn(self) -> Iterator[sqlite3.Connection]:
        try:
            if self.read_only:
                con = sqlite3.connect(read_only_uri(self.path), uri=True, timeout=30)
            else:
                con = sqlite3.connect(self.path, timeout=30)
        except sqlite3.Error as exc:
            raise database_error(self.path, exc) from None
        try:
            yield con
            con.commit()
        except sqlite3.DatabaseError as exc:
            raise database_error(self.path, exc) from None
        finally:
            con.close()

    # -- embeddings -----------------------------------------------------------------------
    def put_embedding(
        self, embedding: Embedding, domain: tuple[int, ...], baseline_s: float, stream_gbs: float
    ) -> None:
        with self._conn() as con:
            con.execute(
                "INSERT OR REPLACE INTO stencils VALUES (?,?,?,?,?,?,?)",
                (
                    embedding.stencil, self.machine, domain_key(domain),
                    json.dumps(dict(embedding.features)), baseline_s, stream_gbs, time.time(),
                ),
            )
            con.execute(
                "INSERT OR REPLACE INTO feature_status VALUES (?,?,?,?)",
                (embedding.stencil, self.machine, domain_key(domain), json.dumps(dict(embedding.status))),
            )

    def embedding(self, stencil: str, domain: tuple[int, ...]) -> Embedding | None:
        with self._conn() as con:
            row = con.execute(
                "SELECT s.features, f.status FROM stencils s LEFT JOIN feature_status f "
                "USING (stencil, machine, domain) WHERE stencil=? AND machine=? AND domain=?",
                (stencil, self.machine, domain_key(domain)),
            ).fetchone()
        return self._embedding(stencil, row[0], row[1]) if row else None

    def _embedding(self, stencil: str, features: Any, status: Any) -> Embedding:
        where = self._where("stencils", stencil)
        return Embedding(stencil, read_json_column(features, dict, f"{where}: features"),
                         read_json_column(status or "{}", dict, f"{where}: status"))  # fmt: skip

    def embeddings(self, domain: tuple[int, ...]) -> list[Embedding]:
        with self._conn() as con:
            rows = con.execute(
                "SELECT stencil, s.features, f.status FROM stencils s LEFT JOIN feature_status f "
                "USING (stencil, machine, domain) WHERE machine=? AND domain=? ORDER BY stencil",
                (self.machine, domain_key(domain)),
            ).fetchall()
        return [self._embedding(s, f, st) for s, f, st in rows]

    # -- evaluations ----------------------------------------------------------------------
    def put_evaluation(self, stencil: str, domain: tuple[int, ...], ev: Evaluation) -> None:
        with self._conn() as con:
            con.execute(
                "INSERT OR REPLACE INTO evaluations VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    stencil, self.machine, domain_key(domain), ev.schedule.key,
                    ev.schedule.to_json(), ev.status, ev.median_s, ev.min_s, ev.max_s, ev.noise,
                    ev.build_seconds, int(ev.built), ev.error, time.time(),
                ),
            )

    def evaluations(self, stencil: str, domain: tuple[int, ...]) -> dict[str, Evaluation]:
        with self._conn() as con:
            rows = con.execute(
                "SELECT schedule, status, median_s, min_s, max_s, noise, build_seconds, built, error "
                "FROM evaluations WHERE stencil=? AND machine=? AND domain=?",
                (stencil, self.machine, domain_key(domain)),
            ).fetchall()
        out = {}
        cols = ("schedule", "status", "median_s", "min_s", "max_s", "noise", "build_seconds",
                "built", "error")  # fmt: skip
        for row in rows:
            rec = dict(zip(cols, row))
            where = self._where("evaluations", stencil)
            check_row("evaluations", {"stencil": stencil, "machine": self.machine,
                                      "domain": domain_key(domain), "key": "", **rec}, where)  # fmt: skip
            s = Schedule.from_json(rec["schedule"], f"{where}: schedule")
            out[s.key] = Evaluation(s, rec["status"], rec["median_s"], rec["min_s"], rec["max_s"],
                                    rec["noise"], rec["build_seconds"], bool(rec["built"]),
                                    rec["error"] or "")  # fmt: skip
        return out

    def _where(self, table: str, stencil: str) -> str:
        """Where a row came from, for a record that does not validate, and what to do."""
        return (f"tuning database {self.path}, table {table}, stencil {stencil!r} (a row of the "
                "wrong type; delete it with sqlite3 or start a new database)")  # fmt: skip

    def stencils(self) -> list[tuple[str, str, int, int]]:
        """(stencil, domain, evaluations, valid) for this machine."""
        with self._conn() as con:
            return con.execute(
                "SELECT stencil, domain, COUNT(*), SUM(status='ok') FROM evaluations "
                "WHERE machine=? GROUP BY stencil, domain ORDER BY stencil, domain",
                (self.machine,),
            ).fetchall()

    def machines(self) -> dict[str, tuple[int, int]]:
        """Every machine the file holds evaluations of: machine -> (stencils, evaluations)."""
        with self._conn() as con:
            rows = con.execute(
                "SELECT machine, COUNT(DISTINCT stencil), COUNT(*) FROM evaluations GROUP BY machine"
            ).fetchall()
        return {m: (int(n), int(e)) for m, n, e in rows}

    def best(self, stencil: str, domain: tuple[int, ...]) -> BestSchedule | None:
        evs = self.evaluations(stencil, domain)
        ok = [e for e in evs.values() if e.ok]
        if not ok:
            return None
        best = min(ok, key=lambda e: e.median_s)  # type: ignore[arg-type, return-value]
        default = evs.get(Schedule("numpy").key)
        return BestSchedule(
            stencil, best.schedule, float(best.median_s),  # type: ignore[arg-type]
            default.median_s if default and default.ok else None, len(evs),
        )

    # -- budgeted searches -----------------------------------------------------------------
    def put_search(self, stencil: str, domain: tuple[int, ...], spec: str, keys: list[str]) -> None:
        """Record the schedule keys a completed search evaluated, in order; ``spec`` names the
        search (strategy, budget, seed, space...) so that only the same search finds it."""
        with self._conn() as con:
            con.execute(
                "INSERT OR REPLACE INTO searches VALUES (?,?,?,?,?,?)",
                (stencil, self.machine, domain_key(domain), spec, json.dumps(keys), time.time()),
            )

    def search_keys(self, stencil: str, domain: tuple[int, ...], spec: str) -> list[str] | None:
        """The keys :meth:`put_search` recorded for this search on this machine, or None."""
        with self._conn() as con:
            row = con.execute(
                "SELECT keys FROM searches WHERE stencil=? AND machine=? AND domain=? AND spec=?",
                (stencil, self.machine, domain_key(domain), spec),
            ).fetchone()
        return read_json_column(row[0], list, self._where("searches", stencil)) if row else None

    # -- applied schedules ----------------------------------------------------------------
    def apply(self, stencil: str, schedule: Schedule, speedup: float | None) -> None:
        with self._conn() as con:
            con.execute(
                "INSERT OR REPLACE INTO applied VALUES (?,?,?,?,?)",
                (stencil, schedule.to_json(), self.machine, speedup, time.time()),
            )

    def unapply(self, stencil: str) -> bool:
        with self._conn() as con:
            return con.execute("DELETE FROM applied WHERE stencil=?", (stencil,)).rowcount > 0

    def applied(self) -> dict[str, Schedule]:
        with self._conn() as con:
            rows = con.execute("SELECT stencil, schedule FROM applied").fetchall()
        return {
            s: Schedule.from_json(j, f"{self._where('applied', str(s))}: schedule") for s, j in rows
        }

    # -- export / import ------------------------------------------------------------------
    def export(self) -> dict[str, Any]:
        data: dict[str, Any] = {"format": EXPORT_FORMAT}
        with self._conn() as con:
            for table in _TABLES:
                cur = con.execute(f"SELECT * FROM {table}")  # noqa: S608 (fixed table names)
                cols = [c[0] for c in cur.description]
                data[table] = [dict(zip(cols, row)) for row in cur.fetchall()]
        return data

    def import_(self, data: dict[str, Any], source: str = "import file") -> int:
        """Insert the rows of an export (:meth:`export`); every row is validated
        (:func:`~mapping.tuning.records.check_row`) and nothing is written if one is invalid. A
        format-1 export's target names are renamed as the registrations say
        (:func:`mapping.tuning.registry.current_name`) and the rows of retired definitions left
        out. The number of rows imported."""
        formats = (EXPORT_FORMAT, *OLDER_FORMATS)
        if not isinstance(data, dict) or data.get("format") not in formats:
            raise TuningError(
                "import file is not a stratoflow tuning export (key 'format' must be one of "
                f"{', '.join(map(repr, formats))}); create one with 'stratoflow tune db export'"
            )
        if data["format"] != EXPORT_FORMAT:
            data = _renamed_targets(data)
        n = 0
        with self._conn() as con:
            for table in _TABLES:
                known = {c[1] for c in con.execute(f"PRAGMA table_info({table})")}
                rows = data.get(table, [])
                if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
                    raise TuningError(
                        f"import file: {table!r} must be a list of rows (column -> value), "
                        f"got {type(rows).__name__}; create the file with 'stratoflow tune db export'"
                    )
                for i, row in enumerate(rows):
                    cols = list(row)
                    if not set(cols) <= known:
                        raise TuningError(
                            f"import file: table {table!r} row has unknown columns "
                            f"{sorted(set(cols) - known)}; expected {sorted(known)}"
                        )
                    where = f"{source}: {table}[{i}]"
                    row = check_row(table, row, where)
                    if "schedule" in row:
                        schedule = Schedule.from_json(row["schedule"], f"{where}: schedule")
                        if table == "evaluations" and row.get("key") != schedule.key:
                            raise TuningError(
                                f"{where}: key {row.get('key')!r} is not the key of its schedule "
                                f"({schedule.key}); export the database again with "
                                "'stratoflow tune db export'"
                            )
                    con.execute(
                        f"INSERT OR REPLACE INTO {table} ({','.join(cols)}) "  # noqa: S608
                        f"VALUES ({','.join('?' * len(cols))})",
                        [row[c] for c in cols],
                    )
                    n += 1
        return n

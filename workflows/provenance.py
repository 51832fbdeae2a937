"""The run database (SQLite): what ran, where, with which code, and what it wrote.

One row per run (spec, hash, git commit, package versions, host, Slurm job id, start/end,
status), per step (step hash and its parts -- parameters, inputs, code key --, why it ran or
was reused, status, tries, Parsl task ids, exit status), per attempt
(Parsl task id, try number, host, Slurm job id, exit status, log files) and per output file
(path and SHA-256). Statuses are stored as the string values of
:class:`~workflows.status.StepStatus` and :class:`~workflows.status.RunStatus`; rows hold those
strings (equal to the enum members). Safe to use from the engine's threads and from several
processes.

A database is checked when it is opened (``PRAGMA quick_check``); a damaged or foreign file,
or one that cannot be written, raises :class:`~workflows.errors.WorkflowError` naming the file
and what to do, never a raw ``sqlite3`` error.
"""

from __future__ import annotations

import getpass
import json
import os
import re
import socket
import sqlite3
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from typing import Any

from stencils.dbfile import (
    RUN_DB_ID,
    DatabaseKind,
    State,
    columns_of,
    identify,
    read_only_uri,
    stamp,
)
from stencils.errors import DatabaseIdentityError
from workflows.errors import WorkflowError
from workflows.paths import writable_dir
from workflows.status import FINISHED, RunStatus, StepStatus

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY, name TEXT, spec_hash TEXT, spec_json TEXT, spec_path TEXT,
    site TEXT, status TEXT, git_commit TEXT, packages TEXT, host TEXT, user TEXT, pid INTEGER,
    slurm_job_id TEXT, run_dir TEXT, started REAL, ended REAL
);
CREATE TABLE IF NOT EXISTS steps (
    run_id TEXT, step_id TEXT, step_hash TEXT, kind TEXT, status TEXT, message TEXT,
    started REAL, ended REAL, exit_code INTEGER, tries INTEGER DEFAULT 0,
    parsl_task_ids TEXT DEFAULT '[]', host TEXT, slurm_job_id TEXT, out_dir TEXT, log_dir TEXT,
    step_key TEXT, inputs_hash TEXT, reason TEXT,
    PRIMARY KEY (run_id, step_id)
);
CREATE TABLE IF NOT EXISTS attempts (
    run_id TEXT, step_id TEXT, try INTEGER, parsl_task_id INTEGER, parsl_try_id INTEGER, host TEXT,
    slurm_job_id TEXT, started REAL, ended REAL, exit_code INTEGER, error TEXT,
    stdout TEXT, stderr TEXT
);
CREATE TABLE IF NOT EXISTS outputs (
    run_id TEXT, step_id TEXT, path TEXT, sha256 TEXT, bytes INTEGER
);
CREATE INDEX IF NOT EXISTS steps_by_hash ON steps (step_hash, status);
"""
# Columns added after the first schema: added to an older database when it is opened.
_ADDED_COLUMNS = {"steps": ("step_key TEXT", "inputs_hash TEXT", "reason TEXT")}
_INDEXES = "CREATE INDEX IF NOT EXISTS steps_by_inputs ON steps (inputs_hash, status);"
RUN_ID = re.compile(r"[A-Za-z0-9_-]+")  # the characters of spec names and run-id suffixes

_FINISHED_VALUES = tuple(sorted(s.value for s in FINISHED))
PACKAGES = (
    "stratoflow", "gt4py", "dace", "numpy", "mpi4py", "mpich", "parsl", "xarray",
    "netCDF4", "torch", "pydantic", "scipy",
)  # fmt: skip


def package_versions() -> dict[str, str]:
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def git_commit() -> str:
    """The stratoflow checkout's commit (``+dirty`` with uncommitted changes), or 'unknown'."""
    root = Path(__file__).resolve().parent.parent
    try:
        commit = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout.strip()  # fmt: skip
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, timeout=10,
        ).stdout.strip()  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return commit + ("+dirty" if dirty else "")


#: The identity of a run database (:mod:`stencils.dbfile`); a database without one that has
#: these tables (the columns of ``_ADDED_COLUMNS`` came later) is recognised and stamped.
_COLUMNS = columns_of(SCHEMA)
KIND = DatabaseKind(
    what="run database", application_id=RUN_DB_ID, version=1, tables=_COLUMNS,
    required={t: (c - {a.split()[0] for a in _ADDED_COLUMNS.get(t, ())}) for t, c in _COLUMNS.items()},
    choose="choose another run database with --db FILE or $STRATOFLOW_DB (or another --runs-dir)",
)


class ProvenanceDB:
    """The run database at ``path`` (created on first use, checked when opened).

    ``read_only``: the database must exist and is only read (``runs list``, ``runs show``):
    nothing is created, stamped or migrated."""

    def __init__(self, path: str | Path, *, read_only: bool = False):
        self.path = Path(path)
        self._lock = threading.RLock()
        if self.path.is_dir():
            raise WorkflowError(
                f"run database {self.path} is a folder, not a file; {_CHOOSE}"
            )
        state = self.identify(self.path)
        if read_only and state is State.NEW:
            raise WorkflowError(
                f"run database {self.path} does not exist (no run has been recorded there); "
                f"check the path, or {_CHOOSE}"
            )
        if not read_only:
            writable_dir(self.path.parent, "run database folder", _CHOOSE)
        try:
            if read_only:
                self._conn = sqlite3.connect(read_only_uri(self.path), uri=True, timeout=60, check_same_thread=False,
                                             isolation_level=None)  # fmt: skip
            else:
                self._conn = sqlite3.connect(
                    self.path, timeout=60, check_same_thread=False, isolation_level=None
                )
        except sqlite3.Error as exc:
            raise self._error(exc) from None
        try:
            self._conn.row_factory = sqlite3.Row
            if state in (State.NEW, State.LEGACY) and not read_only:
                stamp(self._conn, KIND)  # before WAL, so the header carries it at once
            if not read_only:
                self._conn.execute("PRAGMA journal_mode=WAL")
            problems = [r[0] for r in self._conn.execute("PRAGMA quick_check").fetchall()]
            if problems != ["ok"]:
                raise WorkflowError(_damaged(self.path, "; ".join(problems[:3])))
            if not read_only:
                self._conn.executescript(SCHEMA)
                self._add_columns()
        except sqlite3.Error as exc:
            self._conn.close()
            raise self._error(exc) from None
        except WorkflowError:
            self._conn.close()
            raise

    @staticmethod
    def identify(path: Path) -> State:
        """What ``path`` is (:func:`stencils.dbfile.identify`); WorkflowError naming it when it
        is another database. Reads only: a command checks its ``--db`` before creating
        anything."""
        try:
            return identify(path, KIND)
        except DatabaseIdentityError as exc:
            raise WorkflowError(str(exc)) from None

    def _add_columns(self) -> None:
        for table, columns in _ADDED_COLUMNS.items():
            have = {r[1] for r in self._conn.execute(f"PRAGMA table_info({table})")}
            for column in columns:
                if column.split()[0] not in have:
                    try:
                        self._conn.execute(f"ALTER TABLE {table} ADD COLUMN {column}")
                    except sqlite3.OperationalError as exc:  # another process added it meanwhile
                        if "duplicate column" not in str(exc):
                            raise
        self._conn.executescript(_INDEXES)

    def _error(self, exc: sqlite3.Error) -> WorkflowError:
        """A WorkflowError for an SQLite failure on this database: what went wrong, what to do."""
        name = getattr(exc, "sqlite_errorname", "")
        if name in ("SQLITE_CORRUPT", "SQLITE_NOTADB") or type(exc) is sqlite3.DatabaseError:
            return WorkflowError(_damaged(self.path, str(exc)))
        if name in ("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_AUTH"):
            return WorkflowError(
                f"run database {self.path} cannot be opened for writing ({exc}): make it and "
                f"its folder {self.path.parent} writable; {_CHOOSE}"
            )
        if name in ("SQLITE_BUSY", "SQLITE_LOCKED"):
            return WorkflowError(
                f"run database {self.path} is locked by another process ({exc}); wait for it "
                f"or {_CHOOSE}"
            )
        if name == "SQLITE_FULL":
            return WorkflowError(f"run database {self.path}: the disk is full ({exc}); free space")
        return WorkflowError(f"run database {self.path}: {exc}; {_CHOOSE}")

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> ProvenanceDB:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    yield self._conn
                except BaseException:
                    self._conn.execute("ROLLBACK")
                    raise
                self._conn.execute("COMMIT")
            except sqlite3.Error as exc:
                raise self._error(exc) from None

    def _query(self, sql: str, args: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        with self._lock:
            try:
                return [dict(r) for r in self._conn.execute(sql, args).fetchall()]
            except sqlite3.Error as exc:
                raise self._error(exc) from None

    # --- runs -----------------------------------------------------------------------------

    def begin_run(
        self, run_id: str, name: str, spec_hash: str, spec_json: str, spec_path: str,
        site: str, run_dir: str,
    ) -> None:  # fmt: skip
        """Record that a run (new or resumed) starts now in this process."""
        values = dict(
            run_id=run_id, name=name, spec_hash=spec_hash, spec_json=spec_json,
            spec_path=spec_path, site=site, status=RunStatus.RUNNING.value, git_commit=git_commit(),
            packages=json.dumps(package_versions()), host=socket.gethostname(),
            user=getpass.getuser(), pid=os.getpid(),
            slurm_job_id=os.environ.get("SLURM_JOB_ID"), run_dir=run_dir,
            started=time.time(), ended=None,
        )  # fmt: skip
        cols = ", ".join(values)
        marks = ", ".join("?" * len(values))
        with self._tx() as c:
            c.execute(f"INSERT OR REPLACE INTO runs ({cols}) VALUES ({marks})", tuple(values.values()))

    def update_run(self, run_id: str, **fields: Any) -> None:
        if "status" in fields:
            fields["status"] = RunStatus(fields["status"]).value
        sets = ", ".join(f"{k} = ?" for k in fields)
        with self._tx() as c:
            c.execute(f"UPDATE runs SET {sets} WHERE run_id = ?", (*fields.values(), run_id))

    def get_run(self, run_id: str) -> dict[str, Any]:
        """The run ``run_id``, or the one run whose id starts with it. Ids are matched
        literally: an empty id, or one with characters no run id has (a glob pattern, a
        space), is refused."""
        if not RUN_ID.fullmatch(run_id):
            what = "an empty run id" if not run_id.strip() else f"run id {run_id!r}"
            raise WorkflowError(
                f"{what} names no run: run ids have letters, digits, '_' and '-' only, and "
                "are matched exactly or by a unique prefix (no patterns); `stratoflow runs "
                "list` shows them"
            )
        rows = self._query("SELECT * FROM runs WHERE run_id = ?", (run_id,))
        if not rows:
            rows = self._query(
                "SELECT * FROM runs WHERE substr(run_id, 1, ?) = ?", (len(run_id), run_id)
            )
        if len(rows) > 1:
            matching = sorted(r["run_id"] for r in rows)
            shown = ", ".join(matching[:10]) + (f" and {len(matching) - 10} more" if len(matching) > 10 else "")
            raise WorkflowError(
                f"run prefix {run_id!r} is ambiguous in the run database {self.path}: "
                f"{len(matching)} runs start with it ({shown}); give more of the id"
            )
        if not rows:
            known = ", ".join(r["run_id"] for r in self.list_runs()[:10]) or "none"
            raise WorkflowError(
                f"run {run_id!r} is not in the run database {self.path}; known runs: {known}"
            )
        return rows[0]

    def list_runs(self) -> list[dict[str, Any]]:
        return self._query("SELECT * FROM runs ORDER BY started DESC")

    def delete_run(self, run_id: str) -> None:
        with self._tx() as c:
            for table in ("runs", "steps", "attempts", "outputs"):
                c.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))

    # --- steps -----------------------------------------------------------------------------

    def set_step(self, run_id: str, step_id: str, **fields: Any) -> None:
        """Insert or update one step's row."""
        if "status" in fields:
            fields["status"] = StepStatus(fields["status"]).value
        if "parsl_task_ids" in fields and not isinstance(fields["parsl_task_ids"], str):
            fields["parsl_task_ids"] = json.dumps(list(fields["parsl_task_ids"]))
        with self._tx() as c:
            c.execute(
                "INSERT OR IGNORE INTO steps (run_id, step_id) VALUES (?, ?)", (run_id, step_id)
            )
            if fields:
                sets = ", ".join(f"{k} = ?" for k in fields)
                c.execute(
                    f"UPDATE steps SET {sets} WHERE run_id = ? AND step_id = ?",
                    (*fields.values(), run_id, step_id),
                )

    def get_step(self, run_id: str, step_id: str) -> dict[str, Any] | None:
        rows = self._query(
            "SELECT * FROM steps WHERE run_id = ? AND step_id = ?", (run_id, step_id)
        )
        return rows[0] if rows else None

    def steps(self, run_id: str) -> list[dict[str, Any]]:
        return self._query("SELECT * FROM steps WHERE run_id = ? ORDER BY rowid", (run_id,))

    def finished_steps_with_hash(self, step_hash: str) -> list[dict[str, Any]]:
        marks = ", ".join("?" * len(_FINISHED_VALUES))
        return self._query(
            f"SELECT * FROM steps WHERE step_hash = ? AND status IN ({marks}) ORDER BY ended DESC",
            (step_hash, *_FINISHED_VALUES),
        )

    def earlier_result(
        self, run_id: str, step_id: str, inputs_hash: str, spec_name: str
    ) -> dict[str, Any] | None:
        """The result a step is compared with when it runs: this run's own finished row of
        the step; else the latest finished step of any run with the same parameters and input
        files (``inputs_hash``); else the latest finished step of that name in a run of a
        spec of the same name; None when there is none."""
        own = self.get_step(run_id, step_id)
        if own and own["status"] in FINISHED and own["step_key"]:
            return own
        marks = ", ".join("?" * len(_FINISHED_VALUES))
        rows = self._query(
            f"SELECT * FROM steps WHERE inputs_hash = ? AND status IN ({marks}) "
            "AND step_key IS NOT NULL ORDER BY ended DESC LIMIT 1",
            (inputs_hash, *_FINISHED_VALUES),
        ) or self._query(
            f"SELECT s.* FROM steps s JOIN runs r ON r.run_id = s.run_id WHERE r.name = ? "
            f"AND s.step_id = ? AND s.status IN ({marks}) AND s.step_key IS NOT NULL "
            "ORDER BY s.ended DESC LIMIT 1",
            (spec_name, step_id, *_FINISHED_VALUES),
        )  # fmt: skip
        return rows[0] if rows else None

    def max_try(self, run_id: str, step_id: str) -> int:
        """The highest try number recorded for a step (0 when none)."""
        rows = self._query(
            "SELECT MAX(try) AS n FROM attempts WHERE run_id = ? AND step_id = ?", (run_id, step_id)
        )
        return int(rows[0]["n"] or 0)

    def add_attempt(self, run_id: str, step_id: str, **fields: Any) -> None:
        fields = {"run_id": run_id, "step_id": step_id} | fields
        cols = ", ".join(fields)
        marks = ", ".join("?" * len(fields))
        with self._tx() as c:
            c.execute(f"INSERT INTO attempts ({cols}) VALUES ({marks})", tuple(fields.values()))

    def attempts(self, run_id: str, step_id: str | None = None) -> list[dict[str, Any]]:
        if step_id is None:
            return self._query("SELECT * FROM attempts WHERE run_id = ? ORDER BY rowid", (run_id,))
        return self._query(
            "SELECT * FROM attempts WHERE run_id = ? AND step_id = ? ORDER BY rowid",
            (run_id, step_id),
        )

    # --- outputs ---------------------------------------------------------------------------

    def set_outputs(self, run_id: str, step_id: str, files: list[tuple[str, str, int]]) -> None:
        """Replace a step's output list with ``(relative path, sha256, bytes)`` rows."""
        with self._tx() as c:
            c.execute("DELETE FROM outputs WHERE run_id = ? AND step_id = ?", (run_id, step_id))
            c.executemany(
                "INSERT INTO outputs VALUES (?, ?, ?, ?, ?)",
                [(run_id, step_id, p, h, n) for p, h, n in files],
            )

    def outputs(self, run_id: str, step_id: str | None = None) -> list[dict[str, Any]]:
        if step_id is None:
            return self._query("SELECT * FROM outputs WHERE run_id = ? ORDER BY path", (run_id,))
        return self._query(
            "SELECT * FROM outputs WHERE run_id = ? AND step_id = ? ORDER BY path",
            (run_id, step_id),
        )


_CHOOSE = "choose another run database with --db FILE or $STRATOFLOW_DB (or another --runs-dir)"


def _damaged(path: Path, detail: str) -> str:
    return (
        f"run database {path} is damaged or not an SQLite database ({detail}): move it aside "
        f"(e.g. `mv {path} {path}.damaged`; a new one is created on the next run, without the "
        f"old records), or {_CHOOSE}"
    )

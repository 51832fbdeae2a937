"""Set-ups of the cases of files that are not what they claim: binary and Latin-1 text inputs,
SQLite files of another application or of the other stratoflow database, tuning databases with
rows of the wrong type. A set-up that hands in a database returns a check, run after the case,
that the file is byte-for-byte unchanged and nothing was created beside it."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01" + bytes(range(256))
SPEC = "name: demo\nsteps:\n  - name: a\n    kind: command\n    argv: [echo, hi]\n"


def _binary(path: Path) -> None:
    path.write_bytes(PNG)


def _latin1(path: Path, text: str) -> None:
    path.write_bytes(text.encode("latin-1"))


def _unchanged(*paths: Path) -> Callable[[], None]:
    """A check that ``paths`` keep their bytes and nothing appears beside them."""
    digests = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}
    beside = {p: sorted(x.name for x in p.parent.iterdir()) for p in paths}

    def check() -> None:
        for p, digest in digests.items():
            assert hashlib.sha256(p.read_bytes()).hexdigest() == digest, f"{p} was changed"
            now = sorted(x.name for x in p.parent.iterdir())
            assert now == beside[p], f"files appeared beside {p}: {now}"

    return check


# -- text files that are not UTF-8 ----------------------------------------------------------
def binary_namelist(case_dir: Path) -> None:
    _binary(case_dir / "input.nml")


def latin1_namelist(case_dir: Path) -> None:
    _latin1(case_dir / "input.nml", "! Maßstab: café\n&fv_core_nml\n npx = 25\n/\n")


def binary_spec(case_dir: Path) -> None:
    _binary(case_dir / "spec.yaml")


def latin1_spec(case_dir: Path) -> None:
    _latin1(case_dir / "spec.yaml", SPEC.replace("name: demo", "name: demo\ndescription: café"))


def utf16_spec(case_dir: Path) -> None:
    (case_dir / "spec.yaml").write_bytes(SPEC.encode("utf-16"))


def binary_site(case_dir: Path) -> None:
    (case_dir / "spec.yaml").write_text(SPEC)
    _binary(case_dir / "site.yaml")


def latin1_program(case_dir: Path) -> None:
    _latin1(case_dir / "prog.json", '{"name": "café", "dimensions": [8, 8, 8]}')


def binary_schedule(case_dir: Path) -> None:
    _binary(case_dir / "schedule.json")


def latin1_import(case_dir: Path) -> None:
    _latin1(case_dir / "data.json", '{"format": "stratoflow-tuning-db/1", "note": "é"}')


def binary_latencies(case_dir: Path) -> None:
    _binary(case_dir / "lat.json")


def binary_benchmark_json(case_dir: Path) -> None:
    _binary(case_dir / "b.json")


def binary_encoder(case_dir: Path) -> None:
    _binary(case_dir / "enc.json")


# -- databases that are not ours ------------------------------------------------------------
def _foreign(path: Path, app_id: int = 0, tables: str = "CREATE TABLE notes (text TEXT);") -> Path:
    con = sqlite3.connect(path)
    con.executescript(tables)
    con.execute("INSERT INTO notes VALUES ('hello')" if "notes" in tables else "SELECT 1")
    con.execute(f"PRAGMA application_id = {app_id}")
    con.commit()
    con.close()
    return path


def foreign_db(case_dir: Path) -> Callable[[], None]:
    """``other.sqlite``: another application's database (a table of notes, no identity)."""
    return _unchanged(_foreign(case_dir / "other.sqlite"))


def foreign_app_id_db(case_dir: Path) -> Callable[[], None]:
    """``other.sqlite``: a database with another application's id (Fossil's)."""
    return _unchanged(_foreign(case_dir / "other.sqlite", app_id=0x0F055112))


def foreign_runs_like_db(case_dir: Path) -> Callable[[], None]:
    """``other.sqlite``: no identity, a ``runs`` table of another shape."""
    return _unchanged(_foreign(case_dir / "other.sqlite", tables="CREATE TABLE runs (id INT);"))


def tuning_db(case_dir: Path) -> Callable[[], None]:
    """``tuning.sqlite``: a stratoflow tuning database (with an applied schedule)."""
    from mapping.tuning.db import TuningDB
    from mapping.tuning.schedule import Schedule

    TuningDB(case_dir / "tuning.sqlite", machine="m").apply("hdiff", Schedule("numpy"), None)
    return _unchanged(case_dir / "tuning.sqlite")


def run_db(case_dir: Path) -> Callable[[], None]:
    """``runs.db``: a stratoflow run database (one recorded run)."""
    from tests.badinput.setups_runs import recorded_run

    (case_dir / "r").mkdir()
    recorded_run(case_dir / "r" / "runs.db")
    return _unchanged(case_dir / "r" / "runs.db")


def old_version_tuning_db(case_dir: Path) -> Callable[[], None]:
    """``tuning.sqlite``: a tuning database with the identity of schema version 0."""
    path = case_dir / "tuning.sqlite"
    tuning_db(case_dir)
    con = sqlite3.connect(path)
    con.execute("PRAGMA user_version = 0")
    con.commit()
    con.close()
    return _unchanged(path)


def newer_version_run_db(case_dir: Path) -> Callable[[], None]:
    """``runs.db`` of run-database schema version 9."""
    run_db(case_dir)
    path = case_dir / "r" / "runs.db"
    con = sqlite3.connect(path)
    con.execute("PRAGMA user_version = 9")
    con.commit()
    con.close()
    return _unchanged(path)


# -- records of the wrong type --------------------------------------------------------------
def _export_with(case_dir: Path, table: str, **changes: object) -> None:
    """``data.json``: a tuning export whose first ``table`` row has ``changes``."""
    from mapping.tuning.db import TuningDB
    from mapping.tuning.features import Embedding
    from mapping.tuning.measure import Evaluation
    from mapping.tuning.schedule import Schedule

    db = TuningDB(case_dir / "home" / "src.sqlite", machine="m")
    db.put_embedding(Embedding("hdiff", {"reads": 5.0}), (8, 8, 4), 1e-3, 10.0)
    db.put_evaluation("hdiff", (8, 8, 4), Evaluation(Schedule("numpy"), "ok", median_s=4e-3))
    db.put_search("hdiff", (8, 8, 4), "exhaustive", [Schedule("numpy").key])
    db.apply("hdiff", Schedule("numpy"), 1.0)
    data = db.export()
    data[table][0].update(changes)
    (case_dir / "data.json").write_text(json.dumps(data))
    (case_dir / "home" / "src.sqlite").unlink()


def import_schedule_threads_text(case_dir: Path) -> None:
    _export_with(case_dir, "evaluations", schedule='{"backend": "gt:cpu_ifirst", "threads": "abc"}')


def import_median_text(case_dir: Path) -> None:
    _export_with(case_dir, "evaluations", median_s="fast")


def import_domain_word(case_dir: Path) -> None:
    _export_with(case_dir, "stencils", domain="big")


def import_features_not_json(case_dir: Path) -> None:
    _export_with(case_dir, "stencils", features="{reads: 5")


def import_wrong_key(case_dir: Path) -> None:
    _export_with(case_dir, "evaluations", key="0123456789abcdef")


def import_applied_schedule_list(case_dir: Path) -> None:
    _export_with(case_dir, "applied", schedule="[1, 2]")


def import_search_keys_text(case_dir: Path) -> None:
    _export_with(case_dir, "searches", keys="k1,k2")


def db_with_bad_row(case_dir: Path) -> None:
    """The default tuning database, with an evaluation row whose schedule someone else wrote
    with threads as text."""
    from mapping.tuning.db import TuningDB, machine_id
    from mapping.tuning.measure import Evaluation
    from mapping.tuning.schedule import Schedule

    path = case_dir / "home" / ".cache" / "stratoflow" / "tuning.sqlite"
    path.parent.mkdir(parents=True)
    db = TuningDB(path, machine=machine_id())
    db.put_evaluation("hdiff", (96, 96, 48), Evaluation(Schedule("numpy"), "ok", median_s=4e-3))
    con = sqlite3.connect(path)
    con.execute("UPDATE evaluations SET schedule = '{\"threads\": \"abc\"}'")
    con.commit()
    con.close()


"""``stratoflow runs list|show ID|clean``: the run database.

``runs show`` says for each step whether it ran or was reused, and why (the parts of its step
key are compared with the earlier result: see :mod:`workflows.kinds.code`), and lists each
step's code key (stratoflow's source digests, library versions).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time
from pathlib import Path

from workflows.errors import WorkflowError
from workflows.paths import add_location_arguments, db_path, runs_dir
from workflows.provenance import ProvenanceDB
from workflows.report import markdown_table
from workflows.status import FINISHED, RunStatus


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "runs",
        help="list, inspect and clean recorded runs (provenance database)",
        description="Runs recorded in the run database: spec hash, commit, packages, host, "
        "Slurm job, Parsl task ids, per-step status and output checksums.",
    )
    action = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    p = action.add_parser("list", help="one line per run, newest first")
    add_location_arguments(p)
    p.set_defaults(handler=list_runs)
    p = action.add_parser("show", help="everything recorded about one run (why each step "
                          "ran or was reused, its code key)")
    p.add_argument("run_id", metavar="ID", help="run id (or a unique prefix)")
    add_location_arguments(p)
    p.set_defaults(handler=show_run)
    p = action.add_parser("clean", help="delete runs (folders and records)")
    p.add_argument("run_ids", nargs="*", metavar="ID", help="runs to delete")
    p.add_argument("--failed", action="store_true",
                   help="delete every failed or interrupted run")  # fmt: skip
    p.add_argument("--all", action="store_true", help="delete every run")
    add_location_arguments(p)
    p.set_defaults(handler=clean_runs)


def _db(args: argparse.Namespace, *, read_only: bool = False) -> ProvenanceDB:
    """The run database; ``read_only`` (list, show): a missing runs folder or database is an
    error naming it, and nothing is created."""
    runs = runs_dir(args.runs_dir)
    explicit = args.runs_dir is not None or not os.environ.get("STRATOFLOW_DB")
    if read_only and args.db is None and explicit and not runs.is_dir():
        raise WorkflowError(
            f"runs folder {runs} does not exist (no run has been recorded there); check "
            "--runs-dir or $STRATOFLOW_RUNS_DIR, or start a run with 'stratoflow run'"
        )
    return ProvenanceDB(db_path(args.db, runs), read_only=read_only)


def _when(t: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(t)) if t else "-"


def _no_database(args: argparse.Namespace) -> Path | None:
    """The run database's path when it does not exist yet (a runs folder without runs)."""
    runs = runs_dir(args.runs_dir)
    path = db_path(args.db, runs)
    return path if runs.is_dir() and not path.exists() else None


def list_runs(args: argparse.Namespace) -> int:
    missing = _no_database(args)
    if missing is not None:
        print(f"no runs recorded (no run database at {missing} yet)")
        return 0
    with _db(args, read_only=True) as db:
        rows = []
        for r in db.list_runs():
            steps = db.steps(r["run_id"])
            done = sum(s["status"] in FINISHED for s in steps)
            wall = f"{r['ended'] - r['started']:.0f}" if r["ended"] else "-"
            rows.append([r["run_id"], r["status"], r["site"], r["slurm_job_id"] or "-",
                         f"{done}/{len(steps)}", _when(r["started"]), wall])  # fmt: skip
    if not rows:
        print("no runs recorded")
        return 0
    print(markdown_table(["run", "status", "site", "Slurm job", "steps done", "started (UTC)",
                          "seconds"], rows))  # fmt: skip
    return 0


def show_run(args: argparse.Namespace) -> int:
    missing = _no_database(args)
    if missing is not None:
        raise WorkflowError(
            f"run {args.run_id!r} is not in the run database {missing}: it does not exist yet "
            "(no run recorded); check --runs-dir, --db or $STRATOFLOW_DB"
        )
    with _db(args, read_only=True) as db:
        r = db.get_run(args.run_id)
        info = [["run", r["run_id"]], ["status", r["status"]], ["spec hash", r["spec_hash"]],
                ["spec file", r["spec_path"] or "-"], ["site", r["site"]], ["host", r["host"]],
                ["user", r["user"]], ["stratoflow commit", r["git_commit"]],
                ["Slurm job", r["slurm_job_id"] or "-"], ["started (UTC)", _when(r["started"])],
                ["ended (UTC)", _when(r["ended"])], ["folder", r["run_dir"]]]  # fmt: skip
        print(markdown_table(["field", "value"], info))
        print("\nsteps:")
        steps = db.steps(r["run_id"])
        rows = [[s["step_id"], s["kind"], s["status"], s["tries"] or 0,
                 ",".join(map(str, json.loads(s["parsl_task_ids"] or "[]"))) or "-",
                 s["exit_code"] if s["exit_code"] is not None else "-",
                 (s["step_hash"] or "")[:12], s["reason"] or "-", (s["message"] or "")[:80]]
                for s in steps]  # fmt: skip
        print(markdown_table(["step", "kind", "status", "tries", "Parsl tasks", "exit",
                              "step hash", "ran or reused, and why", "note"], rows))  # fmt: skip
        keys = [[s["step_id"], *_code_key_cells(s["step_key"])] for s in steps if s["step_key"]]
        if keys:
            print("\ncode keys (part of the step hash):")
            print(markdown_table(["step", "stratoflow", "sources (SHA-256)", "libraries"], keys))
        attempts = db.attempts(r["run_id"])
        if attempts:
            print("\nattempts:")
            print(markdown_table(
                ["step", "try", "Parsl task", "host", "Slurm job", "exit", "seconds", "stderr"],
                [[a["step_id"], a["try"], a["parsl_task_id"] if a["parsl_task_id"] is not None
                  else "-", a["host"] or "-", a["slurm_job_id"] or "-", a["exit_code"],
                  f"{(a['ended'] or a['started']) - a['started']:.1f}", a["stderr"]]
                 for a in attempts]))  # fmt: skip
        outputs = db.outputs(r["run_id"])
        if outputs:
            print("\noutputs:")
            print(markdown_table(["step", "file", "bytes", "sha256"],
                                 [[o["step_id"], o["path"], o["bytes"], o["sha256"]]
                                  for o in outputs]))  # fmt: skip
        print("\npackages: " + ", ".join(f"{k} {v}" for k, v in json.loads(r["packages"]).items()))
    return 0


def _code_key_cells(step_key: str) -> list[str]:
    """The stratoflow/Python versions, source digests and library versions of a step key."""
    try:
        code = json.loads(step_key).get("code", {})
    except (ValueError, AttributeError):
        return ["?", "?", "?"]
    sources = ", ".join(f"{p} {d[:12]}" for p, d in code.get("sources", {}).items()) or "-"
    libraries = ", ".join(f"{n} {v}" for n, v in code.get("libraries", {}).items()) or "-"
    return [f"{code.get('stratoflow', '?')} (Python {code.get('python', '?')})", sources, libraries]


def clean_runs(args: argparse.Namespace) -> int:
    with _db(args) as db:
        if args.all:
            targets = [r["run_id"] for r in db.list_runs()]
        elif args.failed:
            targets = [r["run_id"] for r in db.list_runs()
                       if r["status"] in (RunStatus.FAILED, RunStatus.INTERRUPTED)]  # fmt: skip
        elif args.run_ids:
            targets = [db.get_run(i)["run_id"] for i in args.run_ids]
        else:
            raise WorkflowError("runs clean: name run ids, or pass --failed or --all")
        for run_id in targets:
            row = db.get_run(run_id)
            folder = Path(row["run_dir"])
            if row["status"] == RunStatus.RUNNING:
                print(f"skipped {run_id}: it is recorded as running (pid {row['pid']})")
                continue
            if folder.name == run_id and folder.is_dir():
                shutil.rmtree(folder)
            db.delete_run(run_id)
            print(f"deleted {run_id}")
    return 0

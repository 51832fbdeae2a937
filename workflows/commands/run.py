"""``stratoflow run [SPEC]``: run a workflow spec (default: the embedded main job)."""

from __future__ import annotations

import argparse
import logging

from workflows.commands.argtypes import add_max_steps_argument
from workflows.engine import RunOutcome, WorkflowRunner
from workflows.paths import DEFAULT_SPEC, add_location_arguments, db_path, runs_dir, writable_dir
from workflows.provenance import ProvenanceDB
from workflows.report import markdown_table
from workflows.sites import available_sites, load_site
from workflows.spec import load_spec
from workflows.status import RunStatus

log = logging.getLogger(__name__)


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "run",
        help="run a workflow spec (no SPEC: the main job, workflows/examples/default.yaml)",
        description=(
            "Run the steps of a YAML workflow spec in dependency order through Parsl, with "
            "retries, memoisation (an identical finished step is skipped) and provenance. "
            "Outputs, logs and a Markdown report go to runs/<run-id>/; rerunning a killed or "
            "failed workflow resumes it. Ctrl-C (or SIGTERM) stops the run: steps not started "
            "are cancelled, running ones stopped, the run is recorded as interrupted and the "
            "command exits 130. Without SPEC the embedded main job runs: stencil "
            "demo, Williamson TC2 at C24 on 6 MPI ranks, StencilFlow map+simulate, transfer "
            "tuning, ENS-10 sample data + EMOS/MLP training and evaluation."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("spec", nargs="?", default=str(DEFAULT_SPEC), metavar="SPEC",
                        help="workflow YAML (default: the embedded main job)")  # fmt: skip
    parser.add_argument("--site", default="local", metavar="SITE",
                        help=f"site profile: {', '.join(available_sites())} or a YAML file "
                             "(default: local)")  # fmt: skip
    parser.add_argument("--force", action="store_true",
                        help="rerun every step, even identical finished ones")  # fmt: skip
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_max_steps_argument(parser)
    add_location_arguments(parser)
    parser.set_defaults(handler=run_command)


def print_summary(outcome: RunOutcome) -> None:
    rows = [[o.id, o.kind, o.status, o.tries, f"{o.seconds:.1f}", o.message[:110]]
            for o in outcome.steps]  # fmt: skip
    print(markdown_table(["step", "kind", "status", "tries", "seconds", "note"], rows))
    print(f"\nrun {outcome.run_id}: {outcome.status}")
    print(f"outputs: {outcome.run_dir}")
    if outcome.report is not None:
        print(f"report:  {outcome.report}")


def run_command(args: argparse.Namespace) -> int:
    spec = load_spec(args.spec, args.max_steps)
    site = load_site(args.site)
    ProvenanceDB.identify(db_path(args.db, runs_dir(args.runs_dir)))  # before any folder is made
    runs = writable_dir(runs_dir(args.runs_dir))
    with ProvenanceDB(db_path(args.db, runs)) as db:
        runner = WorkflowRunner(spec, site, runs, db, force=args.force, spec_path=str(args.spec),
                                progress=not args.no_progress, max_steps=args.max_steps)  # fmt: skip
        outcome = runner()
    print_summary(outcome)
    if outcome.status is RunStatus.INTERRUPTED:
        return 130  # the shell's code for a run stopped by Ctrl-C
    return 0 if outcome.status is RunStatus.DONE else 1

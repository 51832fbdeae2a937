"""``stratoflow submit SPEC --site slurm``: a plain sbatch job, without Parsl pilots."""

from __future__ import annotations

import argparse
import logging

from workflows import batch
from workflows.commands.argtypes import add_max_steps_argument
from workflows.errors import SpecError
from workflows.paths import add_location_arguments, db_path, runs_dir
from workflows.provenance import ProvenanceDB
from workflows.report import markdown_table
from workflows.sites import available_sites, load_site
from workflows.spec import load_spec
from workflows.status import RunStatus

log = logging.getLogger(__name__)


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "submit",
        help="submit a workflow spec as a plain Slurm batch job (sbatch) and track it",
        description=(
            "Write an sbatch script that runs the validated spec inside one Slurm allocation "
            "(MPI steps with srun), submit it and wait for it, recording the Slurm job id in "
            "the run database. --dry-run only prints the script. Every parameter reaches the "
            "shell quoted; specs with shell metacharacters are rejected before anything runs."
        ),
    )
    parser.add_argument("spec", metavar="SPEC", help="workflow YAML")
    parser.add_argument("--site", default="slurm", metavar="SITE",
                        help=f"a Slurm site profile ({', '.join(available_sites())} or a YAML "
                             "file; default: slurm) for partition, account, walltime")  # fmt: skip
    parser.add_argument("--dry-run", action="store_true", help="print the script, submit nothing")
    parser.add_argument("--no-wait", action="store_true", help="submit and return at once")
    parser.add_argument("--timeout", type=float, default=None, metavar="S",
                        help="give up waiting after S seconds (the job keeps running)")  # fmt: skip
    add_location_arguments(parser)
    add_max_steps_argument(parser)
    parser.set_defaults(handler=submit_command)


def submit_command(args: argparse.Namespace) -> int:
    if args.timeout is not None and not args.timeout > 0:
        raise SpecError(f"--timeout {args.timeout}: give a positive number of seconds")
    spec = load_spec(args.spec, args.max_steps)
    site = load_site(args.site)
    if site.provider != "slurm":
        raise SpecError(
            f"--site {args.site}: submit needs a Slurm site profile (provider: slurm), "
            f"not provider {site.provider!r}; use --site slurm or a copy of it"
        )
    runs = runs_dir(args.runs_dir)
    db = db_path(args.db, runs)
    job = batch.batch_job(spec, site, runs, db)
    if args.dry_run:  # writes nothing
        log.info("dry run, nothing written: the script would be %s, running %s", job.script,
                 job.spec_copy)  # fmt: skip
        print(job.text, end="")
        return 0
    batch.check_slurm_tools()
    script = batch.write_job(job)
    job_id = batch.submit(script)
    (script.parent / "slurm_job_id").write_text(job_id + "\n")
    print(f"submitted run {spec.run_id} as Slurm job {job_id} ({script})")
    if args.no_wait:
        return 0
    state = batch.wait(job_id, timeout_s=args.timeout)
    print(f"Slurm job {job_id}: {state}")
    with ProvenanceDB(db) as pdb:
        try:
            run = pdb.get_run(spec.run_id)
        except Exception:
            log.error("the job left no run record; see %s", script.parent / f"slurm-{job_id}.out")
            return 1
        rows = [[s["step_id"], s["kind"], s["status"], s["tries"], s["slurm_job_id"] or "-",
                 (s["message"] or "")[:100]] for s in pdb.steps(run["run_id"])]  # fmt: skip
    print(markdown_table(["step", "kind", "status", "tries", "Slurm job", "note"], rows))
    print(f"\nrun {run['run_id']}: {run['status']} (report: {run['run_dir']}/report.md)")
    return 0 if state == "COMPLETED" and run["status"] == RunStatus.DONE else 1

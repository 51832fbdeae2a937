"""Plain Slurm batch jobs (no Parsl pilots): write an sbatch script, submit it, track it.

The script runs ``stratoflow run`` on the validated spec inside the allocation with the
``inline`` site, so MPI steps are launched with ``srun`` and provenance, memoisation and
atomic outputs work exactly as in a Parsl run. Every value in the script is either quoted
with :func:`shlex.quote` or restricted by validation to a safe character set.
"""

from __future__ import annotations

import logging
import re
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from workflows.errors import WorkflowError
from workflows.executors import VENV_BIN
from workflows.outputs import atomic_write_text
from workflows.sites import SiteProfile
from workflows.spec import DEFAULT_MAX_STEPS, WorkflowSpec, expand, instance_counts

log = logging.getLogger(__name__)
_SAFE = re.compile(r"^[A-Za-z0-9_.,:=+/@%-]+$")
TERMINAL = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY",
            "PREEMPTED", "BOOT_FAIL", "DEADLINE"}  # fmt: skip


def max_ranks(spec: WorkflowSpec) -> int:
    """The most MPI ranks any step of the spec needs (the job's ``--ntasks``)."""
    ranks = 1
    for inst in expand(spec, limit=sys.maxsize):  # its size was checked when it was loaded
        r = getattr(inst.step, "ranks", 1)
        ranks = max(ranks, int(r))
    return ranks


def sbatch_script(spec: WorkflowSpec, spec_copy: Path, site: SiteProfile, runs_dir: Path,
                  db: Path) -> str:  # fmt: skip
    """The text of the batch script for ``spec`` (saved as ``spec_copy``)."""
    run_dir = runs_dir.resolve() / spec.run_id
    lines = ["#!/bin/bash", f"#SBATCH --job-name={spec.run_id}"]
    if _SAFE.match(str(run_dir)):  # else `submit` passes --output on sbatch's command line
        lines.append(f"#SBATCH --output={run_dir}/slurm-%j.out")
    lines += [
        "#SBATCH --nodes=1",
        f"#SBATCH --ntasks={max_ranks(spec)}",
        f"#SBATCH --time={site.walltime}",
    ]
    if site.partition:
        lines.append(f"#SBATCH --partition={site.partition}")
    if site.account:
        lines.append(f"#SBATCH --account={site.account}")
    if site.overcommit:
        lines.append("#SBATCH --overcommit")
    for line in lines[1:]:
        if not re.match(r"^#SBATCH --[a-z-]+(=[A-Za-z0-9_.,:=+/@%-]+)?$", line):  # belt and braces
            raise WorkflowError(f"unsafe batch directive {line!r}: check the site profile and run dir")
    cmd = [sys.executable, "-m", "workflows.cli", "run", str(spec_copy), "--site", "inline",
           "--runs-dir", str(runs_dir.resolve()), "--db", str(db.resolve()), "--no-progress"]  # fmt: skip
    count = sum(instance_counts(spec).values())
    if count > DEFAULT_MAX_STEPS:  # submitted with a higher --max-steps: the job runs it too
        cmd += ["--max-steps", str(count)]
    lines += [
        "set -euo pipefail",
        f"cd {shlex.quote(str(Path.cwd()))}",
        f"export PATH={shlex.quote(VENV_BIN)}:\"$PATH\"",
        f"exec {shlex.join(cmd)}",
    ]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class BatchJob:
    """A batch job of a spec, not written yet: ``script`` runs ``spec_copy``."""

    script: Path
    text: str
    spec_copy: Path
    spec_yaml: str


def batch_job(spec: WorkflowSpec, site: SiteProfile, runs_dir: Path, db: Path) -> BatchJob:
    """The batch script and spec copy of ``spec`` under ``runs/<run-id>/`` (nothing written)."""
    run_dir = runs_dir.resolve() / spec.run_id
    spec_copy = run_dir / "spec.yaml"
    text = sbatch_script(spec, spec_copy, site, runs_dir, db)
    spec_yaml = yaml.safe_dump(spec.model_dump(mode="json"), sort_keys=False)
    return BatchJob(run_dir / "job.sbatch", text, spec_copy, spec_yaml)


def write_job(job: BatchJob) -> Path:
    """Save the validated spec and the batch script; WorkflowError if the run folder cannot be
    written (names it and the option that chooses another)."""
    try:
        atomic_write_text(job.spec_copy, job.spec_yaml)
        atomic_write_text(job.script, job.text)
    except OSError as exc:
        raise WorkflowError(
            f"cannot write the batch job in {job.script.parent}: {exc.strerror or exc}; "
            "choose a writable runs folder with --runs-dir or $STRATOFLOW_RUNS_DIR"
        ) from None
    return job.script


def check_slurm_tools() -> None:
    """WorkflowError unless ``sbatch`` and ``scontrol`` are on PATH."""
    for name in ("sbatch", "scontrol"):
        _slurm_tool(name)


def _slurm_tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise WorkflowError(f"`{name}` is not on PATH: install the Slurm client or run on a login node")
    return path


def submit(script: Path) -> str:
    """``sbatch`` the script (its log goes next to it); return the job id."""
    output = f"--output={script.parent}/slurm-%j.out"
    proc = subprocess.run([_slurm_tool("sbatch"), "--parsable", output, str(script)],
                          capture_output=True, text=True)  # fmt: skip
    if proc.returncode != 0:
        raise WorkflowError(f"sbatch rejected {script}: {proc.stderr.strip() or proc.stdout.strip()}")
    job_id = proc.stdout.strip().split(";")[0]
    if not job_id.isdigit():
        raise WorkflowError(f"sbatch printed no job id for {script}: {proc.stdout!r}")
    return job_id


def job_state(job_id: str) -> str:
    """The job's state from ``scontrol show job`` (``UNKNOWN`` once Slurm forgot it)."""
    proc = subprocess.run([_slurm_tool("scontrol"), "show", "job", "-o", job_id],
                          capture_output=True, text=True)  # fmt: skip
    match = re.search(r"JobState=(\S+)", proc.stdout)
    return match.group(1) if match else "UNKNOWN"


def wait(job_id: str, poll_s: float = 2.0, timeout_s: float | None = None) -> str:
    """Poll the job until it reaches a terminal state; return that state."""
    start = time.monotonic()
    last = ""
    while True:
        state = job_state(job_id)
        if state != last:
            log.info("Slurm job %s: %s", job_id, state)
            last = state
        if state in TERMINAL or state == "UNKNOWN":
            return state
        if timeout_s is not None and time.monotonic() - start > timeout_s:
            raise WorkflowError(f"Slurm job {job_id} still {state} after {timeout_s:.0f} s")
        time.sleep(poll_s)


"""The workflow engine: run a spec's steps in dependency order through an executor.

Per step instance: skip it if an identical step (same step hash) finished before and its
outputs still match their checksums (memoisation; ``force`` disables it); otherwise run it
in a fresh temporary folder, retry failures with exponential backoff, and publish the folder
atomically as ``runs/<run-id>/steps/<step>/out`` only when the command succeeded. Logs of
every try stay in ``steps/<step>/logs/``. Everything is recorded in the run database, so a
killed workflow resumes where it stopped when it is run again.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import json
import logging
import os
import shlex
import shutil
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from workflows.errors import WorkflowError
from workflows.executors import VENV_BIN, TaskFailed, make_executor
from workflows.kinds import KINDS, PlanContext, TaskPlan
from workflows.outputs import (
    atomic_write_text,
    checksum_tree,
    copy_tree_atomic,
    publish_dir,
    sha256_file,
    verify_tree,
)
from workflows.provenance import ProvenanceDB
from workflows.report import write_report
from workflows.sites import SiteProfile
from workflows.spec import StepInstance, WorkflowSpec, expand
from workflows.status import FINISHED, RunStatus, StepStatus

log = logging.getLogger(__name__)


@dataclass
class StepOutcome:
    id: str
    kind: str
    status: StepStatus
    tries: int = 0
    seconds: float = 0.0
    message: str = ""


@dataclass
class RunOutcome:
    run_id: str
    run_dir: Path
    status: RunStatus
    steps: list[StepOutcome]
    report: Path | None = None

    @property
    def ok(self) -> bool:
        return self.status is RunStatus.DONE


def step_hash(inst: StepInstance, dep_hashes: list[str]) -> str:
    """Identity of a step's result: kind (and adapter version), parameters, the content of
    its input files, the hashes of the steps it reads from, and the kind's
    :meth:`~workflows.kinds.base.Kind.hash_context` (e.g. FV3's applied tuned schedules)."""
    step = inst.step
    kind = KINDS[step.kind]  # type: ignore[attr-defined]
    params = step.model_dump(mode="json", exclude={"name", "description", "retries", "after"})
    files = {f: sha256_file(Path(getattr(step, f))) for f in step.file_fields()}
    payload = {
        "kind": kind.name, "adapter": kind.version(), "params": params, "files": files,
        "deps": sorted(dep_hashes),
    }  # fmt: skip
    context = kind.hash_context(step)
    if context:  # absent when empty, so a kind without context hashes as parameters + files
        payload["context"] = context
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def shell_command(plan: TaskPlan, workdir: Path) -> str:
    """The shell text of a task. Every argument is quoted; only the MPI prefix, which the
    executor sets, expands."""
    lines = [
        "set -eu",
        f"cd {shlex.quote(str(workdir))}",
        f"export PATH={shlex.quote(VENV_BIN)}:\"$PATH\"",
        'printf "host=%s\\nslurm_job_id=%s\\n" "$(hostname)" "${SLURM_JOB_ID:-}" > .taskinfo',
    ]
    lines += [f"export {k}={shlex.quote(v)}" for k, v in sorted(plan.env.items())]
    if plan.warm_argv:
        lines.append('echo "stratoflow: warming the stencil cache serially" >&2')
        lines.append(shlex.join(plan.warm_argv) + " >&2")  # its printout is not the result
    if plan.ranks > 1:
        lines.append('${PARSL_MPI_PREFIX:?"no MPI launcher set"} ' + shlex.join(plan.argv))
    else:
        lines.append(shlex.join(plan.argv))
    return "\n".join(lines) + "\n"


def _read_taskinfo(folder: Path) -> dict[str, str]:
    path = folder / ".taskinfo"
    if not path.is_file():
        return {}
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class WorkflowRunner:
    """Runs one spec on one site, recording into ``db``; ``__call__`` runs it."""

    def __init__(
        self,
        spec: WorkflowSpec,
        site: SiteProfile,
        runs_dir: Path,
        db: ProvenanceDB,
        *,
        force: bool = False,
        spec_path: str = "",
        progress: bool = True,
    ):
        self.spec = spec
        self.site = site
        self.db = db
        self.force = force
        self.spec_path = spec_path
        self.progress = progress
        self.run_id = spec.run_id
        self.run_dir = Path(runs_dir).resolve() / self.run_id
        self.instances = expand(spec)
        self.by_id = {i.id: i for i in self.instances}
        self.hashes: dict[str, str] = {}
        for inst in self.instances:
            self.hashes[inst.id] = step_hash(inst, [self.hashes[d] for d in inst.depends_on])
        self._lock = threading.Lock()

    # --- folders ---------------------------------------------------------------------------

    def step_dir(self, inst: StepInstance) -> Path:
        return self.run_dir / "steps" / inst.dirname

    def out_dir(self, inst: StepInstance) -> Path:
        return self.step_dir(inst) / "out"

    # --- the run ---------------------------------------------------------------------------

    def __call__(self) -> RunOutcome:
        self._claim()
        self.run_dir.mkdir(parents=True, exist_ok=True)
        atomic_write_text(self.run_dir / "spec.json", self.spec.canonical_json() + "\n")
        self.db.begin_run(
            self.run_id, self.spec.name, self.spec.hash, self.spec.canonical_json(),
            self.spec_path, self.site.name, str(self.run_dir),
        )  # fmt: skip
        log.info("run %s on site %s: %d steps in %s", self.run_id, self.site.name,
                 len(self.instances), self.run_dir)  # fmt: skip
        outcomes: dict[str, StepOutcome] = {}
        todo: list[StepInstance] = []
        for inst in self.instances:
            outcome = self._precheck(inst, outcomes)
            if outcome is None:
                todo.append(inst)
            else:
                outcomes[inst.id] = outcome
        status = RunStatus.FAILED
        try:
            if todo:
                self._execute(todo, outcomes)
            ordered = [outcomes[i.id] for i in self.instances]
            status = RunStatus.DONE if all(o.status.finished for o in ordered) else RunStatus.FAILED
        except BaseException:
            status = RunStatus.INTERRUPTED
            for inst in self.instances:
                row = self.db.get_step(self.run_id, inst.id)
                if row and row["status"] in (StepStatus.RUNNING, StepStatus.PENDING):
                    self.db.set_step(self.run_id, inst.id, status=StepStatus.INTERRUPTED,
                                     ended=time.time())  # fmt: skip
            raise
        finally:
            self.db.update_run(self.run_id, status=status, ended=time.time())
        report = write_report(self.db, self.run_id)
        return RunOutcome(self.run_id, self.run_dir, status, ordered, report)

    def _claim(self) -> None:
        """Refuse to run while another live process runs the same run id on this host."""
        try:
            row = self.db.get_run(self.run_id)
        except WorkflowError:
            return
        if (
            row["status"] == RunStatus.RUNNING and row["host"] == socket.gethostname()
            and row["pid"] != os.getpid() and _pid_alive(row["pid"])
            and row["run_id"] == self.run_id
        ):  # fmt: skip
            raise WorkflowError(
                f"run {self.run_id} is already running (pid {row['pid']}); wait for it or "
                "kill it, then run again to resume"
            )

    def _precheck(self, inst: StepInstance, outcomes: dict[str, StepOutcome]) -> StepOutcome | None:
        """Outcome of a step that needs no execution (memoised), else None (it is pending)."""
        kind = KINDS[inst.step.kind]  # type: ignore[attr-defined]
        h = self.hashes[inst.id]
        if not self.force:
            reused = self._memoised(inst, h)
            if reused is not None:
                return StepOutcome(inst.id, kind.name, reused[0], message=reused[1])
        self.db.set_step(
            self.run_id, inst.id, status=StepStatus.PENDING, message="", step_hash=h,
            kind=kind.name, out_dir=str(self.out_dir(inst)), log_dir=str(self.step_dir(inst) / "logs"),
        )  # fmt: skip
        return None

    def _memoised(self, inst: StepInstance, h: str) -> tuple[StepStatus, str] | None:
        own = self.db.get_step(self.run_id, inst.id)
        out = self.out_dir(inst)
        if own and own["status"] in FINISHED and own["step_hash"] == h:
            if verify_tree(out, self.db.outputs(self.run_id, inst.id)):
                log.info("step %s: finished with identical inputs; skipped", inst.id)
                return StepStatus(own["status"]), "memoised: finished with identical inputs (use --force to rerun)"
        for row in self.db.finished_steps_with_hash(h):
            if (row["run_id"], row["step_id"]) == (self.run_id, inst.id) or not row["out_dir"]:
                continue
            src = Path(row["out_dir"])
            files = self.db.outputs(row["run_id"], row["step_id"])
            if verify_tree(src, files):
                copy_tree_atomic(src, out)
                msg = f"memoised: outputs of identical step {row['step_id']} of run {row['run_id']}"
                self.db.set_outputs(self.run_id, inst.id, [(f["path"], f["sha256"], f["bytes"]) for f in files])
                now = time.time()
                self.db.set_step(
                    self.run_id, inst.id, status=StepStatus.CACHED, message=msg, step_hash=h,
                    kind=inst.step.kind, out_dir=str(out), started=now, ended=now,  # type: ignore[attr-defined]
                    log_dir=str(self.step_dir(inst) / "logs"),
                )  # fmt: skip
                log.info("step %s: %s", inst.id, msg)
                return StepStatus.CACHED, msg
        return None

    def _execute(self, todo: list[StepInstance], outcomes: dict[str, StepOutcome]) -> None:
        executor = make_executor(self.site, self.run_dir)
        pending = list(todo)
        running: dict[concurrent.futures.Future, StepInstance] = {}
        bar = tqdm(total=len(self.instances), initial=len(outcomes), desc=self.run_id,
                   unit="step", disable=not self.progress, leave=True)  # fmt: skip
        self._bar = bar
        self._active: set[str] = set()
        try:
            with concurrent.futures.ThreadPoolExecutor(self.site.max_workers) as drivers:
                while pending or running:
                    for inst in list(pending):
                        deps = [outcomes.get(d) for d in inst.depends_on]
                        if any(d is not None and not d.status.finished for d in deps):
                            bad = [d.id for d in deps if d is not None and not d.status.finished]
                            msg = f"blocked: needs {', '.join(bad)}, which did not finish"
                            self.db.set_step(self.run_id, inst.id, status=StepStatus.BLOCKED, message=msg)
                            outcomes[inst.id] = StepOutcome(inst.id, inst.step.kind, StepStatus.BLOCKED, message=msg)  # type: ignore[attr-defined]
                            pending.remove(inst)
                            bar.update(1)
                        elif all(d is not None for d in deps):
                            pending.remove(inst)
                            running[drivers.submit(self._run_step, inst, executor)] = inst
                    if not running:
                        continue
                    done, _ = concurrent.futures.wait(running, return_when="FIRST_COMPLETED")
                    for fut in done:
                        inst = running.pop(fut)
                        outcomes[inst.id] = fut.result()
                        o = outcomes[inst.id]
                        bar.update(1)
                        log.info("step %s: %s after %d tr%s (%.1f s)%s", inst.id, o.status,
                                 o.tries, "y" if o.tries == 1 else "ies", o.seconds,
                                 f": {o.message}" if o.message else "")  # fmt: skip
        finally:
            bar.close()
            executor.close()

    def _run_step(self, inst: StepInstance, executor) -> StepOutcome:
        kind = KINDS[inst.step.kind]  # type: ignore[attr-defined]
        retries = inst.step.retries if inst.step.retries is not None else self.spec.retries
        step_dir = self.step_dir(inst)
        logs = step_dir / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        for stale in step_dir.glob(".try-*"):  # left by a killed run
            shutil.rmtree(stale, ignore_errors=True)
        inputs: dict[str, list[Path]] = {}
        for dep in inst.depends_on:
            d = self.by_id[dep]
            inputs.setdefault(d.spec_name, []).append(self.out_dir(d))
        start = time.time()
        self._show_active(inst.id, True)
        try:
            return self._tries(inst, executor, kind, retries, step_dir, logs, inputs, start)
        finally:
            self._show_active(inst.id, False)

    def _show_active(self, step_id: str, active: bool) -> None:
        with self._lock:
            (self._active.add if active else self._active.discard)(step_id)
            self._bar.set_postfix_str(", ".join(sorted(self._active)))

    def _tries(self, inst: StepInstance, executor, kind, retries: int, step_dir: Path, logs: Path,
               inputs: dict[str, list[Path]], start: float) -> StepOutcome:  # fmt: skip
        task_ids: list[int] = []
        self.db.set_step(self.run_id, inst.id, status=StepStatus.RUNNING, started=start, ended=None,
                         exit_code=None, message="")  # fmt: skip
        message, exit_code = "", None
        for k in range(retries + 1):
            n = len(list(logs.glob("try-*.out"))) + 1
            workdir = step_dir / f".try-{n}"
            workdir.mkdir(parents=True)
            stdout, stderr = logs / f"try-{n}.out", logs / f"try-{n}.err"
            t0 = time.time()
            try:
                plan = kind.plan(inst.step, PlanContext(workdir, inputs))
                handle = executor.submit(shell_command(plan, workdir), plan.ranks, stdout, stderr)
            except Exception as exc:  # a step that cannot even start fails alone
                message = str(exc) if isinstance(exc, WorkflowError) else f"{type(exc).__name__}: {exc}"
                log.error("step %s: cannot start: %s", inst.id, message)
                self.db.set_step(self.run_id, inst.id, status=StepStatus.FAILED, message=message,
                                 ended=time.time(), tries=k + 1)  # fmt: skip
                return StepOutcome(inst.id, kind.name, StepStatus.FAILED, k + 1, time.time() - start, message)
            if handle.parsl_task_id is not None:
                task_ids.append(handle.parsl_task_id)
            self.db.set_step(self.run_id, inst.id, tries=k + 1, parsl_task_ids=task_ids)
            error = None
            try:
                handle.wait()
                exit_code = 0
            except TaskFailed as exc:
                exit_code, error = exc.exit_code, str(exc)
            info = _read_taskinfo(workdir)
            self.db.add_attempt(
                self.run_id, inst.id, **{"try": n}, parsl_task_id=handle.parsl_task_id,
                parsl_try_id=handle.parsl_try_id,
                host=info.get("host"), slurm_job_id=info.get("slurm_job_id") or None,
                started=t0, ended=time.time(), exit_code=exit_code, error=error,
                stdout=str(stdout), stderr=str(stderr),
            )  # fmt: skip
            if error is None:
                if stdout.is_file() and stdout.stat().st_size:  # the step's printed result
                    shutil.copyfile(stdout, workdir / "stdout.log")
                files = checksum_tree(workdir)
                with self._lock:
                    publish_dir(workdir, self.out_dir(inst))
                self.db.set_outputs(self.run_id, inst.id, files)
                end = time.time()
                self.db.set_step(
                    self.run_id, inst.id, status=StepStatus.DONE, ended=end, exit_code=0,
                    host=info.get("host"), slurm_job_id=info.get("slurm_job_id") or None,
                    message="",
                )  # fmt: skip
                return StepOutcome(inst.id, kind.name, StepStatus.DONE, k + 1, end - start)
            tail = _tail(stderr)
            message = f"try {n} failed ({error}); log {stderr}" + (f": {tail}" if tail else "")
            log.warning("step %s: %s", inst.id, message)
            if k < retries:
                delay = self.spec.backoff_s * 2**k
                log.info("step %s: retrying in %.1f s", inst.id, delay)
                time.sleep(delay)
        end = time.time()
        self.db.set_step(self.run_id, inst.id, status=StepStatus.FAILED, ended=end, exit_code=exit_code,
                         message=message)  # fmt: skip
        return StepOutcome(inst.id, kind.name, StepStatus.FAILED, retries + 1, end - start, message)


def _tail(path: Path, lines: int = 3) -> str:
    try:
        text = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return " | ".join(text[-lines:])[-400:]

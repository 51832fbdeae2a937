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
import contextlib
import logging
import os
import shutil
import signal
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from tqdm import tqdm

from stencils.config import default_cache_dir
from workflows.errors import WorkflowError
from workflows.executors import TaskFailed, make_executor, read_taskinfo, signal_task_group
from workflows.kinds import KINDS, Kind, PlanContext
from workflows.kinds.base import STEP_ERROR_ENV, STEP_ERROR_FILE, read_step_error
from workflows.kinds.code import StepKey, rerun_reason
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
from workflows.slurm_jobs import JOBS_FILE, cancel_jobs
from workflows.spec import StepInstance, WorkflowSpec, expand
from workflows.status import FINISHED, RunStatus, StepStatus
from workflows.task_main import GRACE_S

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


def step_key(inst: StepInstance, dep_hashes: list[str]) -> StepKey:
    """Identity of a step's result: kind (and adapter version), parameters, the content of
    its input files, the kind's :meth:`~workflows.kinds.base.Kind.hash_context` (e.g. FV3's
    applied tuned schedules), the hashes of the steps it reads from, and the code that runs it
    (:meth:`~workflows.kinds.base.Kind.code_key`: stratoflow's sources, library versions)."""
    step = inst.step
    kind = KINDS[step.kind]  # type: ignore[attr-defined]
    params = step.model_dump(mode="json", exclude={"name", "description", "retries", "after"})
    files = {f: sha256_file(Path(getattr(step, f))) for f in step.file_fields()}
    inputs = {"kind": kind.name, "adapter": kind.version(), "params": params, "files": files}
    context = kind.hash_context(step)
    if context:  # absent when empty, so a kind without context hashes as parameters + files
        inputs["context"] = context
    return StepKey(inputs, tuple(dep_hashes), kind.code_key())


def step_hash(inst: StepInstance, dep_hashes: list[str]) -> str:
    """The digest of :func:`step_key`: equal hashes mean the same result."""
    return step_key(inst, dep_hashes).digest


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
        max_steps: int | None = None,
    ):
        self.spec = spec
        self.site = site
        self.db = db
        self.force = force
        self.spec_path = spec_path
        self.progress = progress
        self.run_id = spec.run_id
        self.run_dir = Path(runs_dir).resolve() / self.run_id
        self.instances = expand(spec, max_steps)
        self.by_id = {i.id: i for i in self.instances}
        self.keys: dict[str, StepKey] = {}
        self.hashes: dict[str, str] = {}
        for inst in self.instances:
            self.keys[inst.id] = step_key(inst, [self.hashes[d] for d in inst.depends_on])
            self.hashes[inst.id] = self.keys[inst.id].digest
        self._lock = threading.Lock()
        self._stop = threading.Event()  # set by the first SIGINT/SIGTERM: stop the run

    # --- folders ---------------------------------------------------------------------------

    def step_dir(self, inst: StepInstance) -> Path:
        return self.run_dir / "steps" / inst.dirname

    def out_dir(self, inst: StepInstance) -> Path:
        return self.step_dir(inst) / "out"

    # --- the run ---------------------------------------------------------------------------

    def __call__(self) -> RunOutcome:
        """Run the spec. The first SIGINT or SIGTERM (in the main thread) stops the run: steps
        not started are cancelled, running ones stopped, and the outcome is ``interrupted``;
        a second one raises KeyboardInterrupt at once."""
        earlier = self._claim()
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self._stop_leftovers(earlier)
        atomic_write_text(self.run_dir / "spec.json", self.spec.canonical_json() + "\n")
        self.db.begin_run(
            self.run_id, self.spec.name, self.spec.hash, self.spec.canonical_json(),
            self.spec_path, self.site.name, str(self.run_dir),
        )  # fmt: skip
        log.info("run %s on site %s: %d steps in %s", self.run_id, self.site.name,
                 len(self.instances), self.run_dir)  # fmt: skip
        status = RunStatus.FAILED
        with self._stop_on_signals():
            try:
                outcomes: dict[str, StepOutcome] = {}
                todo: list[StepInstance] = []
                for inst in self.instances:
                    if self._stop.is_set():  # a signal while steps are checked and recorded
                        raise KeyboardInterrupt
                    outcome = self._precheck(inst, outcomes)
                    if outcome is None:
                        todo.append(inst)
                    else:
                        outcomes[inst.id] = outcome
                if todo:
                    self._execute(todo, outcomes)
                ordered = [outcomes[i.id] for i in self.instances]
                if all(o.status.finished for o in ordered):
                    status = RunStatus.DONE
                elif self._stop.is_set():
                    status = RunStatus.INTERRUPTED
            except BaseException:
                status = RunStatus.INTERRUPTED
                raise
            finally:
                if status is RunStatus.INTERRUPTED:
                    self._mark_interrupted()
                self.db.update_run(self.run_id, status=status, ended=time.time())
        report = write_report(self.db, self.run_id)
        return RunOutcome(self.run_id, self.run_dir, status, ordered, report)

    @contextlib.contextmanager
    def _stop_on_signals(self) -> Iterator[None]:
        """SIGINT and SIGTERM set :attr:`_stop` (the second one raises KeyboardInterrupt)."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return

        def handler(signum: int, frame: object) -> None:
            if self._stop.is_set():
                raise KeyboardInterrupt
            self._stop.set()

        previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for sig, old in previous.items():
                signal.signal(sig, old)

    def _mark_interrupted(self) -> None:
        for inst in self.instances:
            row = self.db.get_step(self.run_id, inst.id)
            if row and row["status"] in (StepStatus.RUNNING, StepStatus.PENDING):
                self.db.set_step(self.run_id, inst.id, status=StepStatus.INTERRUPTED,
                                 ended=time.time())  # fmt: skip

    def _stop_leftovers(self, row: dict | None) -> None:
        """Kill what tasks of an earlier, killed run of this run id (database ``row``) left
        running on this host (the process groups their ``.taskinfo`` files name), and cancel
        the Slurm pilot jobs it still lists, unless it is recorded as running elsewhere."""
        elsewhere = row is not None and row["status"] == RunStatus.RUNNING and (
            row["host"] != socket.gethostname())  # fmt: skip
        jobs = [] if elsewhere else cancel_jobs(self.run_dir / "parsl" / JOBS_FILE)
        if jobs:
            log.warning("cancelled Slurm jobs %s, left by an earlier run that was killed",
                        " ".join(jobs))  # fmt: skip
        for path in sorted(self.run_dir.glob("steps/*/.try-*/.taskinfo")):
            info = read_taskinfo(path.parent)
            if signal_task_group(info, signal.SIGKILL, require_leader=True):
                log.warning("killed process group %s, left running in %s by an earlier run "
                            "that was killed", info.get("pgid"), path.parent)  # fmt: skip

    def _claim(self) -> dict | None:
        """Refuse to run while another live process runs the same run id on this host; the
        run's earlier database row (None for a new run)."""
        try:
            row = self.db.get_run(self.run_id)
        except WorkflowError:
            return None
        if (
            row["status"] == RunStatus.RUNNING and row["host"] == socket.gethostname()
            and row["pid"] != os.getpid() and _pid_alive(row["pid"])
            and row["run_id"] == self.run_id
        ):  # fmt: skip
            raise WorkflowError(
                f"run {self.run_id} is already running (pid {row['pid']}); wait for it or "
                "kill it, then run again to resume"
            )
        return row if row["run_id"] == self.run_id else None  # not a run with this prefix

    def _precheck(self, inst: StepInstance, outcomes: dict[str, StepOutcome]) -> StepOutcome | None:
        """Outcome of a step that needs no execution (memoised), else None (it is pending);
        records in its row why it runs or was reused."""
        kind = KINDS[inst.step.kind]  # type: ignore[attr-defined]
        h, key = self.hashes[inst.id], self.keys[inst.id]
        unusable: list[str] = []  # results with the same key whose outputs fail their checksums
        if not self.force:
            reused = self._memoised(inst, h, unusable)
            if reused is not None:
                return StepOutcome(inst.id, kind.name, reused[0], message=reused[1])
        if self.force:
            reason = "ran: --force"
        elif unusable:
            reason = f"ran: the outputs of {unusable[0]} (same key) failed their checksums"
        else:
            earlier = self.db.earlier_result(self.run_id, inst.id, key.inputs_hash,
                                             self.spec.name)  # fmt: skip
            reason = "ran: " + rerun_reason(key, earlier)
            own = self.db.get_step(self.run_id, inst.id)
            if earlier is None and own and own["status"] not in FINISHED and own["step_hash"] == h:
                reason = f"ran: its earlier run in this run ended {own['status']}"
        log.debug("step %s: %s", inst.id, reason)
        self.db.set_step(
            self.run_id, inst.id, status=StepStatus.PENDING, message="", step_hash=h,
            kind=kind.name, out_dir=str(self.out_dir(inst)), log_dir=str(self.step_dir(inst) / "logs"),
            step_key=key.to_json(), inputs_hash=key.inputs_hash, reason=reason,
        )  # fmt: skip
        return None

    def _memoised(self, inst: StepInstance, h: str, unusable: list[str]) -> tuple[StepStatus, str] | None:
        """Reuse this run's finished result of the step, or copy an identical step's outputs
        (same step hash, outputs matching their checksums); None if there is none. Results
        with the step's hash whose outputs fail their checksums are named in ``unusable``."""
        own = self.db.get_step(self.run_id, inst.id)
        out = self.out_dir(inst)
        key = self.keys[inst.id]
        if own and own["status"] in FINISHED and own["step_hash"] == h:
            if verify_tree(out, self.db.outputs(self.run_id, inst.id)):
                log.info("step %s: finished with identical inputs; skipped", inst.id)
                self.db.set_step(self.run_id, inst.id, step_key=key.to_json(),
                                 inputs_hash=key.inputs_hash,
                                 reason="reused: finished earlier in this run with the same key")  # fmt: skip
                return StepStatus(own["status"]), "memoised: finished with identical inputs (use --force to rerun)"
            unusable.append(f"run {self.run_id} step {inst.id}")
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
                    log_dir=str(self.step_dir(inst) / "logs"), step_key=key.to_json(),
                    inputs_hash=key.inputs_hash,
                    reason=f"reused: from run {row['run_id']} step {row['step_id']} with the same key",
                )  # fmt: skip
                log.info("step %s: %s", inst.id, msg)
                return StepStatus.CACHED, msg
            unusable.append(f"run {row['run_id']} step {row['step_id']}")
        return None

    def _execute(self, todo: list[StepInstance], outcomes: dict[str, StepOutcome]) -> None:
        """Run the pending steps in dependency order, ``max_workers`` at a time, until they
        end or :attr:`_stop` is set (then :meth:`_interrupt`)."""
        executor = make_executor(self.site, self.run_dir)
        pending = list(todo)
        running: dict[concurrent.futures.Future, StepInstance] = {}
        bar = tqdm(total=len(self.instances), initial=len(outcomes), desc=self.run_id,
                   unit="step", disable=not self.progress, leave=True)  # fmt: skip
        self._bar = bar
        self._active: set[str] = set()
        drivers = concurrent.futures.ThreadPoolExecutor(self.site.max_workers)
        try:
            while (pending or running) and not self._stop.is_set():
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
                done, _ = concurrent.futures.wait(running, timeout=0.5, return_when="FIRST_COMPLETED")
                for fut in done:
                    self._collect(running.pop(fut), fut.result(), outcomes)
            if self._stop.is_set():
                self._interrupt(executor, pending, running, outcomes)
        finally:
            drivers.shutdown(wait=not self._stop.is_set(), cancel_futures=True)
            bar.close()
            executor.close()

    def _collect(self, inst: StepInstance, outcome: StepOutcome, outcomes: dict[str, StepOutcome]) -> None:
        outcomes[inst.id] = o = outcome
        self._bar.update(1)
        log.info("step %s: %s after %d tr%s (%.1f s)%s", inst.id, o.status,
                 o.tries, "y" if o.tries == 1 else "ies", o.seconds,
                 f": {o.message}" if o.message else "")  # fmt: skip

    def _interrupt(self, executor, pending: list[StepInstance],
                   running: dict[concurrent.futures.Future, StepInstance],
                   outcomes: dict[str, StepOutcome]) -> None:  # fmt: skip
        """Cancel the steps that have not started and stop the running ones: their process
        groups get SIGTERM, then SIGKILL after a grace period; all end ``interrupted``."""
        log.warning("interrupt: cancelling the steps that have not started and stopping the "
                    "running ones (interrupt again to exit at once)")  # fmt: skip
        cancelled = list(pending)
        waiting = {}
        for fut, inst in running.items():
            if fut.cancel():
                cancelled.append(inst)
            else:
                waiting[fut] = inst
        for inst in cancelled:
            msg = "cancelled: the run was interrupted before it started; rerun to resume"
            self.db.set_step(self.run_id, inst.id, status=StepStatus.INTERRUPTED, message=msg)
            outcomes[inst.id] = StepOutcome(inst.id, inst.step.kind, StepStatus.INTERRUPTED, message=msg)  # type: ignore[attr-defined]
        queued, stopped = executor.interrupt()
        executor.stop_waiting(GRACE_S + 2.0)
        done, not_done = concurrent.futures.wait(waiting, timeout=5.0)
        for fut in done:
            self._collect(waiting[fut], fut.result(), outcomes)
        for fut in not_done:  # its driver is stuck; the step is recorded as interrupted
            inst = waiting[fut]
            outcomes[inst.id] = StepOutcome(inst.id, inst.step.kind, StepStatus.INTERRUPTED,  # type: ignore[attr-defined]
                                            message="interrupted; rerun to resume")  # fmt: skip
        log.warning("interrupted: %d step%s cancelled, %d stopped; rerun to resume",
                    len(cancelled) + queued, "" if len(cancelled) + queued == 1 else "s",
                    stopped)  # fmt: skip

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
            outcome = self._tries(inst, executor, kind, retries, step_dir, logs, inputs, start)
        finally:
            self._show_active(inst.id, False)
        if self._stop.is_set() and not outcome.status.finished:
            msg = "interrupted while running; rerun to resume"
            self.db.set_step(self.run_id, inst.id, status=StepStatus.INTERRUPTED, message=msg,
                             ended=time.time())  # fmt: skip
            outcome = StepOutcome(inst.id, kind.name, StepStatus.INTERRUPTED, outcome.tries,
                                  outcome.seconds, msg)  # fmt: skip
        return outcome

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
        tries = 0
        for k in range(retries + 1):
            tries = k + 1
            n, workdir = _claim_try(step_dir, logs, self.db.max_try(self.run_id, inst.id))
            stdout, stderr = logs / f"try-{n}.out", logs / f"try-{n}.err"
            t0 = time.time()
            try:
                plan = kind.plan(inst.step, PlanContext(workdir, inputs))
                # every step builds into the one stencil cache (never into its outputs)
                shared = {STEP_ERROR_ENV: str(workdir / STEP_ERROR_FILE),
                          "STRATOFLOW_CACHE_DIR": str(default_cache_dir())}  # fmt: skip
                plan = replace(plan, env={**plan.env, **shared})
                handle = executor.submit(plan, workdir, stdout, stderr)
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
            info = read_taskinfo(workdir)
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
            permanent = _permanent_failure(kind, exit_code, workdir)
            if permanent:
                message = f"try {n} failed, not retried: {permanent}; log {stderr}"
                log.warning("step %s: not retried: %s", inst.id, permanent)
                break
            if k < retries:
                delay = self.spec.backoff_s * 2**k
                log.info("step %s: retrying in %.1f s", inst.id, delay)
                if self._stop.wait(delay):  # interrupted: no further try
                    break
        end = time.time()
        self.db.set_step(self.run_id, inst.id, status=StepStatus.FAILED, ended=end, exit_code=exit_code,
                         message=message)  # fmt: skip
        return StepOutcome(inst.id, kind.name, StepStatus.FAILED, tries, end - start, message)


def _claim_try(step_dir: Path, logs: Path, recorded: int) -> tuple[int, Path]:
    """The next try number of a step and its work folder ``.try-N``, created exclusively:
    one above every try in the run database (``recorded``), the logs and the work folders,
    so a try that left no log (a launch failure) never has its number reused."""
    used = [recorded]
    for path in [*logs.glob("try-*"), *step_dir.glob(".try-*")]:
        number = path.name.lstrip(".").removeprefix("try-").split(".")[0]
        if number.isdigit():
            used.append(int(number))
    n = max(used) + 1
    while True:
        workdir = step_dir / f".try-{n}"
        try:
            workdir.mkdir()
            return n, workdir
        except FileExistsError:  # claimed meanwhile
            n += 1


def _permanent_failure(kind: Kind, exit_code: int | None, workdir: Path) -> str:
    """Why a failed try would fail the same way again (its step recorded a usage or
    configuration error, or exited with one of the kind's permanent statuses); empty if a
    retry may help."""
    record = read_step_error(workdir)
    if record is not None and record.get("permanent"):
        return f"{record.get('error', 'error')}: {record.get('message', '')}"[:400]
    if exit_code is not None and exit_code in kind.permanent_exit_codes:
        return f"exit status {exit_code} is a usage or configuration error of {kind.name}"
    return ""


def _tail(path: Path, lines: int = 3) -> str:
    try:
        text = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return " | ".join(text[-lines:])[-400:]

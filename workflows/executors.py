"""Task executors: run one step's task through Parsl, or inline, never through a shell.

A task is a JSON file (argument vectors, environment, working folder) that
:mod:`workflows.task_main` runs in its own process group, so the executor can stop it and
everything it started; no path or argument passes through a shell. MPI steps start their
program behind the MPI launcher: Parsl's MPIExecutor sets ``$PARSL_MPI_PREFIX`` per task from
the task's resource specification (``mpiexec -n N -ppn N -hosts ...`` or
``srun --ntasks N ...``); the other executors write the launcher into the task file.

Parsl writes its run folder's path unquoted into shell command lines (the LocalProvider's
launch line, the worker pool's ``--logdir``, the Slurm submit line), so it gets a folder whose
path is shell-safe: ``<run>/parsl`` when that path is, else a fresh folder of safe name that
links to ``<run>/parsl`` (removed again when the run ends). Parsl's interchange dies with the
``stratoflow`` process (parent-death signal), a local worker pool kills itself as soon as
that process is gone (a watchdog, :mod:`workflows.task_main` ``guard``), and a Slurm site's
pilot jobs are cancelled by a reaper process when it is gone (:mod:`workflows.slurm_jobs`).
"""

from __future__ import annotations

import concurrent.futures
import json
import logging
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workflows.errors import WorkflowError
from workflows.kinds.base import TaskPlan
from workflows.sites import SiteProfile
from workflows.slurm_jobs import JOBS_FILE, recording_slurm_provider
from workflows.task_main import is_same_process, launch, process_start_time

log = logging.getLogger(__name__)
VENV_BIN = str(Path(sys.executable).parent)
PYTHON = sys.executable
#: characters a path may hold to be written unquoted into a shell command line
SHELL_SAFE = re.compile(r"^[A-Za-z0-9_.,:=+/@%-]+$")


def _this_process() -> str:
    """``PID:START`` of this process, as ``task_main guard --watch`` and ``reap`` take it."""
    return f"{os.getpid()}:{process_start_time(os.getpid()) or ''}"


class TaskFailed(Exception):
    """A task's command exited non-zero (or its executor lost it)."""

    def __init__(self, exit_code: int | None, message: str):
        super().__init__(message)
        self.exit_code = exit_code


def read_taskinfo(folder: Path) -> dict[str, str]:
    """The ``.taskinfo`` a task writes into its folder when it starts (empty if none)."""
    path = folder / ".taskinfo"
    try:
        text = path.read_text()
    except OSError:
        return {}
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def signal_task_group(info: dict[str, str], sig: int, *, require_leader: bool = False) -> bool:
    """Send ``sig`` to the process group of a started task (``.taskinfo`` contents) if it runs
    on this host; whether it was sent. With ``require_leader``, only while the group's leader
    is the process that wrote the file (same pid and start time)."""
    try:
        pid, pgid = int(info["pid"]), int(info["pgid"])
    except (KeyError, ValueError):
        return False
    if info.get("host") != socket.gethostname():
        return False  # a remote task: Parsl's shutdown cancels its pilot job
    if not is_same_process(pid, info.get("start") or None):
        if require_leader:
            return False
        try:  # the leader is gone; members of its group may live on
            os.killpg(pgid, 0)
        except OSError:
            return False
    try:
        os.killpg(pgid, sig)
    except OSError:
        return False
    return True


def task_group_alive(info: dict[str, str]) -> bool:
    try:
        os.killpg(int(info["pgid"]), 0)
    except (KeyError, ValueError, OSError):
        return False
    return info.get("host") == socket.gethostname()


@dataclass
class TaskHandle:
    """A submitted task: its future (the exit status), folder and Parsl ids."""

    future: concurrent.futures.Future
    workdir: Path
    task_file: Path
    parsl_task_id: int | None = None
    parsl_try_id: int | None = None
    abandoned: threading.Event = field(default_factory=threading.Event)

    @property
    def cancel_file(self) -> Path:
        return self.task_file.with_suffix(".cancel")

    def wait(self) -> None:
        """Block until the task ends; raise :class:`TaskFailed` if it failed, was cancelled or
        was abandoned by an interrupted run."""
        try:
            while True:
                try:
                    code = self.future.result(timeout=0.2)
                    break
                except concurrent.futures.TimeoutError:
                    if self.abandoned.is_set():
                        raise TaskFailed(None, "interrupted: the run stopped waiting for it") from None
        except TaskFailed:
            raise
        except concurrent.futures.CancelledError:
            raise TaskFailed(None, "cancelled before it started") from None
        except Exception as exc:
            code = getattr(exc, "exitcode", None)
            raise TaskFailed(code, f"{type(exc).__name__}: {exc}") from exc
        finally:
            record = getattr(self.future, "task_record", None)
            if record is not None:
                self.parsl_try_id = record.get("try_id")
        if code != 0:
            raise TaskFailed(code, f"command exited with status {code}")


def mpi_prefix(site: SiteProfile, launcher: str, ranks: int) -> list[str]:
    """The MPI launcher's argument vector for ``ranks`` ranks."""
    if launcher == "srun":
        return ["srun", f"--ntasks={ranks}", *site.srun_options().split()]
    return [os.path.join(VENV_BIN, "mpiexec"), "-n", str(ranks)]


class _TaskExecutor:
    """What every executor shares: task files, and stopping tasks on an interrupt."""

    def __init__(self, site: SiteProfile, run_dir: Path):
        self.site = site
        self.run_dir = run_dir
        self._handles: list[TaskHandle] = []
        self._lock = threading.Lock()
        self._interrupted = False

    def _mpi_prefix(self, ranks: int) -> list[str] | None:
        """The launcher written into the task file (None: the executor sets it)."""
        return mpi_prefix(self.site, self.site.launcher(False), ranks)

    def submit(self, plan: TaskPlan, workdir: Path, stdout: Path, stderr: Path) -> TaskHandle:
        """Start ``plan`` in ``workdir``; its task file goes next to ``stdout``."""
        if self._interrupted:
            raise WorkflowError("the run was interrupted; no further task starts")
        task_file = stdout.with_name(stdout.stem + ".task.json")
        task = {
            "cwd": str(workdir), "env": dict(plan.env), "argv": list(plan.argv),
            "warm_argv": list(plan.warm_argv) if plan.warm_argv else None,
            "mpi": plan.ranks > 1, "mpi_prefix": self._mpi_prefix(plan.ranks) if plan.ranks > 1 else None,
            "cancel_file": str(task_file.with_suffix(".cancel")),
        }  # fmt: skip
        task_file.write_text(json.dumps(task, indent=2) + "\n")
        handle = self._submit(task_file, plan.ranks, stdout, stderr, workdir)
        with self._lock:
            self._handles = [h for h in self._handles if not h.future.done()] + [handle]
        return handle

    def _submit(self, task_file: Path, ranks: int, stdout: Path, stderr: Path, workdir: Path) -> TaskHandle:
        raise NotImplementedError

    def interrupt(self) -> tuple[int, int]:
        """Cancel the tasks that have not started and send SIGTERM to the process groups of
        the running ones; ``(cancelled, stopped)``. No task starts afterwards."""
        self._interrupted = True
        cancelled = stopped = 0
        with self._lock:
            live = [h for h in self._handles if not h.future.done()]
        for handle in live:
            handle.cancel_file.touch()  # before .taskinfo is read: a task starting now sees it
            try:
                if handle.future.cancel():
                    cancelled += 1
                    continue
            except NotImplementedError:  # Parsl's AppFuture
                pass
            info = read_taskinfo(handle.workdir)
            if info and signal_task_group(info, signal.SIGTERM):
                stopped += 1
            elif info and info.get("host") != socket.gethostname():
                stopped += 1  # a remote task ends with its pilot job
            else:
                cancelled += 1
        return cancelled, stopped

    def stop_waiting(self, timeout: float) -> None:
        """After :meth:`interrupt`: give the tasks ``timeout`` seconds to end, then SIGKILL
        what is left of their process groups and let their :meth:`TaskHandle.wait` return."""
        deadline = time.monotonic() + timeout
        with self._lock:
            live = [h for h in self._handles if not h.future.done()]
        while live and time.monotonic() < deadline:
            time.sleep(0.1)
            live = [h for h in live if not h.future.done()]
        self._kill_groups()
        for handle in live:
            handle.abandoned.set()

    def _kill_groups(self) -> None:
        with self._lock:
            handles = list(self._handles)
        for handle in handles:
            info = read_taskinfo(handle.workdir)
            if info and task_group_alive(info):
                signal_task_group(info, signal.SIGKILL)

    def close(self) -> None:
        if self._interrupted:
            self._kill_groups()


class InlineExecutor(_TaskExecutor):
    """Plain subprocesses (no Parsl), ``max_workers`` at a time."""

    def __init__(self, site: SiteProfile, run_dir: Path):
        super().__init__(site, run_dir)
        self.launcher = site.launcher(in_slurm_job="SLURM_JOB_ID" in os.environ)
        self._pool = concurrent.futures.ThreadPoolExecutor(site.max_workers)

    def _mpi_prefix(self, ranks: int) -> list[str] | None:
        return mpi_prefix(self.site, self.launcher, ranks)

    def _submit(self, task_file: Path, ranks: int, stdout: Path, stderr: Path, workdir: Path) -> TaskHandle:
        future = self._pool.submit(launch, str(task_file), str(stdout), str(stderr))
        return TaskHandle(future, workdir, task_file)

    def close(self) -> None:
        super().close()
        self._pool.shutdown(wait=not self._interrupted, cancel_futures=True)


def _brace_escaped(text: str, rounds: int) -> str:
    """``text`` that survives ``rounds`` calls of :meth:`str.format` unchanged."""
    n = 2**rounds
    return text.replace("{", "{" * n).replace("}", "}" * n)


def _shell_safe_parsl_dir(real: Path, shared: bool) -> tuple[Path, Path | None]:
    """A shell-safe path for Parsl's run folder ``real``: itself, else a link of safe name in
    a fresh folder (in the temporary folder, or under ``~/.cache`` when ``shared``, i.e. when
    compute nodes must see it); ``(path, folder to remove when done)``."""
    if SHELL_SAFE.match(str(real)):
        return real, None
    if shared:
        base = Path.home() / ".cache" / "stratoflow" / "parsl-links"
    else:
        base = Path(tempfile.gettempdir())
        if not SHELL_SAFE.match(str(base)):
            base = Path("/tmp")
    if not SHELL_SAFE.match(str(base)):
        raise WorkflowError(
            f"Parsl's run folder {str(real)!r} contains characters that Parsl would pass "
            f"unquoted to a shell, and no shell-safe folder for a link to it exists ({base}); "
            "use a --runs-dir whose path has only letters, digits and _ . , : = + - / @ %"
        )
    stale = real / "LINK"  # left by a run that was killed
    if stale.is_file():
        old = Path(stale.read_text().strip()).parent
        if old.name.startswith("stratoflow-parsl-") and old.parent == base:
            shutil.rmtree(old, ignore_errors=True)
    base.mkdir(parents=True, exist_ok=True)
    holder = Path(tempfile.mkdtemp(prefix="stratoflow-parsl-", dir=base))
    link = holder / "parsl"
    link.symlink_to(real, target_is_directory=True)
    (real / "LINK").write_text(f"{link}\n")  # where Parsl's command lines point
    log.info("Parsl's run folder %s is reached through %s (its path is shell-safe)", real, link)
    return link, holder


class ParslExecutor(_TaskExecutor):
    """Steps as Parsl python apps (each runs its task file) on the site's executor."""

    def __init__(self, site: SiteProfile, run_dir: Path):
        import parsl
        from parsl import python_app

        super().__init__(site, run_dir)
        self.parsl_dir = run_dir / "parsl"
        self.parsl_dir.mkdir(parents=True, exist_ok=True)
        self._link_holder: Path | None = None
        parsl_path, self._link_holder = _shell_safe_parsl_dir(self.parsl_dir, site.provider == "slurm")
        # Parsl starts helper scripts (interchange.py, process_worker_pool.py) from PATH
        os.environ["PATH"] = VENV_BIN + os.pathsep + os.environ.get("PATH", "")
        self._app = python_app(launch, executors="all")
        # Parsl logs (DEBUG) go to its own parsl.log under the run folder, not the console
        logging.getLogger("parsl").propagate = False
        self._reaper: subprocess.Popen | None = None
        if site.provider == "slurm":
            # cancels the pilot jobs if this process dies without Parsl's clean-up
            with open(self.parsl_dir / "reaper.log", "ab") as reaper_log:
                self._reaper = subprocess.Popen(
                    [PYTHON, "-m", "workflows.task_main", "reap", _this_process(),
                     str(self.parsl_dir / JOBS_FILE)],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=reaper_log,
                    start_new_session=True,
                )  # fmt: skip
        try:
            self.config = self._config(parsl_path)
            self.dfk = parsl.load(self.config)
        except Exception as exc:
            self._stop_reaper()
            self._remove_link()
            raise WorkflowError(
                f"Parsl could not start site {site.name!r} ({type(exc).__name__}: {exc}); "
                f"see the logs under {self.parsl_dir}"
            ) from exc

    def _config(self, parsl_path: Path) -> Any:
        from parsl.config import Config
        from parsl.executors import MPIExecutor, ThreadPoolExecutor
        from parsl.executors.high_throughput.executor import DEFAULT_LAUNCH_CMD
        from parsl.launchers import SimpleLauncher
        from parsl.providers import LocalProvider

        site = self.site
        worker_init = f"export PATH={shlex.quote(VENV_BIN)}:$PATH"
        if site.executor == "parsl-threads":
            executor: Any = ThreadPoolExecutor(label="threads", max_threads=site.max_workers)
        else:
            guard = [PYTHON, "-m", "workflows.task_main", "guard"]
            interchange = [*guard, "--parent", str(os.getpid()), "--", "interchange.py"]
            launch_cmd = None
            if site.provider == "local":
                # MPIExecutor needs a node list; on a workstation it is this host only
                nodefile = parsl_path / "nodefile"
                nodefile.write_text("localhost\n")
                worker_init += f"; export PBS_NODEFILE={shlex.quote(str(nodefile))}"
                provider: Any = LocalProvider(
                    launcher=SimpleLauncher(), init_blocks=1, min_blocks=0, max_blocks=1,
                    worker_init=worker_init,
                )  # fmt: skip
                # the pool kills itself (and its workers) when this process is gone
                watch = " ".join(shlex.quote(a) for a in [*guard, "--watch", _this_process(), "--"])
                launch_cmd = _brace_escaped(watch, 2) + " " + DEFAULT_LAUNCH_CMD
            else:
                options = [f"#SBATCH --ntasks-per-node={site.ntasks_per_node}"]
                if site.overcommit:
                    options.append("#SBATCH --overcommit")
                provider = recording_slurm_provider(
                    self.parsl_dir / JOBS_FILE, partition=site.partition, account=site.account, walltime=site.walltime,
                    nodes_per_block=site.nodes_per_block, init_blocks=0, min_blocks=0,
                    max_blocks=site.max_blocks, exclusive=site.exclusive,
                    launcher=SimpleLauncher(), scheduler_options="\n".join(options),
                    worker_init=worker_init,
                )  # fmt: skip
            executor = MPIExecutor(
                label="mpi", provider=provider, mpi_launcher=site.launcher(False),
                max_workers_per_block=site.max_workers,
                address="127.0.0.1" if site.provider == "local" else None,
                heartbeat_period=5, heartbeat_threshold=30, launch_cmd=launch_cmd,
            )  # fmt: skip
            # an argument vector (MPIExecutor's signature accepts only a string, which the
            # HighThroughputExecutor would take for a program name)
            executor.interchange_launch_cmd = interchange
        return Config(
            executors=[executor], run_dir=str(parsl_path), retries=0,
            max_idletime=site.max_idletime, strategy_period=1,
        )  # fmt: skip

    def _mpi_prefix(self, ranks: int) -> list[str] | None:
        if self.site.executor == "parsl-mpi":
            return None  # $PARSL_MPI_PREFIX, set by the MPIExecutor per task
        return super()._mpi_prefix(ranks)

    def _submit(self, task_file: Path, ranks: int, stdout: Path, stderr: Path, workdir: Path) -> TaskHandle:
        kwargs: dict[str, Any] = {}
        if self.site.executor == "parsl-mpi":
            kwargs["parsl_resource_specification"] = {
                "num_nodes": 1, "num_ranks": ranks, "ranks_per_node": ranks,
            }  # fmt: skip
            if self.site.launcher(False) == "srun" and self.site.srun_options():
                kwargs["parsl_resource_specification"]["launcher_options"] = self.site.srun_options()
        future = self._app(str(task_file), str(stdout), str(stderr), **kwargs)
        return TaskHandle(future, workdir, task_file, parsl_task_id=future.tid)

    def _remove_link(self) -> None:
        if self._link_holder is not None:
            shutil.rmtree(self._link_holder, ignore_errors=True)
            (self.parsl_dir / "LINK").unlink(missing_ok=True)
            self._link_holder = None

    def _stop_reaper(self) -> None:
        if self._reaper is not None:
            self._reaper.terminate()
            self._reaper.wait()
            self._reaper = None

    def close(self) -> None:
        import parsl

        super().close()
        try:
            self.dfk.cleanup()  # cancels the pilot jobs
        finally:
            parsl.clear()
            self._stop_reaper()
            self._remove_link()


def make_executor(site: SiteProfile, run_dir: Path) -> InlineExecutor | ParslExecutor:
    if site.executor == "inline":
        return InlineExecutor(site, run_dir)
    return ParslExecutor(site, run_dir)

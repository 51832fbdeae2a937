"""Run one step's task without a shell, and keep every process it starts on a leash.

``python -m workflows.task_main run TASK.json`` runs a task file written by
:mod:`workflows.executors`::

    {"cwd": DIR, "env": {NAME: VALUE}, "warm_argv": [...] | null, "argv": [...],
     "mpi": bool, "mpi_prefix": [...] | null, "cancel_file": PATH}

The task leads a new session (its own process group, away from the terminal's Ctrl-C), writes
``.taskinfo`` (host, Slurm job id, pid = process group id, start time) into ``cwd``, runs
``warm_argv`` (its printout goes to stderr) and then ``argv``, an MPI task behind
``mpi_prefix`` (else ``$PARSL_MPI_PREFIX``, which Parsl's MPIExecutor sets, split into words).
No argument passes through a shell. It exits at once if ``cancel_file`` exists. On SIGTERM,
SIGINT, SIGHUP or the death of its parent (``PR_SET_PDEATHSIG`` on Linux) it stops its
process group and all its descendants (it is their subreaper, so orphans stay descendants):
SIGTERM, then SIGKILL to what is left once its child has exited or after :data:`GRACE_S` s.

``python -m workflows.task_main guard --parent PID -- CMD...`` execs ``CMD`` in a new session
that is killed when process PID (its parent) dies; ``guard --watch PID:START -- CMD...`` runs
``CMD`` and kills its own process group (``CMD`` and all it started) as soon as process PID
with start time START is gone. Parsl's interchange and local worker pool run under these.
``python -m workflows.task_main reap PID:START JOBS_FILE`` waits until process PID is gone,
then cancels the Slurm jobs listed in JOBS_FILE (:mod:`workflows.slurm_jobs`); SIGTERM ends it
without cancelling anything.
"""

from __future__ import annotations

import ctypes
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.memory import proc_stats

GRACE_S = 3.0  # seconds between SIGTERM and SIGKILL of a task's process group
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def _prctl(option: int, value: int) -> None:
    if not sys.platform.startswith("linux"):
        return
    try:
        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def set_parent_death_signal(sig: int) -> None:
    """Ask Linux to send ``sig`` to this process when its parent dies (no-op elsewhere)."""
    _prctl(_PR_SET_PDEATHSIG, int(sig))


def process_start_time(pid: int) -> str | None:
    """The start time of process ``pid`` in clock ticks since boot (``/proc/PID/stat`` field
    22), which tells a process from a later one with the same pid; None if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()
    return fields[19] if len(fields) > 19 else None


def is_same_process(pid: int, start: str | None) -> bool:
    """Whether ``pid`` is alive and (when ``start`` is known) started at ``start``."""
    now = process_start_time(pid)
    if now is None:
        return False
    return start is None or start == now


def descendants(pid: int) -> list[tuple[int, str]]:
    """``(pid, start time)`` of every living descendant of ``pid`` (from ``/proc``), also
    those that moved to a process group or session of their own (MPI ranks under Hydra)."""
    children: dict[int, list[tuple[int, str]]] = {}
    for child, fields in proc_stats().items():
        if len(fields) > 19:
            children.setdefault(int(fields[1]), []).append((child, fields[19]))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child[0])
    return found


def _write_taskinfo(cwd: Path) -> None:
    pid = os.getpid()
    info = {
        "host": socket.gethostname(), "slurm_job_id": os.environ.get("SLURM_JOB_ID", ""),
        "pid": str(pid), "pgid": str(os.getpgid(0)), "start": process_start_time(pid) or "",
    }  # fmt: skip
    tmp = cwd / f".taskinfo.tmp-{pid}"
    tmp.write_text("".join(f"{k}={v}\n" for k, v in info.items()))
    os.replace(tmp, cwd / ".taskinfo")


class _Stopper:
    """Turns a stop signal into stopping the process group, once."""

    def __init__(self) -> None:
        self.child: subprocess.Popen | None = None
        self.signum: int | None = None

    def __call__(self, signum: int, frame: Any) -> None:
        if self.signum is not None:
            return
        self.signum = signum
        for sig in _STOP_SIGNALS:
            signal.signal(sig, signal.SIG_IGN)
        family = descendants(os.getpid())
        try:
            os.killpg(os.getpgid(0), signal.SIGTERM)
        except OSError:
            pass
        _signal_all(family, signal.SIGTERM)
        deadline = time.monotonic() + GRACE_S
        alive = self.child is not None
        while alive and time.monotonic() < deadline:
            time.sleep(0.05)
            try:  # not Popen.poll(): the interrupted Popen.wait() holds its lock
                alive = os.waitpid(self.child.pid, os.WNOHANG) == (0, 0)  # type: ignore[union-attr]
            except ChildProcessError:
                alive = False
        # whatever is left: descendants in groups of their own, then the group, this process
        # included
        _signal_all(family + descendants(os.getpid()), signal.SIGKILL)
        os.killpg(os.getpgid(0), signal.SIGKILL)


def _signal_all(processes: list[tuple[int, str]], sig: int) -> None:
    for pid, start in processes:
        if is_same_process(pid, start):
            try:
                os.kill(pid, sig)
            except OSError:
                pass


def _child_setup() -> None:
    set_parent_death_signal(signal.SIGKILL)  # a child dies with this process
    for sig in _STOP_SIGNALS:
        signal.signal(sig, signal.SIG_DFL)


def launch(task_file: str, out_path: str, err_path: str,
           parsl_resource_specification: dict | None = None) -> int:  # fmt: skip
    """Run a task file in a new process of this module (stdout, stderr to the log files);
    its exit status. The body of every executor's tasks: a Parsl python app (this module
    imports fast in a worker) or a thread of the inline executor."""
    if Path(task_file).with_suffix(".cancel").exists():
        return 128 + signal.SIGTERM
    with open(out_path, "w") as out, open(err_path, "w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "workflows.task_main", "run", task_file],
            stdout=out, stderr=err, stdin=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        return proc.wait()


def run_task(task_file: Path) -> int:
    """Run the task described by ``task_file`` in this process's session; its exit status."""
    task = json.loads(task_file.read_text())
    if os.getpid() != os.getpgid(0):
        os.setsid()
    stopper = _Stopper()
    for sig in _STOP_SIGNALS:
        signal.signal(sig, stopper)
    set_parent_death_signal(signal.SIGTERM)
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)  # orphaned descendants stay ours, to be stopped
    if os.getppid() == 1:  # the parent died before the death signal was armed
        return 128 + signal.SIGTERM
    cwd = Path(task["cwd"])
    _write_taskinfo(cwd)
    if Path(task["cancel_file"]).exists():
        print("stratoflow: task cancelled before it started", file=sys.stderr)
        return 128 + signal.SIGTERM
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env.update(task["env"])
    argv = list(task["argv"])
    if task["mpi"]:
        prefix = task["mpi_prefix"]
        if prefix is None:
            text = os.environ.get("PARSL_MPI_PREFIX", "")
            if not text:
                print("stratoflow: no MPI launcher set (PARSL_MPI_PREFIX)", file=sys.stderr)
                return 2
            prefix = shlex.split(text)
        argv = [*prefix, *argv]
    stages = [(task["warm_argv"], sys.stderr)] if task["warm_argv"] else []
    if stages:
        print("stratoflow: warming the stencil cache serially", file=sys.stderr, flush=True)
    stages.append((argv, sys.stdout))
    for stage_argv, out in stages:
        try:
            stopper.child = subprocess.Popen(
                stage_argv, cwd=cwd, env=env, stdout=out, stderr=sys.stderr,
                preexec_fn=_child_setup,
            )  # fmt: skip
        except OSError as exc:
            print(f"stratoflow: cannot start {stage_argv[0]!r}: {exc.strerror}", file=sys.stderr)
            return 127
        code = stopper.child.wait()
        if code != 0:
            return 128 - code if code < 0 else code
    return 0


def _guard(args: list[str]) -> int:
    if "--" not in args or len(args) < 4:
        print("usage: task_main guard (--parent PID | --watch PID:START) -- CMD...", file=sys.stderr)
        return 2
    mode, target, cmd = args[0], args[1], args[args.index("--") + 1 :]
    if mode == "--parent":
        if os.getpid() != os.getpgid(0):
            os.setsid()
        set_parent_death_signal(signal.SIGKILL)
        if os.getppid() != int(target):
            return 1
        os.execvp(cmd[0], cmd)
    pid_text, _, start = target.partition(":")
    pid = int(pid_text)
    child = subprocess.Popen(cmd)
    while child.poll() is None:
        if not is_same_process(pid, start or None):
            os.killpg(os.getpgid(0), signal.SIGKILL)  # CMD, what it started, and this guard
        time.sleep(0.25)
    return child.returncode if child.returncode >= 0 else 128 - child.returncode


def _reap(target: str, jobs_file: Path) -> int:
    from workflows.slurm_jobs import cancel_jobs

    pid_text, _, start = target.partition(":")
    while is_same_process(int(pid_text), start or None):
        time.sleep(0.25)
    jobs = cancel_jobs(jobs_file)
    if jobs:
        print(f"process {pid_text} is gone: cancelled Slurm jobs {' '.join(jobs)}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) == 2 and args[0] == "run":
        return run_task(Path(args[1]))
    if args and args[0] == "guard":
        return _guard(args[1:])
    if len(args) == 3 and args[0] == "reap":
        return _reap(args[1], Path(args[2]))
    print("usage: python -m workflows.task_main run TASK.json | guard ... | reap PID:START FILE",
          file=sys.stderr)  # fmt: skip
    return 2


if __name__ == "__main__":
    sys.exit(main())

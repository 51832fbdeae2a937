"""One rank's failure ends the whole MPI job.

Under ``mpiexec`` a rank that dies of an exception or an interrupt would otherwise leave the
other ranks waiting forever in their next collective (Python's exit runs ``MPI_Finalize``,
which waits for everyone). :func:`install_abort_guard` makes every way out of a rank call
``MPI_Abort`` on ``COMM_WORLD`` after logging which rank failed and why:

* an uncaught exception (``sys.excepthook``);
* SIGINT, SIGTERM or SIGHUP, also while the rank is blocked inside an MPI call: the signal's
  byte reaches a watcher thread through :func:`signal.set_wakeup_fd`, and that thread aborts
  (MPI is initialised with ``MPI_THREAD_MULTIPLE``);
* an exception or a non-zero ``SystemExit`` inside :func:`abort_on_failure`, the block a
  command wraps around its MPI work (the CLI otherwise turns exceptions into an exit code).

A rank killed outright (SIGKILL) runs no code; MPICH's ``mpiexec`` (hydra) then kills the
other ranks itself.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import NoReturn

from stencils.exit_status import signal_name

log = logging.getLogger(__name__)

#: environment variables set by MPI launchers (MPICH hydra and PMI-2 srun, Open MPI, PMIx)
LAUNCHER_VARIABLES = ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK")
#: the signals that abort the job, with the exit code each gives (128 + signal number)
ABORT_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
#: seconds between writing the abort message and ``MPI_Abort``: the launcher forwards a rank's
#: stderr through a pipe and stops reading it when it kills the job, so a message written just
#: before the abort can be lost without this pause
FORWARD_GRACE_S = 1.0

_lock = threading.Lock()
_installed = False
_keep: list[socket.socket] = []  # the wakeup sockets, open as long as the process runs


def under_mpi() -> bool:
    """True in a process started by an MPI launcher (one rank of a job)."""
    return any(k in os.environ for k in LAUNCHER_VARIABLES)


def _where() -> tuple[str, int]:
    """``("rank R of N on HOST (pid P)", N)`` of this process."""
    from mapping.cluster.mpi_comm import world_rank_size

    rank, size = world_rank_size()
    return f"rank {rank} of {size} on {socket.gethostname()} (pid {os.getpid()})", size


def abort_job(code: int, reason: str, exc_info: BaseException | None = None) -> NoReturn:
    """Log ``reason`` with this rank's name (and ``exc_info``'s traceback), then
    ``MPI_Abort(COMM_WORLD, code)``: every rank of the job ends. Does not return."""
    from mapping.cluster.mpi_comm import abort_world

    _lock.acquire()  # a second caller (signal during an abort) waits for the process to end
    try:
        where, size = _where()
        detail = ""
        if exc_info is not None:
            detail = "\n" + "".join(
                traceback.format_exception(type(exc_info), exc_info, exc_info.__traceback__)
            ).rstrip()
        log.error("%s: %s; aborting the MPI job (all %d ranks)%s", where, reason, size, detail)
        for handler in logging.getLogger().handlers:
            handler.flush()
        sys.stderr.flush()
        time.sleep(FORWARD_GRACE_S)
    finally:
        abort_world(code)
    os._exit(code)  # not reached: MPI_Abort ends the process


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _excepthook(
    kind: type[BaseException], exc: BaseException, tb: TracebackType | None
) -> None:
    if exc.__traceback__ is None:
        exc = exc.with_traceback(tb)
    if isinstance(exc, KeyboardInterrupt):
        abort_job(128 + signal.SIGINT, "interrupted")
    abort_job(1, f"uncaught {_describe(exc)}", exc)


def _watch(read_end: socket.socket) -> None:
    """Watcher thread: abort when a signal's byte arrives on the wakeup socket."""
    while True:
        try:
            data = read_end.recv(1)
        except InterruptedError:
            continue
        except OSError:
            return
        if not data:
            return
        abort_job(128 + data[0], f"received {signal_name(data[0])}")


def _ignore(signum: int, frame: object) -> None:
    """The Python-level handler: the watcher thread does the work (also when the main thread
    is blocked in MPI and would never run a Python handler)."""


def install_abort_guard() -> None:
    """Abort the whole MPI job on this rank's uncaught exception or on SIGINT/SIGTERM/SIGHUP
    (idempotent; from the main thread; initialises MPI). Outside an MPI launch it does
    nothing."""
    global _installed
    if _installed or not under_mpi():
        return
    if threading.current_thread() is not threading.main_thread():
        raise RuntimeError("install_abort_guard() must be called from the main thread")
    from mapping.cluster.mpi_comm import world_rank_size

    world_rank_size()  # initialise MPI (with MPI_THREAD_MULTIPLE) before the watcher can abort
    read_end, write_end = socket.socketpair()
    write_end.setblocking(False)
    signal.set_wakeup_fd(write_end.fileno(), warn_on_full_buffer=False)
    for signum in ABORT_SIGNALS:
        signal.signal(signum, _ignore)
    sys.excepthook = _excepthook
    threading.Thread(target=_watch, args=(read_end,), name="mpi-abort-guard", daemon=True).start()
    _keep.extend((read_end, write_end))
    _installed = True
    log.debug("MPI abort guard installed")


@contextmanager
def abort_on_failure(
    what: str, *, with_traceback: Callable[[BaseException], bool] = lambda exc: True
) -> Iterator[None]:
    """Run the block as one rank of an MPI job: :func:`install_abort_guard`, and any exception
    or non-zero ``SystemExit`` out of the block aborts the job (logged as ``what`` failed on
    this rank; with its traceback where ``with_traceback(exc)``). Outside MPI: a plain block."""
    if not under_mpi():
        yield
        return
    install_abort_guard()
    try:
        yield
    except SystemExit as exc:
        if exc.code in (None, 0):
            raise
        code = exc.code if isinstance(exc.code, int) else 1
        abort_job(code, f"{what} exited with {exc.code!r}")
    except KeyboardInterrupt:
        abort_job(128 + signal.SIGINT, f"{what} interrupted")
    except BaseException as exc:  # noqa: BLE001 - every failure of a rank must end the job
        abort_job(1, f"{what} failed: {_describe(exc)}", exc if with_traceback(exc) else None)

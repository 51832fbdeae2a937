"""The ``stratoflow`` command line.

Sub-commands are plug-ins: every module in :mod:`workflows.commands` that defines
``register(subparsers)`` adds its own sub-command, so each capability (``bench``, ``map``,
``fv3``, ``ens10``, ``tune``, ``run`` ...) lives in its own small module. A command line
imports only the module of its command (all of them for ``--help`` or an unknown command).

Errors the user can fix are one line on stderr and exit status 1 (a traceback only with
``-vv``); argparse's usage errors exit 2. When stdout's reader goes away (``stratoflow runs
show X | head``) the command stops quietly with status 141, as one killed by SIGPIPE would.
In a workflow step, a failure is also recorded for the engine
(:func:`workflows.kinds.base.record_step_error`), which does not retry usage and
configuration errors.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import pkgutil
import select
import signal
import sys
import threading
from collections.abc import Sequence

import workflows.commands

log = logging.getLogger("stratoflow")


def command_modules() -> list[str]:
    """The modules of :mod:`workflows.commands` (each registers the command of its name)."""
    infos = pkgutil.iter_modules(workflows.commands.__path__)
    return sorted(m.name for m in infos if not m.name.startswith("_"))


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or only of ``command`` when a module of that name exists
    (importing one command's module is much faster than importing all)."""
    parser = argparse.ArgumentParser(
        prog="stratoflow",
        description=(
            "stratoflow: stencil programs and weather codes as reproducible HPC jobs. "
            "GT4Py stencils, StencilFlow mapping onto FPGAs, MPI halo exchange, transfer "
            "tuning, the FV3 dynamical core and the ENS-10 post-processing baselines."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "-v", "--verbose", action="count", default=0, help="more log output (-vv for debug)"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    names = command_modules()
    if command in names:
        names = [command]
    for name in names:
        module = importlib.import_module(f"workflows.commands.{name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(sub)
    return parser


# Libraries that log every compiler command line at INFO; shown only with -vv.
_CHATTY_LOGGERS = ("root", "compilers", "distutils", "setuptools", "dace", "gt4py", "parsl")


def setup_logging(verbosity: int) -> None:
    """INFO for stratoflow's own loggers; third-party build chatter only with -vv."""
    level = logging.DEBUG if verbosity >= 1 else logging.INFO
    handler = logging.StreamHandler()
    handler.setFormatter(
        logging.Formatter("%(asctime)s %(levelname)-7s %(name)s: %(message)s", datefmt="%H:%M:%S")
    )
    for name in ("stencils", "mapping", "fv3core", "ens10", "workflows", "benchmarks", "stratoflow"):
        logging.getLogger(name).setLevel(level)
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if verbosity >= 2 else logging.WARNING)
    for name in _CHATTY_LOGGERS:
        logging.getLogger(name).setLevel(logging.DEBUG if verbosity >= 2 else logging.WARNING)


def _command_of(argv: Sequence[str]) -> str | None:
    """The command word of a command line (the top-level options take no value)."""
    return next((a for a in argv if not a.startswith("-")), None)


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the main thread is (like Ctrl-C's KeyboardInterrupt), so that every
    phase of a command -- spec expansion, database writes, a run -- stops within moments."""


def _terminate(signum: int, frame: object) -> None:
    raise Terminated


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command line; its exit status (130 after SIGINT, 143 after SIGTERM)."""
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        status = _main(list(sys.argv[1:] if argv is None else argv))
        sys.stdout.flush()  # a reader that went away shows here, not at interpreter exit
        return status
    except BrokenPipeError:
        if not _stdout_gone():
            raise
        _discard_stdout()
        return 141  # 128 + SIGPIPE
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _main(argv: list[str]) -> int:
    parser = build_parser(_command_of(argv))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        if exc.code not in (0, None):
            _record(exc)
        raise
    setup_logging(args.verbose)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    from mapping.cluster.abort import abort_on_failure
    from workflows.errors import is_user_error

    brief = args.verbose < 2
    try:
        # under mpiexec, any rank's failure or interrupt aborts the whole job
        with abort_on_failure(f"stratoflow {_command_of(argv)}",
                              with_traceback=lambda exc: not (brief and is_user_error(exc))):  # fmt: skip
            return int(handler(args) or 0)
    except KeyboardInterrupt as exc:
        terminated = isinstance(exc, Terminated)
        log.error("interrupted by %s; stopped", "SIGTERM" if terminated else "SIGINT")
        return 143 if terminated else 130
    except BrokenPipeError:
        raise
    except Exception as exc:  # a clear one-line error for known failures, traceback with -vv
        _record(exc)
        if is_user_error(exc) and brief:
            log.error("%s: %s", type(exc).__name__, exc)
            return 1
        raise


def _record(exc: BaseException) -> None:
    from workflows.kinds.base import record_step_error  # a no-op outside a workflow step

    record_step_error(exc)


def _stdout_gone() -> bool:
    """Whether stdout is a pipe or socket whose reader has gone away."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, ValueError, OSError):
        return False
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return any(events & select.POLLERR for _, events in poller.poll(0))


def _discard_stdout() -> None:
    """Point stdout at /dev/null, so that flushing it at exit raises nothing (the Python
    docs' recipe for SIGPIPE)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


if __name__ == "__main__":
    sys.exit(main())

"""The ``stratoflow`` command line.

Sub-commands are plug-ins: every module in :mod:`workflows.commands` that defines
``register(subparsers)`` adds its own sub-command, so each capability (``bench``, ``map``,
``fv3``, ``ens10``, ``tune``, ``run`` ...) lives in its own small module.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import pkgutil
import sys
from collections.abc import Sequence

import workflows.commands

log = logging.getLogger("stratoflow")


def build_parser() -> argparse.ArgumentParser:
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
    for info in sorted(pkgutil.iter_modules(workflows.commands.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"workflows.commands.{info.name}")
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    setup_logging(args.verbose)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    try:
        return int(handler(args) or 0)
    except KeyboardInterrupt:
        log.error("interrupted")
        return 130
    except Exception as exc:  # a clear one-line error for known failures, traceback with -vv
        from workflows.errors import is_user_error

        if is_user_error(exc) and args.verbose < 2:
            log.error("%s: %s", type(exc).__name__, exc)
            return 1
        raise


if __name__ == "__main__":
    sys.exit(main())

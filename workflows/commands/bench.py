"""``stratoflow bench NAME``: run a benchmark script from :mod:`benchmarks`.

Every module ``benchmarks/<name>.py`` that defines ``NAME``, ``HELP``, ``add_arguments(parser)``
and ``run(args) -> int`` becomes ``stratoflow bench <NAME>``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
from collections.abc import Callable
from pathlib import Path

import benchmarks
from workflows.commands.argtypes import positive_number, whole_number


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "bench",
        help="measure performance (JSON + Markdown table in docs/benchmarks/)",
        description=(
            "Performance benchmarks. Each measures the machine's STREAM triad bandwidth in the "
            "same run and reports ratios, never bare times."
        ),
    )
    bench_sub = parser.add_subparsers(dest="benchmark", metavar="BENCHMARK", required=True)
    for info in sorted(pkgutil.iter_modules(benchmarks.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"benchmarks.{info.name}")
        name = getattr(module, "NAME", None)
        if name is None:
            continue
        p = bench_sub.add_parser(name, help=module.HELP, description=module.__doc__)
        module.add_arguments(p)
        _positive_numbers(p)
        p.set_defaults(handler=_checked(module.run, _output_options(p)))


def _positive_numbers(parser: argparse.ArgumentParser) -> None:
    """Every numeric option without ``choices`` (sizes, counts, repeats, times, tolerances)
    must be positive: argparse refuses 0, negatives, nan and inf before a benchmark starts."""
    for action in parser._actions:
        if action.type in (int, float) and action.choices is None:
            action.type = whole_number(1) if action.type is int else positive_number


#: options that name files a benchmark writes at its end
_OUTPUT_DESTS = ("json", "markdown")


def _output_options(parser: argparse.ArgumentParser) -> list[tuple[str, str]]:
    return [(a.dest, a.option_strings[0]) for a in parser._actions
            if a.dest in _OUTPUT_DESTS and a.option_strings]  # fmt: skip


def _checked(run: Callable[[argparse.Namespace], int], outputs: list[tuple[str, str]]):  # noqa: ANN202
    """``run``, after checking that its output files can be written (before hours of work)."""

    def handler(args: argparse.Namespace) -> int:
        from benchmarks.common import BenchmarkError

        for dest, option in outputs:
            value = getattr(args, dest, None)
            if value is None:
                continue
            path = Path(value)
            if path.is_dir():
                raise BenchmarkError(f"{option} {path} is a folder; give a file name")
            parent = path.resolve().parent
            while not parent.exists():
                parent = parent.parent
            if not parent.is_dir() or not os.access(parent, os.W_OK):
                raise BenchmarkError(f"{option} {path}: {parent} is not a writable folder")
        if not getattr(args, "render_only", False):
            return run(args)
        try:  # the saved JSON alone: a damaged one is named, never a traceback
            return run(args)
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise BenchmarkError(
                f"--json {args.json} is damaged or from another version ({type(exc).__name__}: "
                f"{exc}); run the benchmark without --render-only to measure it again"
            ) from None

    return handler

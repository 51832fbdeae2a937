"""``stratoflow bench NAME``: run a benchmark script from :mod:`benchmarks`.

Every module ``benchmarks/<name>.py`` that defines ``NAME``, ``HELP``, ``add_arguments(parser)``
and ``run(args) -> int`` becomes ``stratoflow bench <NAME>``.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil

import benchmarks


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
        p.set_defaults(handler=module.run)

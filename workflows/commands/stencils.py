"""``stratoflow stencils list|demo``: the stencil library."""

from __future__ import annotations

import argparse
import sys

from stencils.config import (
    CPU_BACKENDS,
    check_backend,
    check_compiler_env,
    default_backend,
    default_cache_dir,
    ensure_writable_dir,
)


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "stencils",
        help="the GTScript stencil library (list, demo)",
        description="The validated GTScript stencil library: every stencil has a NumPy reference.",
    )
    ssub = parser.add_subparsers(dest="stencils_command", metavar="ACTION", required=True)
    ssub.add_parser("list", help="list the library stencils").set_defaults(handler=_list)
    demo = ssub.add_parser(
        "demo",
        help="compile, run and verify every library stencil; print a table",
        description=(
            "Build each library stencil on the chosen backends, run it on a small domain and "
            "compare with its NumPy reference. Exits non-zero if any result is off."
        ),
    )
    demo.add_argument(
        "--backend",
        action="append",
        choices=CPU_BACKENDS,
        help="backend to use (repeatable; default $STRATOFLOW_BACKEND or numpy). C++ backends "
        "compile each stencil once (15-20 s) and reuse the cache afterwards.",
    )
    demo.add_argument("--shape", type=int, nargs=3, default=(32, 32, 16), metavar=("NX", "NY", "NZ"))
    demo.set_defaults(handler=_demo)


def _list(args: argparse.Namespace) -> int:
    from stencils.library import LIBRARY

    for name, lib in LIBRARY.items():
        schedule = f" (built without GT4Py's {', '.join(lib.oir_skip)})" if lib.oir_skip else ""
        print(f"{name:<14} halo={lib.halo}  in={','.join(lib.inputs)}  out={','.join(lib.outputs)}  "
              f"{lib.description}{schedule}")
    return 0


#: the largest demo domain (grid points): 128 MiB per float64 field
MAX_DEMO_POINTS = 1 << 24


def check_shape(shape: tuple[int, int, int]) -> tuple[int, int, int]:
    """The demo's domain: NX, NY >= 1, NZ >= 3 (the vertical solver's least), bounded size."""
    from stencils.errors import StencilError

    nx, ny, nz = shape
    if min(nx, ny) < 1 or nz < 3:
        raise StencilError(
            f"--shape {nx} {ny} {nz}: NX and NY must be >= 1 and NZ >= 3 (vadv solves a "
            "tridiagonal system over at least 3 levels)"
        )
    if nx * ny * nz > MAX_DEMO_POINTS:
        raise StencilError(
            f"--shape {nx} {ny} {nz}: {nx * ny * nz:,} points; the demo runs at most "
            f"{MAX_DEMO_POINTS:,} (use 'stratoflow bench stencils' for large domains)"
        )
    return shape


def _demo(args: argparse.Namespace) -> int:
    shape = check_shape(tuple(args.shape))
    backends = args.backend or [default_backend()]
    check_compiler_env()
    for backend in backends:
        check_backend(backend)
    ensure_writable_dir(default_cache_dir(), "the stencil cache", "STRATOFLOW_CACHE_DIR")
    from stencils.demo import format_table, run_demo

    results = run_demo(backends, shape)
    print(format_table(results))
    bad = [r for r in results if not r.ok]
    if bad:
        print(f"{len(bad)} stencil(s) disagree with their NumPy reference", file=sys.stderr)
        return 1
    print(f"all {len(results)} stencil runs match their NumPy references")
    return 0

"""``stratoflow fv3 run|plot``: the FV3 cubed-sphere core (Williamson test cases)."""

from __future__ import annotations

import argparse
import logging
import math
import sys

log = logging.getLogger(__name__)


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "fv3",
        help="FV3 cubed-sphere core: run Williamson test cases, plot the output",
        description=(
            "The FV3 finite-volume cubed-sphere core (GT4Py). Runs on all 6*layout^2 ranks in "
            "this process, or under `mpiexec -n 6*layout^2` (one rank per process)."
        ),
    )
    fv3_sub = parser.add_subparsers(dest="fv3_command", metavar="ACTION", required=True)

    run = fv3_sub.add_parser(
        "run",
        help="run a test case and write CF-style netCDF",
        description=(
            "Run a Williamson et al. (1992) test case. Implemented: williamson1 (cosine-bell "
            "advection by solid-body rotation, FV3 fvtp2d). Prints the normalised l1/l2/linf "
            "errors against the analytic solution and the relative mass change. Example: "
            "stratoflow fv3 run --case williamson1 --resolution 48 --days 12 --alpha 1.5208 "
            "--output tc1.nc"
        ),
    )
    run.add_argument("--config", help="YAML file with FV3Config keys (CLI options override it)")
    run.add_argument("--case", help="test case (default williamson1)")
    run.add_argument("--resolution", type=int, help="cubed sphere C<N> (default 48)")
    run.add_argument("--days", type=float, help="simulated days (default 12)")
    run.add_argument("--layout", type=int, help="ranks per tile edge: 6*layout^2 ranks (default 1)")
    run.add_argument("--backend", help="GT4Py backend, e.g. numpy, gt:cpu_ifirst (default numpy)")
    run.add_argument("--dt", type=float, help="time step in s (default: from --courant)")
    run.add_argument("--courant", type=float, help="target Courant number when dt is automatic")
    run.add_argument("--hord", type=int, help="PPM scheme: 5 (unlimited) or 8 (monotone)")
    run.add_argument(
        "--alpha", type=float, help="flow angle to the polar axis in radians (1.5208 = corners)"
    )
    run.add_argument("--output", help="write the final state to this netCDF file")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    run.set_defaults(handler=_run)

    plot = fv3_sub.add_parser(
        "plot",
        help="draw a field of an output file on a lat-lon map (PNG)",
        description="Example: stratoflow fv3 plot tc1.nc --var h --output tc1_h.png",
    )
    plot.add_argument("file", help="netCDF written by `stratoflow fv3 run --output`")
    plot.add_argument("--var", default="h", help="variable to draw (default h)")
    plot.add_argument("--output", help="PNG path (default: <file>_<var>.png)")
    plot.set_defaults(handler=_plot)


def _config(args: argparse.Namespace):
    from fv3core.config import FV3Config

    base = FV3Config.from_yaml(args.config).to_dict() if args.config else {}
    for key in ("case", "resolution", "days", "layout", "backend", "dt", "courant", "hord",
                "alpha"):  # fmt: skip
        value = getattr(args, key)
        if value is not None:
            base[key] = value
    return FV3Config.from_dict(base, source="command line")


def _under_mpi() -> bool:
    import os

    return any(k in os.environ for k in ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK"))


def _run(args: argparse.Namespace) -> int:
    from fv3core.driver import run, write_netcdf

    config = _config(args)
    result = run(config, mpi=_under_mpi(), progress=not args.no_progress)
    if not result.is_root:
        return 0
    if args.output:
        path = write_netcdf(result, args.output)
        log.info("wrote %s", path)
    d = result.diagnostics
    sys.stdout.write(
        f"{config.case} C{config.resolution} {result.steps} steps of {result.dt:.1f} s "
        f"({result.seconds:.1f} s, {1e3 * d['seconds_per_step']:.1f} ms/step)\n"
        f"  l1 {d['l1']:.4e}  l2 {d['l2']:.4e}  linf {d['linf']:.4e}  "
        f"mass change {d['mass_relative_change']:.2e}  h in [{d['h_min']:.3g}, {d['h_max']:.4g}]\n"
    )
    return 0 if math.isfinite(d["l2"]) else 1


def _plot(args: argparse.Namespace) -> int:
    from fv3core.plot import plot_field

    out = plot_field(args.file, args.var, args.output)
    sys.stdout.write(f"{out}\n")
    return 0

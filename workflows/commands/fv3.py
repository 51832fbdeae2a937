"""``stratoflow fv3 run|plot``: the FV3 cubed-sphere core (Williamson test cases)."""

from __future__ import annotations

import argparse
import logging
import math
import sys
from pathlib import Path

from workflows.commands.argtypes import finite_number, positive_number, whole_number
from workflows.errors import WorkflowError

log = logging.getLogger(__name__)


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "fv3",
        help="FV3 cubed-sphere core: run Williamson test cases and the JW06 baroclinic wave, plot",
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
            "Run an FV3 test case on fv3core, the GT4Py port of GFDL's FV3 dynamical core "
            "(FV3's c_sw/d_sw on FV3's grid, FV3's initial conditions; equal to GFDL's Fortran "
            "FV3 to round-off). Shallow water (FV3's SW_DYNAMICS build): williamson1 (FV3's "
            "test_case 1, cosine-bell advection of delp by prescribed winds), williamson2 "
            "(steady geostrophic flow), williamson5 (flow over an isolated mountain), "
            "williamson6 (Rossby-Haurwitz wave) of Williamson et al. (1992), galewsky (the "
            "barotropically unstable jet, FV3's test_case 7). The defaults are the namelist of "
            "the Fortran reference runs (SHiELD's CI shallow-water tests at C48: ufs constants, "
            "dt 1200 s, n_split 4, nord 2, d4_bg 0.12, hord 8) and the case's standard length. "
            "Prints FV3's SWNORMS (normalised l1/l2/linf of the height and wind against t = 0, "
            "TC1 against the rotated bell), the Williamson et al. (1992) errors against the "
            "analytic solution where one exists (TC1, TC2: exact_*), and the relative change of "
            "mass, total energy and potential enstrophy. Examples: stratoflow fv3 run --namelist "
            "input.nml --output tc2.nc; stratoflow fv3 run --case williamson2 --output tc2.nc; "
            "stratoflow fv3 run --case williamson1 --resolution 24 --dt 3600 --n-split 2; "
            "mpiexec -n 6 stratoflow fv3 run --case williamson5 --resolution 48. "
            "3-D: --case baroclinic runs the Jablonowski & Williamson (2006) baroclinic wave "
            "(FV3's test_case 13) on FV3's hydrostatic core (Lagrangian layers, tracer_2d, "
            "vertical remapping; FV3's JW options unless given: C48, 26 levels, dt 1800 s, "
            "k_split 2, n_split 4, hord 10, kord 8/-8/8, nord 1, d4_bg 0.12), --case "
            "baroclinic_steady its balanced steady state (test_case 12); it reports ps min/max "
            "and where, the dry-mass, tracer-mass and total-energy changes and JW06's l2 of the "
            "zonal-mean wind change, writes ps, t850, u850, v850, vort850 on the tiles and on a "
            "1-degree lon-lat grid, and with --output a PNG of ps and vort850 at days 7, 9, 10 "
            "(those the run reaches). Example: stratoflow fv3 run --case baroclinic --resolution "
            "48 --levels 30 --days 10 --output jw.nc; with --non-hydrostatic on FV3's "
            "non-hydrostatic core (also from a namelist with hydrostatic = .false.)"
        ),
    )
    run.add_argument("--config", help="YAML file with FV3Config keys (CLI options override it)")
    run.add_argument(
        "--namelist", type=Path, metavar="PATH",
        help="an FV3 Fortran namelist (input.nml): fv_core_nml, test_case_nml and main_nml give "
        "the case (test_case), resolution (npx-1), layout, days, dt (dt_atmos), n_split, nord, "
        "d2_bg, d4_bg, dddmp, do_vort_damp, vtdm4, beta, hord_*, alpha and print_freq, with "
        "the ufs constants; the options below override it; keys fv3core cannot honour "
        "are refused by name; not with --config",
    )

    run.add_argument("--case", help="williamson1, williamson2, williamson5, williamson6, "
                     "galewsky, baroclinic or baroclinic_steady (default williamson1)")  # fmt: skip
    run.add_argument("--levels", dest="nz", type=whole_number(1),
                     help="3-D cases: FV3's npz, layers of FV3's set_eta levels (e.g. 26, 30, "
                     "47, 63; default 26)")  # fmt: skip
    run.add_argument("--k-split", dest="k_split", type=whole_number(1),
                     help="3-D cases: FV3's k_split, vertical remappings per time step (default 2)")
    run.add_argument("--consv-te", dest="consv_te", type=finite_number(),
                     help="3-D cases: FV3's energy fixer consv_te, the fraction of the total "
                     "energy lost over each step restored by a uniform heating (1: all; "
                     "default 0, none; < -0.001: a prescribed flux in W/m^2)")  # fmt: skip
    run.add_argument("--checker-tr", dest="checker_tr", action=argparse.BooleanOptionalAction,
                     help="3-D cases: carry FV3's checkerboard tracer (test_case_nml checker_tr) "
                     "beside sphum")  # fmt: skip
    solver = run.add_mutually_exclusive_group()
    solver.add_argument("--hydrostatic", dest="hydrostatic", action="store_const", const=True,
                        help="3-D cases: FV3's hydrostatic core (hydrostatic = .true.; the default)")
    solver.add_argument("--non-hydrostatic", dest="hydrostatic", action="store_const", const=False,
                        help="3-D cases: FV3's non-hydrostatic core (hydrostatic = .false., FV3's "
                        "production configuration): w and delz, the vertical solver --a-imp; "
                        "writes w and delz on the model layers")  # fmt: skip
    run.add_argument("--a-imp", dest="a_imp", type=finite_number(),
                     help="non-hydrostatic: FV3's a_imp, the vertical solver: > 0.999 SIM1, "
                     "0.5-0.999 SIM off-centred by a_imp (default 0.75), < -0.5 SIM3, "
                     "< -0.999 SIM3p0")  # fmt: skip
    run.add_argument("--resolution", type=whole_number(1), help="cubed sphere C<N> (default 48)")
    run.add_argument("--days", type=positive_number,
                     help="simulated days (default: the case's standard length: williamson1 12, "
                     "williamson2 5, williamson5 15, williamson6 14, galewsky 6, baroclinic 10)")
    run.add_argument("--layout", type=whole_number(1),
                     help="ranks per tile edge: 6*layout^2 ranks (default 1)")
    run.add_argument("--backend", help="GT4Py backend, e.g. numpy, gt:cpu_ifirst (default numpy)")
    run.add_argument("--dt", type=finite_number(0),
                     help="time step in s, FV3's dt_atmos (default 1200; 3-D cases 1800; "
                     "0: the largest with the Courant number --courant)")
    run.add_argument(
        "--courant", type=positive_number,
        help="target Courant number when dt is automatic (shallow water: of the acoustic step, "
        "for |V| + sqrt(g h))",
    )
    run.add_argument(
        "--n-split", dest="n_split", type=whole_number(1),
        help="FV3's n_split: acoustic steps per time step (default 4)",
    )
    run.add_argument(
        "--constants", choices=["williamson", "ufs", "gfdl"],
        help="physical constants: ufs (GFS/UFS, as the Fortran reference runs; the default), "
        "williamson (Williamson et al. 1992), gfdl (FMS's default)",
    )
    run.add_argument(
        "--dddmp", type=finite_number(0),
        help="FV3's dddmp: Smagorinsky coefficient of the del2 divergence damping (default 0)",
    )
    run.add_argument(
        "--d2-bg", dest="d2_bg", type=finite_number(0),
        help="FV3's d2_bg: background del2 divergence damping (default 0)",
    )
    run.add_argument(
        "--do-vort-damp", dest="do_vort_damp", action=argparse.BooleanOptionalAction,
        help="FV3's do_vort_damp: del-(2 min(2, nord) + 2) flux damping of depth and vorticity "
        "with coefficient --vtdm4 (default off)",
    )
    run.add_argument(
        "--vtdm4", type=finite_number(0),
        help="FV3's vtdm4: coefficient of the vorticity damping, dimensionless, below d4_bg "
        "(with --do-vort-damp, default 0)",
    )
    run.add_argument(
        "--beta", type=finite_number(0),
        help="FV3's beta: off-centring of the D-grid pressure gradient, 0 <= beta < 1 (0 fully "
        "backward, FV3's proper range 0-0.45; default 0)",
    )
    run.add_argument(
        "--nord", type=int, choices=[0, 1, 2, 3],
        help="FV3's nord, the divergence damping order: 0 = del2, 1 = del4, 2 = del6 (the "
        "default), 3 = del8",
    )
    run.add_argument(
        "--d4-bg", dest="d4_bg", type=finite_number(0),
        help="FV3's d4_bg: coefficient of the higher-order divergence damping (nord >= 1), "
        "dimensionless, 0..0.16 (default 0.12)",
    )
    run.add_argument("--hord", type=int, help="PPM scheme (FV3's hord): 5, 6 (unlimited), 8 "
                     "(Lin 2004 monotone) or 10 (Huynh-type constraint)")
    run.add_argument(
        "--alpha", type=finite_number(),
        help="flow angle to the polar axis in radians, TC1 and TC2 (1.5208 = over the corners)",
    )
    run.add_argument(
        "--print-freq", dest="print_freq", type=int, metavar="HOURS",
        help="FV3's print_freq: hours between diagnostic printouts (0 none, -n every n steps)",
    )
    run.add_argument(
        "--tuning-db", dest="tuning_db", type=Path, metavar="PATH",
        help="builds each stencil that has an applied schedule in this tuning database with it "
        "(`stratoflow tune apply STENCIL --db PATH`); default: no tuned schedules",
    )
    run.add_argument(
        "--output", type=Path, metavar="FILE.nc",
        help="write the final state to this netCDF file (its folder is checked before the run; "
        "if the write still fails, the result is kept as stratoflow-rescue-<time>-<name> in the "
        "current folder or $TMPDIR and the error says where)",
    )
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


#: the options of `fv3 run` that set an FV3Config key of the same name
CONFIG_OPTIONS = ("case", "resolution", "days", "layout", "backend", "dt", "courant", "hord",
                  "alpha", "n_split", "dddmp", "nord", "d4_bg", "constants", "d2_bg", "do_vort_damp", "vtdm4", "beta", "print_freq", "nz",
                  "k_split", "checker_tr", "consv_te", "hydrostatic", "a_imp")  # fmt: skip
#: the days of JW06's figures that `fv3 run --case baroclinic --output` draws
BAROCLINIC_PLOT_DAYS = (7.0, 9.0, 10.0)


def _config(args: argparse.Namespace):
    """The run's FV3Config: from --namelist or --config (never both), options on top."""
    from fv3core.config import FV3Config

    options = {k: getattr(args, k) for k in CONFIG_OPTIONS if getattr(args, k) is not None}
    namelist = getattr(args, "namelist", None)
    if namelist is not None:
        if args.config:
            raise WorkflowError(
                f"--namelist {namelist} and --config {args.config}: give one of them (the "
                "namelist describes the whole run; override its settings with options such as "
                "--days or --backend)"
            )
        return FV3Config.from_namelist(namelist, **options)
    base = FV3Config.from_yaml(args.config).to_dict() if args.config else {}
    return FV3Config.from_dict(base | options, source="command line")


def stencil_factory(backend: str, tuning_db: Path | None):
    """The factory a run builds its stencils with: None (fv3core's plain ``StencilFactory``
    of ``backend``) without a tuning database, else a ``TunedStencilFactory`` that builds the
    stencils applied in ``tuning_db`` with their schedules."""
    if tuning_db is None:
        return None
    if tuning_db.is_dir():
        raise WorkflowError(
            f"--tuning-db {tuning_db} is a folder, not a tuning database file; pass the file the "
            "schedules were applied in ('stratoflow tune apply STENCIL --db PATH'; default "
            "~/.cache/stratoflow/tuning.sqlite)"
        )
    if not tuning_db.is_file():
        raise WorkflowError(
            f"--tuning-db {tuning_db}: no such file; pass the tuning database the schedules were "
            "applied in ('stratoflow tune apply STENCIL --db PATH'; default "
            "~/.cache/stratoflow/tuning.sqlite)"
        )
    from mapping.tuning.db import KIND
    from mapping.tuning.errors import TuningError
    from mapping.tuning.factory import TunedStencilFactory
    from stencils.dbfile import identify
    from stencils.errors import DatabaseIdentityError

    try:  # another application's database, or the run database, is a mistake, not damage
        identify(tuning_db, KIND)
    except DatabaseIdentityError as exc:
        raise WorkflowError(f"--tuning-db: {exc}") from None
    try:
        factory = TunedStencilFactory(backend, db=tuning_db)
    except TuningError as exc:  # tuned schedules are optional: a damaged database never stops a run
        log.warning("%s; the run builds every stencil with %s, untuned", exc, backend)
        return None
    if factory.applied:
        log.info("tuned schedules from %s: %s", tuning_db, ", ".join(sorted(factory.applied)))
    else:
        log.warning("%s holds no applied schedules: every stencil is built with %s", tuning_db, backend)
    return factory


def _run(args: argparse.Namespace) -> int:
    """``fv3 run`` (under ``mpiexec`` the CLI aborts the whole job on any rank's failure)."""
    from mapping.cluster.abort import under_mpi

    return _run_case(args, under_mpi())


def _run_case(args: argparse.Namespace, mpi: bool) -> int:
    output = Path(args.output) if args.output else None
    if output is not None:
        from workflows.outputs import check_output_path

        check_output_path(output, "--output", suffixes=NETCDF_SUFFIXES, command="fv3 run")
    config = _config(args)
    _check_backend(config.backend)
    if mpi and args.tuning_db is None:  # a rank: no dace (tuned schedules may name a dace backend)
        from stencils.dace_guard import keep_dace_out

        keep_dace_out(config.backend, f"an MPI rank of 'fv3 run --backend {config.backend}' "
                                      "without --tuning-db")  # fmt: skip
    factory = stencil_factory(config.backend, args.tuning_db)
    if output is not None and config.is_3d:
        _check_days_png(output)
    from fv3core.experiments.driver import run
    from fv3core.output.netcdf import write_netcdf

    # the 3-D cases keep daily fields for the plot of JW06's days
    daily = {"history_every_s": 86400.0} if config.is_3d and output else {}
    result = run(config, factory=factory, mpi=mpi, progress=not args.no_progress,
                 **daily)  # fmt: skip
    if not result.is_root:
        return 0
    if output is not None:
        from workflows.outputs import write_or_rescue

        path = write_or_rescue(output, lambda p: write_netcdf(result, p), command="fv3 run")
        log.info("wrote %s", path)
        if config.is_3d:
            _plot_days(result, path)
    if config.is_3d:
        return _report_3d(config, result)
    d = result.diagnostics
    lines = [
        f"{config.case} C{config.resolution} {result.steps} steps of {result.dt:.1f} s "
        f"({result.seconds:.1f} s, {1e3 * d['seconds_per_step']:.1f} ms/step)"
    ]
    if "l2" in d:
        lines.append(f"  h:    l1 {d['l1']:.4e}  l2 {d['l2']:.4e}  linf {d['linf']:.4e}")
    if "wind_l2" in d:
        lines.append(f"  wind: l1 {d['wind_l1']:.4e}  l2 {d['wind_l2']:.4e}  "
                     f"linf {d['wind_linf']:.4e}")  # fmt: skip
    if "exact_l2" in d:
        lines.append(f"  against the analytic solution (Williamson et al. 1992): h l1 "
                     f"{d['exact_l1']:.4e}  l2 {d['exact_l2']:.4e}  linf {d['exact_linf']:.4e}; "
                     f"wind l1 {d['exact_wind_l1']:.4e}  l2 {d['exact_wind_l2']:.4e}  "
                     f"linf {d['exact_wind_linf']:.4e}")  # fmt: skip
    lines.append(f"  mass change {d['mass_relative_change']:.2e}  h in [{d['h_min']:.4g}, "
                 f"{d['h_max']:.4g}] m")  # fmt: skip
    if "energy_relative_change" in d:
        lines.append(f"  total energy change {d['energy_relative_change']:.3e}  potential "
                     f"enstrophy change {d['enstrophy_relative_change']:.3e}")  # fmt: skip
    sys.stdout.write("\n".join(lines) + "\n")
    return 0 if math.isfinite(d["h_max"]) else 1


def _check_backend(backend: str) -> None:
    """Refuse a backend that is unknown or unusable here before anything is built."""
    from stencils.config import check_backend
    from stencils.errors import StencilError

    try:
        check_backend(backend)
    except StencilError as exc:
        raise WorkflowError(f"fv3 run: --backend {backend}: {exc}") from None


#: the file names `fv3 run --output` writes (xarray's netCDF writer)
NETCDF_SUFFIXES = (".nc", ".nc4")


def _check_days_png(path: Path) -> None:
    """Refuse a 3-D run whose plot of JW06's days, written beside ``path``, cannot be."""
    png = _days_png(path)
    if png.is_dir():
        raise WorkflowError(
            f"fv3 run: --output {path}: the plot it writes beside it, {png}, is a directory; "
            "move it away or give another --output"
        )


def _days_png(path: Path) -> Path:
    """The PNG of JW06's days written beside the netCDF of a 3-D run."""
    return path.with_name(f"{path.stem}_ps_vort850.png")


def _plot_days(result, path: Path) -> None:
    """ps and vort850 at JW06's days 7, 9, 10 (those the run reached; else its end)."""
    import numpy as np

    from fv3core.grid.latlon_regrid import LatLonRegridder
    from fv3core.output.baroclinic_plots import plot_baroclinic_days

    panels = [(t / 86400.0, f["ps"], f["vort850"]) for t, f in result.history]
    days = [d for d in BAROCLINIC_PLOT_DAYS if any(abs(p[0] - d) < 1e-6 for p in panels)]
    levels: dict[str, np.ndarray] = {}
    if not days:  # a short run: its end, with levels spanning its fields rather than JW06's
        end = result.steps * result.dt / 86400.0
        ps, vort = result.fields["ps"] / 100.0, result.fields["vort850"] / 1e-5
        panels.append((end, result.fields["ps"], result.fields["vort850"]))
        days = [end]
        if float(ps.max() - ps.min()) > 1e-9:
            levels["ps_levels"] = np.linspace(float(ps.min()), float(ps.max()), 11)
        if float(np.abs(vort).max()) > 0.0:
            levels["vort_levels"] = np.linspace(-1.0, 1.0, 11) * float(np.abs(vort).max())
    regridder = LatLonRegridder.build(result.lon, result.lat)
    png = _days_png(path)
    cfg = result.config
    plot_baroclinic_days(png, panels, days=days, regridder=regridder, **levels,
                         title=f"stratoflow fv3core {cfg.case} C{cfg.resolution} L{cfg.nz}")  # fmt: skip
    log.info("wrote %s", png)


def _report_3d(config, result) -> int:
    d = result.diagnostics
    lines = [
        f"{config.case} C{config.resolution} L{config.nz} {result.steps} steps of "
        f"{result.dt:.1f} s ({result.seconds:.1f} s, {d['seconds_per_step']:.2f} s/step)",
        f"  ps min {d['ps_min'] / 100:.2f} hPa at ({d['ps_min_lon']:.1f}E, {d['ps_min_lat']:.1f}N)"
        f"  max {d['ps_max'] / 100:.2f} hPa at ({d['ps_max_lon']:.1f}E, {d['ps_max_lat']:.1f}N)",
        f"  dry mass change {d['dry_mass_relative_change']:.2e}  total energy change "
        f"{d['total_energy_relative_change']:.3e} ({d['total_energy_drift_per_day']:.3e}/day)",
        f"  l2(zonal-mean u - u0) {d['u_zonal_mean_l2']:.4e} m/s",
    ]
    tracers = [k[: -len("_mass_change")] for k in d
               if k.endswith("_mass_change") and k != "dry_mass_change"]  # fmt: skip
    lines += [f"  {name} mass change {d[f'{name}_mass_relative_change']:.2e} (relative)"
              if f"{name}_mass_relative_change" in d
              else f"  {name} mass change {d[f'{name}_mass_change']:.2e} kg" for name in tracers]
    sys.stdout.write("\n".join(lines) + "\n")
    return 0 if math.isfinite(d["ps_max"]) else 1


#: the dims of the cubed-sphere fields of `fv3 run --output` that `fv3 plot` draws
PLOT_DIMS = ("time", "tile", "y", "x")


def _plot(args: argparse.Namespace) -> int:
    from fv3core.output.plots import plot_field

    path = Path(args.file)
    out = Path(args.output) if args.output else path.with_name(f"{path.stem}_{args.var}.png")
    _check_plot_input(path, args.var)
    from workflows.outputs import check_output_path

    check_output_path(out, "--output" if args.output else "the default output", suffixes=(".png",), command="fv3 plot")
    try:
        out = plot_field(path, args.var, out)
    except OSError as exc:
        raise WorkflowError(f"fv3 plot: cannot write {out}: {exc.strerror or exc}") from exc
    sys.stdout.write(f"{out}\n")
    return 0


def _check_plot_input(path: Path, var: str) -> None:
    """A WorkflowError naming ``path`` unless it is an fv3core output file holding ``var`` on
    (time, tile, y, x) with lon/lat on (tile, y, x)."""
    import xarray as xr

    made_by = "give a netCDF file written by `stratoflow fv3 run --output FILE.nc`"
    if not path.exists():
        raise WorkflowError(f"fv3 plot: {path}: no such file; {made_by}")
    if path.is_dir():
        raise WorkflowError(f"fv3 plot: {path} is a directory; {made_by}")
    try:
        ds = xr.open_dataset(path)
    except Exception as exc:  # netCDF4/HDF5 and xarray raise many types for foreign files
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if "did not find a match" in reason:
            reason = "no netCDF signature"
        raise WorkflowError(f"fv3 plot: {path} is not a readable netCDF file ({reason}); {made_by}") from exc
    with ds:
        drawable = sorted(n for n, v in ds.data_vars.items() if v.dims == PLOT_DIMS)
        wrong = [f"no {n}" if n not in ds.variables else f"{n} on ({', '.join(ds[n].dims)})"
                 for n in ("lon", "lat") if n not in ds.variables or ds[n].dims != PLOT_DIMS[1:]]
        if "time" not in ds.dims or ds.sizes["time"] == 0:
            wrong.append("no time")
        if wrong or not drawable:
            what = ", ".join(wrong) if wrong else "no field on (time, tile, y, x)"
            raise WorkflowError(
                f"fv3 plot: {path} is not an fv3core output file: it has {what} (fv3 plot needs "
                "lon and lat on (tile, y, x) and fields on (time, tile, y, x)); " + made_by
            )
        if var in ds.coords:
            raise WorkflowError(
                f"fv3 plot: {var!r} of {path} is a coordinate ({ds[var].attrs.get('long_name') or ds[var].attrs.get('standard_name') or 'grid information'}), "
                f"not a field of the run: --var takes one of {', '.join(drawable)}"
            )
        if var not in ds.data_vars:
            raise WorkflowError(
                f"fv3 plot: {path} has no variable {var!r}: --var takes one of {', '.join(drawable)}"
            )
        if ds[var].dims != PLOT_DIMS:
            raise WorkflowError(
                f"fv3 plot: variable {var!r} of {path} has dims ({', '.join(ds[var].dims)}); fv3 "
                f"plot draws fields on (time, tile, y, x): --var takes one of {', '.join(drawable)}"
            )

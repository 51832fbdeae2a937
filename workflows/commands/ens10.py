"""``stratoflow ens10 ...``: ENS-10 sample data, preprocessing, training and evaluation."""

from __future__ import annotations

import argparse
import logging
from collections.abc import Callable
from pathlib import Path

from workflows.commands.argtypes import positive_number, whole_number

log = logging.getLogger("stratoflow.ens10")

#: seeds are whole numbers in 0 .. 2**32 - 1 (numpy's and torch's common range)
SEED_MAX = 2**32 - 1
#: the number of calendar dates a year in ENS-10 (Mondays and Thursdays of 2018)
CALENDAR_DATES = 105
#: the sample generator's truth processes (ens10.sample.TRUTH_PROCESSES; not imported here so
#: that the CLI starts without xarray and scipy)
TRUTH_PROCESSES = ("flow", "local-emos")


def _ens10_checked(check: Callable[[str], object]) -> Callable[[str], object]:
    """An argparse type from an ens10 validator: its ENS10DataError becomes the usage error."""

    def parse(text: str):
        from ens10.errors import ENS10DataError

        try:
            return check(text)
        except ENS10DataError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


def _grid(text: str) -> float:
    from ens10.grid import FINEST_GRID, check_grid

    return check_grid(text, finest=FINEST_GRID)


def _years(text: str) -> tuple[int, int]:
    from ens10.sample import parse_years

    first, last = parse_years(text)
    if not 1900 <= first <= last <= 2100:
        from ens10.errors import ENS10DataError

        raise ENS10DataError(f"years {text!r}: give FIRST-LAST within 1900-2100 (ENS-10: 1998-2017)")
    return first, last


def _levels(text: str) -> tuple[int, ...]:
    """Comma-separated ENS-10 pressure levels in hPa, each once."""
    from ens10 import schema

    allowed = ", ".join(map(str, schema.PRESSURE_LEVELS))
    try:
        levels = tuple(int(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"give comma-separated pressure levels in hPa from {allowed}, not {text!r}"
        ) from None
    unknown = [lv for lv in levels if lv not in schema.PRESSURE_LEVELS]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"{', '.join(map(str, unknown))} hPa: not an ENS-10 pressure level ({allowed})"
        )
    if len(set(levels)) != len(levels):
        raise argparse.ArgumentTypeError(f"give each level once, not {text!r}")
    return levels


def _layouts(text: str) -> tuple[str, ...]:
    names = tuple(v.strip() for v in text.split(","))
    unknown = [n for n in names if n not in ("grib", "netcdf")]
    if unknown or len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(
            f"give grib, netcdf or grib,netcdf, not {text!r}"
        )
    return names


def _make_sample(args: argparse.Namespace) -> int:
    from ens10.errors import ENS10DataError
    from ens10.sample import make_sample

    if args.grib_years is not None and not (
        args.years[0] <= args.grib_years[0] <= args.grib_years[1] <= args.years[1]
    ):
        raise ENS10DataError(
            f"--grib-years {args.grib_years[0]}-{args.grib_years[1]} must lie within --years "
            f"{args.years[0]}-{args.years[1]}"
        )
    kwargs = {"grib_levels": args.grib_levels} if args.grib_levels else {}
    out = make_sample(args.out_dir, grid=args.grid, years=args.years, n_dates=args.dates,
                      seed=args.seed, grib_dates=None if args.grib_dates == 0 else args.grib_dates,
                      grib_years=args.grib_years, layouts=args.layouts, truth=args.truth, **kwargs)
    print(f"sample written to {out} (grib/: raw layout, netcdf/: preprocessed layout)")
    return 0


def _preprocess(args: argparse.Namespace) -> int:
    from ens10.io.convert import preprocess

    files = preprocess(args.raw_dir, args.out_dir, era5_dir=args.era5_dir)
    print(f"{len(files)} files written to {args.out_dir}")
    return 0


def _train(args: argparse.Namespace) -> int:
    from ens10.io.atomic import check_output_dir
    from ens10.io.preprocessed import check_data_dir

    check_data_dir(args.data)  # before torch is imported: a typo fails at once
    check_output_dir(args.out or Path(args.data) / "checkpoints", "checkpoint folder")
    from ens10.train import train

    overrides = {k: v for k, v in {"lr": args.lr, "batch_size": args.batch_size,
                                    "patience": args.patience}.items() if v is not None}
    out = args.out or Path(args.data) / "checkpoints"
    ckpt = train(model=args.model, target=args.target, data_dir=args.data, out_dir=out,
                 epochs=args.epochs, seed=args.seed, resume=not args.no_resume,
                 refit=not args.no_refit, **overrides)
    print(f"checkpoint: {ckpt}")
    return 0


def _evaluate(args: argparse.Namespace) -> int:
    from ens10.errors import ENS10DataError
    from ens10.io.atomic import check_output_dir
    from ens10.io.preprocessed import check_data_dir

    check_data_dir(args.data)  # before torch is imported: a typo fails at once
    check_output_dir(args.out, "evaluation output folder")
    ckpts = list(args.checkpoints)
    if not ckpts:

        ckpt_dir = Path(args.data) / "checkpoints"
        ckpts = sorted(p for p in ckpt_dir.glob("*.pt") if not p.name.endswith(".last.pt"))
        if not ckpts:
            raise ENS10DataError(
                f"no checkpoints given and none in {ckpt_dir}: train one ('stratoflow ens10 "
                "train --data DATA') or pass checkpoint files"
            )
    missing = [str(p) for p in ckpts if not p.is_file()]
    if missing:
        one = len(missing) == 1
        raise ENS10DataError(
            f"checkpoint{'' if one else 's'} {', '.join(missing)} {'does' if one else 'do'} not "
            "exist: train first ('stratoflow ens10 train') or pass the {model}_{target}.pt "
            "files of a checkpoint folder"
        )
    from ens10.evaluate import evaluate

    path = evaluate(args.data, ckpts, args.out, split=args.split)
    print(path.read_text())
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    from ens10 import schema
    from ens10.schema import MODELS

    parser = sub.add_parser(
        "ens10",
        help="ENS-10 ensemble post-processing: sample data, preprocessing, baselines, scores",
        description=(
            "ENS-10 (Ashkboos et al. 2022): correct the 48 h ensemble forecast of Z500, T850 and "
            "T2m, scored against ERA5 with CRPS and EECRPS. Splits: train 1998-2013, validation "
            "2014-2015 (model selection), test 2016-2017."
        ),
    )
    ens = parser.add_subparsers(dest="ens10_command", metavar="ACTION", required=True)

    p = ens.add_parser(
        "make-sample", help="write a small dataset with the real schema and a known truth",
        description=(
            "Write OUT_DIR/grib (raw GRIB1 files output.{pl,sfc}.2018MMDD) and OUT_DIR/netcdf "
            "(ENS10_{pl,sfc}_{mean,std}.nc, ERA5_*.nc, members, EFI and the generator's oracle). "
            "The raw ensemble is biased and under-dispersive by a known, spatially varying amount; "
            "with --truth flow (default) its errors also depend on the flow and a weather regime "
            "and the truth is skewed, so no baseline family contains the generator's oracle."
        ),
    )
    p.add_argument("out_dir", type=Path, metavar="OUT_DIR")
    p.add_argument("--grid", type=_ens10_checked(_grid), default=5.0,
                   help="grid spacing in degrees dividing 180 and 360, >= 0.5 (default 5.0; ENS-10: 0.5)")
    p.add_argument("--years", type=_ens10_checked(_years), default=(1998, 2017),
                   help="initialisation years FIRST-LAST (default 1998-2017)")
    p.add_argument("--dates", type=whole_number(1, CALENDAR_DATES), default=20,
                   help="calendar dates per year, of the 105 Mondays/Thursdays, 1-105 (default 20)")
    p.add_argument("--seed", type=whole_number(0, SEED_MAX), default=2022, help="generator seed (>= 0)")
    p.add_argument("--grib-dates", type=whole_number(0, CALENDAR_DATES), default=2,
                   help="how many of the dates also get raw GRIB files (0 = all; default 2: cfgrib indexes ~2 ms/message)")
    p.add_argument("--grib-years", type=_ens10_checked(_years), default=None,
                   help="years FIRST-LAST written as GRIB, within --years (default: all)")
    p.add_argument("--grib-levels", type=_levels, default=None,
                   help="comma-separated hPa levels in the GRIB pl files (default: all 11)")
    p.add_argument("--layouts", type=_layouts, default=("grib", "netcdf"),
                   help="grib,netcdf (default both)")
    p.add_argument("--truth", choices=TRUTH_PROCESSES, default="flow",
                   help="truth process: flow (default: flow-dependent, skewed, outside every "
                        "baseline family) or local-emos (the oracle is a per-point EMOS)")
    p.set_defaults(handler=_make_sample)

    p = ens.add_parser(
        "preprocess", help="raw GRIB -> mean/std netCDF, members and EFI (reference layout)",
        description=(
            "Convert output.{pl,sfc}.2018MMDD GRIB files in RAW_DIR into ENS10_{pl,sfc}_{mean,std}.nc "
            "(48 h, 500/850 hPa), ENS10_{target}_members.nc and ENS10_{target}_efi.nc in OUT_DIR."
        ),
    )
    p.add_argument("raw_dir", type=Path, metavar="RAW_DIR")
    p.add_argument("out_dir", type=Path, metavar="OUT_DIR")
    p.add_argument("--era5-dir", type=Path, default=None, help="copy ERA5_*.nc targets from here")
    p.set_defaults(handler=_preprocess)

    p = ens.add_parser(
        "train", help="train a baseline on the preprocessed layout",
        description=(
            "The reference split: fit on 1998-2013 with early stopping on the 2014-2015 "
            "carve-out, then refit on all training years 1998-2015 for the best epoch count "
            "(--no-refit: keep the best-validation weights); 2016-2017 stay unseen. Writes CHECKPOINT_DIR/"
            "{model}_{target}.pt (see docs/ens10.md for the format) and resumes from "
            "{model}_{target}.last.pt when present."
        ),
    )
    p.add_argument("--model", required=True, choices=MODELS)
    p.add_argument("--target", required=True, choices=tuple(schema.TARGETS))
    p.add_argument("--data", required=True, type=Path, help="directory of the preprocessed layout")
    p.add_argument("--out", type=Path, default=None, help="checkpoint directory (default DATA/checkpoints)")
    p.add_argument("--epochs", type=whole_number(1), default=30, help="training epochs (>= 1, default 30)")
    p.add_argument("--seed", type=whole_number(0, SEED_MAX), default=0, help="seed (>= 0, default 0)")
    p.add_argument("--lr", type=positive_number, default=None, help="learning rate > 0 (default per model)")
    p.add_argument("--batch-size", type=whole_number(1), default=None,
                   help="initialisations per step (>= 1, default 8)")
    p.add_argument("--patience", type=whole_number(1), default=None,
                   help="early-stopping patience in epochs (>= 1, default 5)")
    p.add_argument("--no-resume", action="store_true", help="start afresh even if a .last.pt exists")
    p.add_argument("--no-refit", action="store_true",
                   help="export the best-validation weights of the 1998-2013 fit instead of "
                        "refitting on 1998-2015")
    p.set_defaults(handler=_train)

    p = ens.add_parser(
        "evaluate", help="score checkpoints on the test years (table, maps, reliability)",
        description="Write scores.md, scores.csv and PNG figures to OUT.",
    )
    p.add_argument("--data", required=True, type=Path, help="directory of the preprocessed layout")
    p.add_argument("--out", required=True, type=Path, help="output directory")
    p.add_argument("--split", default="test", choices=tuple(schema.SPLITS))
    p.add_argument("checkpoints", nargs="*", type=Path,
                   help="checkpoint files (default: DATA/checkpoints/*.pt)")
    p.set_defaults(handler=_evaluate)

    # trained baselines applied as GT4Py stencil programs (ens10.inference needs stencils and
    # mapping, which core ens10 does not)
    from ens10.inference.cli import add_postprocess_parser

    add_postprocess_parser(ens).set_defaults(handler=_postprocess)


def _postprocess(args: argparse.Namespace) -> int:
    """``ens10 postprocess``, with --out checked before the work and a rescue copy should
    writing it fail."""
    from ens10.inference.cli import run_postprocess
    from workflows.outputs import check_output_path, rescue_folders

    check_output_path(args.out, "--out", suffixes=(".nc",), command="ens10 postprocess")
    return run_postprocess(args, rescue_folders=rescue_folders())

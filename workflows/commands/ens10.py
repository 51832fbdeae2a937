"""``stratoflow ens10 ...``: ENS-10 sample data, preprocessing, training and evaluation."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

log = logging.getLogger("stratoflow.ens10")


def _make_sample(args: argparse.Namespace) -> int:
    from ens10.sample import make_sample

    levels = tuple(int(v) for v in args.grib_levels.split(",")) if args.grib_levels else None
    kwargs = {"grib_levels": levels} if levels else {}
    out = make_sample(args.out_dir, grid=args.grid, years=args.years, n_dates=args.dates,
                      seed=args.seed, grib_dates=None if args.grib_dates == 0 else args.grib_dates,
                      grib_years=args.grib_years, layouts=tuple(args.layouts.split(",")), **kwargs)
    print(f"sample written to {out} (grib/: raw layout, netcdf/: preprocessed layout)")
    return 0


def _preprocess(args: argparse.Namespace) -> int:
    from ens10.io.convert import preprocess

    files = preprocess(args.raw_dir, args.out_dir, era5_dir=args.era5_dir)
    print(f"{len(files)} files written to {args.out_dir}")
    return 0


def _train(args: argparse.Namespace) -> int:
    from ens10.train import train

    overrides = {k: v for k, v in {"lr": args.lr, "batch_size": args.batch_size,
                                    "patience": args.patience}.items() if v is not None}
    out = args.out or Path(args.data) / "checkpoints"
    ckpt = train(model=args.model, target=args.target, data_dir=args.data, out_dir=out,
                 epochs=args.epochs, seed=args.seed, resume=not args.no_resume, **overrides)
    print(f"checkpoint: {ckpt}")
    return 0


def _evaluate(args: argparse.Namespace) -> int:
    from ens10.evaluate import evaluate

    ckpts = list(args.checkpoints)
    if not ckpts:
        ckpt_dir = Path(args.data) / "checkpoints"
        ckpts = sorted(p for p in ckpt_dir.glob("*.pt") if not p.name.endswith(".last.pt"))
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
            "The raw ensemble is biased and under-dispersive by a known, spatially varying amount."
        ),
    )
    p.add_argument("out_dir", type=Path, metavar="OUT_DIR")
    p.add_argument("--grid", type=float, default=5.0, help="grid spacing in degrees (default 5.0; ENS-10: 0.5)")
    p.add_argument("--years", default="1998-2017", help="initialisation years FIRST-LAST (default 1998-2017)")
    p.add_argument("--dates", type=int, default=20, help="calendar dates per year, of the 105 Mondays/Thursdays (default 20)")
    p.add_argument("--seed", type=int, default=2022, help="generator seed")
    p.add_argument("--grib-dates", type=int, default=2,
                   help="how many of the dates also get raw GRIB files (0 = all; default 2: cfgrib indexes ~2 ms/message)")
    p.add_argument("--grib-years", default=None, help="years FIRST-LAST written as GRIB (default: all)")
    p.add_argument("--grib-levels", default=None,
                   help="comma-separated hPa levels in the GRIB pl files (default: all 11)")
    p.add_argument("--layouts", default="grib,netcdf", help="grib,netcdf (default both)")
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
            "Train on 1998-2013, select/early-stop on 2014-2015. Writes CHECKPOINT_DIR/"
            "{model}_{target}.pt (see docs/ens10.md for the format) and resumes from "
            "{model}_{target}.last.pt when present."
        ),
    )
    p.add_argument("--model", required=True, choices=MODELS)
    p.add_argument("--target", required=True, choices=tuple(schema.TARGETS))
    p.add_argument("--data", required=True, type=Path, help="directory of the preprocessed layout")
    p.add_argument("--out", type=Path, default=None, help="checkpoint directory (default DATA/checkpoints)")
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--lr", type=float, default=None, help="learning rate (default per model)")
    p.add_argument("--batch-size", type=int, default=None, help="initialisations per step (default 8)")
    p.add_argument("--patience", type=int, default=None, help="early-stopping patience in epochs (default 5)")
    p.add_argument("--no-resume", action="store_true", help="start afresh even if a .last.pt exists")
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

    add_postprocess_parser(ens)

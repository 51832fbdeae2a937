"""``stratoflow ens10 postprocess``: the argument parser and its handler (registered under
``stratoflow ens10`` by :mod:`workflows.commands.ens10`)."""

from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence
from pathlib import Path

from stencils import CPU_BACKENDS

log = logging.getLogger(__name__)

DESCRIPTION = """\
Apply a trained EMOS, MLP or LeNet checkpoint ('stratoflow ens10 train') to ENS-10 forecasts as
a GT4Py stencil program and write the corrected Gaussian (mu, sigma) as CF netCDF.

--data is either the raw GRIB layout (output.{pl,sfc}.2018MMDD: the program computes the
ensemble mean/std from the 10 members) or the preprocessed layout (ENS10_*_{mean,std}.nc).
Times are read lazily, --chunk at a time. Under 'mpiexec -n N' the field is split over N ranks
(lat-lon blocks, halo exchange periodic in longitude) and the result is bitwise the same.

examples:
  stratoflow ens10 postprocess --model ckpt/mlp_t850.pt --data sample/grib --out mlp.nc
  mpiexec -n 4 stratoflow ens10 postprocess --model ckpt/lenet_t850.pt --data sample/grib \\
      --backend gt:cpu_ifirst --layout 2x2 --out lenet.nc
"""


def add_postprocess_parser(ens10_subparsers) -> argparse.ArgumentParser:
    """Add ``postprocess`` to the ``stratoflow ens10`` sub-commands."""
    p = ens10_subparsers.add_parser(
        "postprocess", help="apply a trained baseline to forecasts as a stencil program",
        description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, metavar="CKPT",
                   help="checkpoint from 'stratoflow ens10 train' (emos, emos_global, mlp, lenet)")
    p.add_argument("--data", required=True, metavar="DIR",
                   help="ENS-10 data: raw GRIB directory or preprocessed netCDF directory")
    p.add_argument("--out", required=True, metavar="OUT.nc",
                   help="output netCDF file (written atomically: an older file survives a failure; "
                        "if writing fails mid-run, the result is kept as "
                        "stratoflow-rescue-<time>-<pid>-<name> in the current or temporary folder)")
    p.add_argument("--backend", default="numpy", metavar="B",
                   help=f"GT4Py backend (default numpy; CPU: {', '.join(CPU_BACKENDS)})")
    p.add_argument("--dates", nargs="+", metavar="MMDD", help="raw layout only: calendar dates to read")
    p.add_argument("--years", metavar="FIRST-LAST", help="initialisation years to read, e.g. 2016-2017")
    p.add_argument("--chunk", type=int, default=4, help="times read per chunk (default 4)")
    p.add_argument("--layout", metavar="PxQ",
                   help="MPI ranks along latitude x longitude (default: as square as fits)")
    p.set_defaults(handler=run_postprocess)
    return p


def run_postprocess(args: argparse.Namespace, rescue_folders: Sequence[Path] = ()) -> int:
    from ens10.inference.postprocess import config_from_args, postprocess

    cfg = config_from_args(args.model, args.data, args.out, args.backend, args.dates, args.years,
                           args.chunk, args.layout)
    out = postprocess(cfg, rescue_folders=rescue_folders)
    if out is not None:
        print(f"wrote {out}")
    return 0

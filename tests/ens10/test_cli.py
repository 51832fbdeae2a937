"""The ``stratoflow ens10`` sub-commands (registered on a private parser, so other plug-ins
cannot affect these tests) and the layering rule."""

from __future__ import annotations

import argparse
import subprocess
import sys

import numpy as np
import pytest
import xarray as xr

from ens10 import ENS10DataError, sample
from workflows.commands import ens10 as ens10_command
from workflows.commands.ens10 import TRUTH_PROCESSES
from workflows.errors import is_user_error


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="stratoflow")
    ens10_command.register(parser.add_subparsers(dest="command"))
    return parser


def test_help_lists_the_actions(capsys):
    """``stratoflow ens10 --help`` names make-sample, preprocess, train and evaluate."""
    with pytest.raises(SystemExit):
        _parser().parse_args(["ens10", "--help"])
    out = capsys.readouterr().out
    for action in ("make-sample", "preprocess", "train", "evaluate"):
        assert action in out


def test_make_sample_and_user_errors(tmp_path):
    """make-sample writes the netCDF layout (2 years, 30-degree grid: 7 x 12 points) with the
    chosen truth process;
    training on an empty folder raises the user-facing ENS10DataError naming the missing file."""
    args = _parser().parse_args(["ens10", "make-sample", str(tmp_path / "s"), "--grid", "30",
                                 "--years", "2016-2017", "--dates", "1", "--layouts", "netcdf",
                                 "--truth", "local-emos"])
    assert args.handler(args) == 0
    with xr.open_dataset(tmp_path / "s" / "netcdf" / "ENS10_sfc_mean.nc") as ds:
        assert dict(ds.sizes) == {"time": 2, "lat": 7, "lon": 12}
        assert np.isnan(ds["SSTK"].values).any() and np.isfinite(ds["T2M"].values).all()
    with xr.open_dataset(tmp_path / "s" / "netcdf" / "SAMPLE_t2m_oracle.nc") as ds:
        assert ds.attrs["truth_process"] == "local-emos"
    assert TRUTH_PROCESSES == sample.TRUTH_PROCESSES  # the CLI's copy of the choices
    (tmp_path / "empty").mkdir()
    args = _parser().parse_args(["ens10", "train", "--model", "mlp", "--target", "t2m",
                                 "--data", str(tmp_path / "empty")])
    with pytest.raises(ENS10DataError, match="ENS10_sfc_mean.nc") as err:
        args.handler(args)
    assert is_user_error(err.value)


def test_ens10_imports_neither_stencils_nor_mapping():
    """Layering: importing every ens10 module loads no stencils/mapping module."""
    code = (
        "import sys, ens10, ens10.sample, ens10.train, ens10.evaluate, ens10.io.convert;"
        "bad=[m for m in sys.modules if m.split('.')[0] in ('stencils','mapping')];"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr

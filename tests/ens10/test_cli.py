"""The ``stratoflow ens10`` sub-commands and the layering rule."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import xarray as xr

from workflows.cli import build_parser, main


def test_help_lists_the_actions(capsys):
    """``stratoflow ens10 --help`` names make-sample, preprocess, train and evaluate."""
    parser = build_parser()
    try:
        parser.parse_args(["ens10", "--help"])
    except SystemExit:
        pass
    out = capsys.readouterr().out
    for action in ("make-sample", "preprocess", "train", "evaluate"):
        assert action in out


def test_make_sample_and_user_errors(tmp_path, caplog):
    """make-sample writes the netCDF layout (2 years, 30-degree grid: 7 x 12 points);
    a training run on a directory without data exits 1 with the ENS10DataError message."""
    rc = main(["ens10", "make-sample", str(tmp_path / "s"), "--grid", "30", "--years", "2016-2017",
               "--dates", "1", "--layouts", "netcdf"])
    assert rc == 0
    with xr.open_dataset(tmp_path / "s" / "netcdf" / "ENS10_sfc_mean.nc") as ds:
        assert ds.sizes == {"time": 2, "lat": 7, "lon": 12}
        assert np.isnan(ds["SSTK"].values).any() and np.isfinite(ds["T2M"].values).all()
    rc = main(["ens10", "train", "--model", "mlp", "--target", "t2m", "--data", str(tmp_path / "none")])
    assert rc == 1
    assert "ENS10_sfc_mean.nc" in caplog.text


def test_ens10_imports_neither_stencils_nor_mapping():
    """Layering: importing every ens10 module loads no stencils/mapping module."""
    code = (
        "import sys, ens10, ens10.sample, ens10.train, ens10.evaluate, ens10.io.convert;"
        "bad=[m for m in sys.modules if m.split('.')[0] in ('stencils','mapping')];"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr

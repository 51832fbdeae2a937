"""Bad inputs of the ENS-10 commands and loaders: range-checked options, netCDF dimension names,
checkpoints of the wrong kind, grid or inputs, damaged files and unusable folders."""

from __future__ import annotations

import argparse
import shutil

import numpy as np
import pytest
import torch
import xarray as xr

from ens10 import ENS10DataError, schema
from ens10.baselines.data import load_split
from ens10.evaluate import evaluate
from ens10.grid import grid_axes
from ens10.io.atomic import check_output_dir
from ens10.io.convert import preprocess
from ens10.io.preprocessed import open_preprocessed
from ens10.sample import SampleConfig, make_sample
from ens10.train import TrainConfig, load_checkpoint, train
from tests.ens10.inference.models import random_checkpoint
from workflows.commands import ens10 as ens10_command

GRID = 30.0  # 7 x 12 points


@pytest.fixture(scope="module")
def small_nc(tmp_path_factory):
    """Preprocessed layout on a 30-degree grid, validation and test years, one date a year."""
    out = tmp_path_factory.mktemp("ens10_small")
    make_sample(out, grid=GRID, years=(2014, 2017), n_dates=1, layouts=("netcdf",))
    return out / "netcdf"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="stratoflow")
    ens10_command.register(parser.add_subparsers(dest="command"))
    return parser


def _save_checkpoint(ckpt: dict, path):
    torch.save(ckpt, path)
    return path


SAMPLE = ["ens10", "make-sample", "out"]
TRAIN = ["ens10", "train", "--model", "emos", "--target", "t850", "--data", "d"]


BAD_OPTIONS = [
    (SAMPLE + ["--grid", "0"], ["--grid", "positive"]),
    (SAMPLE + ["--grid", "-5"], ["--grid", "positive"]),
    (SAMPLE + ["--grid", "nan"], ["--grid", "positive"]),
    (SAMPLE + ["--grid", "7"], ["--grid", "divide 180 and 360"]),
    (SAMPLE + ["--grid", "0.25"], ["--grid", "finer than"]),
    (SAMPLE + ["--grib-levels", "500,x"], ["--grib-levels", "'500,x'"]),
    (SAMPLE + ["--grib-levels", "500,450"], ["--grib-levels", "450 hpa"]),
    (SAMPLE + ["--grib-levels", "500,500"], ["--grib-levels", "once"]),
    (SAMPLE + ["--dates", "0"], ["--dates", "from 1 to 105"]),
    (SAMPLE + ["--dates", "106"], ["--dates", "from 1 to 105"]),
    (SAMPLE + ["--grib-dates", "-1"], ["--grib-dates", "from 0 to 105"]),
    (SAMPLE + ["--seed", "-1"], ["--seed", "from 0"]),
    (SAMPLE + ["--years", "2017-1998"], ["--years", "first <= last"]),
    (SAMPLE + ["--years", "1998-x"], ["--years", "first-last"]),
    (SAMPLE + ["--layouts", "nc"], ["--layouts", "'nc'"]),
    (TRAIN + ["--lr", "-1"], ["--lr", "positive"]),
    (TRAIN + ["--lr", "nan"], ["--lr", "positive"]),
    (TRAIN + ["--lr", "inf"], ["--lr", "positive"]),
    (TRAIN + ["--epochs", "0"], ["--epochs", ">= 1"]),
    (TRAIN + ["--epochs", "-3"], ["--epochs", ">= 1"]),
    (TRAIN + ["--batch-size", "0"], ["--batch-size", ">= 1"]),
    (TRAIN + ["--patience", "0"], ["--patience", ">= 1"]),
    (TRAIN + ["--seed", "-1"], ["--seed", "from 0"]),
    (TRAIN + ["--epochs", "2.5"], ["--epochs", "whole number"]),
]


@pytest.mark.parametrize(("argv", "words"), BAD_OPTIONS,
                         ids=[f"{a[1]}{' '.join(a[-2:])}" for a, _ in BAD_OPTIONS])
def test_numeric_options_are_refused_by_name(argv, words, capsys):
    """Each bad value of a numeric ens10 option is an argparse usage error (exit status 2)
    whose message names the option and the accepted range."""
    with pytest.raises(SystemExit) as exc:
        _parser().parse_args(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err.lower()
    assert f"argument {words[0]}:" in err
    for w in words[1:]:
        assert w in err


def test_api_checks_match_the_options():
    """The Python API refuses the same values with ENS10DataError (a zero grid used to raise
    ZeroDivisionError); valid values still construct."""
    for kwargs in ({"grid": 0.0}, {"grid": float("nan")}, {"grid": 0.1}, {"seed": -1},
                   {"grib_levels": ()}, {"grib_dates": 0}, {"years": (2000, 2005),
                                                             "grib_years": (1990, 1991)}):
        with pytest.raises(ENS10DataError):
            SampleConfig(**kwargs)
    with pytest.raises(ENS10DataError, match="grid spacing 0"):
        grid_axes(0.0)
    assert SampleConfig(grid=90.0, grib_levels=(500,)).grid == 90.0
    for kwargs in ({"lr": -1.0}, {"lr": float("nan")}, {"lr": True}, {"epochs": 0},
                   {"patience": 0}, {"batch_size": -2}, {"seed": -1}, {"hidden": 0}):
        with pytest.raises(ENS10DataError, match=next(iter(kwargs))):
            TrainConfig(model="mlp", target="t850", **kwargs)
    assert TrainConfig(model="mlp", target="t850", lr=1e-3, epochs=np.int64(2)).learning_rate == 1e-3


def _rename_dims(src, dst, mapping: dict[str, str]) -> None:
    """Copy every netCDF file of ``src`` to ``dst`` with its dims renamed by ``mapping``."""
    dst.mkdir()
    for path in src.glob("*.nc"):
        with xr.open_dataset(path) as ds:
            ds.load().rename({k: v for k, v in mapping.items() if k in ds.dims}).to_netcdf(
                dst / path.name)


def test_latitude_longitude_dims_load_like_lat_lon(small_nc, tmp_path):
    """A preprocessed layout whose files use latitude/longitude (as some real ENS-10 files do)
    gives exactly the arrays of the lat/lon files, for a pressure-level and a surface target."""
    alt = tmp_path / "latlong"
    _rename_dims(small_nc, alt, {"lat": "latitude", "lon": "longitude"})
    with xr.open_dataset(alt / "ENS10_pl_mean.nc") as ds:
        assert ds["Z"].dims == ("time", "plev", "latitude", "longitude")
    for target in ("t850", "t2m"):
        a = load_split(small_nc, target, "test", members=True)
        b = load_split(alt, target, "test", members=True)
        assert a.inputs == b.inputs
        for name in ("predictors", "mean", "std", "obs", "members", "lat", "lon", "times"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


def test_other_dim_names_name_file_variable_and_dims(small_nc, tmp_path):
    """Dims other than lat/lon or latitude/longitude: ENS10DataError naming the file, the
    variable and the expected dims."""
    alt = tmp_path / "xy"
    _rename_dims(small_nc, alt, {"lat": "y", "lon": "x"})
    with pytest.raises(ENS10DataError) as err:
        open_preprocessed(alt, "pl", "mean", variables=["z"])
    msg = str(err.value)
    assert "ENS10_pl_mean.nc" in msg and "variable Z" in msg
    assert "(time, plev, y, x)" in msg and "(time, plev, lat, lon)" in msg


def test_evaluate_refuses_a_training_state(small_nc, tmp_path):
    """A .last.pt (training state) passed to evaluate names itself and the model file to pass."""
    _, ckpt = random_checkpoint("emos", step=GRID)
    last = _save_checkpoint({"config": ckpt["config"], "state_dict": ckpt["state_dict"],
                             "optimizer": {}, "state": {"epoch": 1}}, tmp_path / "emos_t850.last.pt")
    with pytest.raises(ENS10DataError) as err:
        evaluate(small_nc, [last], tmp_path / "scores")
    assert "training state" in str(err.value)
    assert str(tmp_path / "emos_t850.pt") in str(err.value)
    assert not (tmp_path / "scores").exists()


def test_evaluate_refuses_a_checkpoint_of_another_grid_or_inputs(small_nc, tmp_path):
    """A checkpoint trained on a 10-degree grid (19 x 36) against 30-degree data (7 x 12), and
    one whose predictor list differs from the data's, are ENS10DataErrors naming the checkpoint,
    both grids / the differing input; the matching checkpoint scores (control)."""
    _, coarse = random_checkpoint("emos", step=10.0)
    path = _save_checkpoint(coarse, tmp_path / "emos_t850.pt")
    with pytest.raises(ENS10DataError) as err:
        evaluate(small_nc, [path], tmp_path / "scores")
    msg = str(err.value)
    assert str(path) in msg and "19 x 36" in msg and "7 x 12" in msg
    _, ckpt = random_checkpoint("emos", step=GRID)
    ckpt["inputs"] = [n if n != "Q_mean" else "R_mean" for n in ckpt["inputs"]]
    path = _save_checkpoint(ckpt, tmp_path / "inputs.pt")
    with pytest.raises(ENS10DataError, match=r"missing \['R_mean'\], extra \['Q_mean'\]"):
        evaluate(small_nc, [path], tmp_path / "scores")
    _, good = random_checkpoint("emos", step=GRID)
    md = evaluate(small_nc, [_save_checkpoint(good, tmp_path / "good.pt")], tmp_path / "scores")
    assert "| t850 | emos |" in md.read_text()


def test_damaged_checkpoints_name_the_file(tmp_path):
    """Truncated and non-torch checkpoints, and a torch file that is not a checkpoint, are
    ENS10DataErrors naming the file and what is wrong."""
    _, ckpt = random_checkpoint("emos", step=GRID)
    good = _save_checkpoint(ckpt, tmp_path / "good.pt")
    assert load_checkpoint(good)["model"] == "emos"
    trunc = tmp_path / "trunc.pt"
    trunc.write_bytes(good.read_bytes()[:2000])
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"not a checkpoint\n" * 20)
    tensor = _save_checkpoint(torch.zeros(3), tmp_path / "tensor.pt")
    for path, words in ((trunc, "damaged or truncated"), (garbage, "not a PyTorch checkpoint"),
                        (tensor, "needs keys"), (tmp_path / "none.pt", "does not exist")):
        with pytest.raises(ENS10DataError) as err:
            load_checkpoint(path)
        assert str(path) in str(err.value) and words in str(err.value)


def test_damaged_netcdf_and_missing_folders_name_them(small_nc, tmp_path):
    """A truncated and a garbage netCDF file name themselves; a missing data folder is named by
    evaluate and train; a folder of raw GRIB files passed as preprocessed data says so."""
    bad = tmp_path / "bad"
    shutil.copytree(small_nc, bad)
    data = (bad / "ENS10_pl_mean.nc").read_bytes()
    (bad / "ENS10_pl_mean.nc").write_bytes(data[: len(data) // 2])
    (bad / "ENS10_pl_std.nc").write_bytes(b"garbage" * 100)
    for stat in ("mean", "std"):
        with pytest.raises(ENS10DataError, match=f"ENS10_pl_{stat}.nc.*truncated or not netCDF"):
            open_preprocessed(bad, "pl", stat)
    _, ckpt = random_checkpoint("emos", step=GRID)
    path = _save_checkpoint(ckpt, tmp_path / "emos_t850.pt")
    with pytest.raises(ENS10DataError, match="data folder .*nowhere does not exist"):
        evaluate(tmp_path / "nowhere", [path], tmp_path / "scores")
    with pytest.raises(ENS10DataError, match="data folder .*nowhere does not exist"):
        train("emos", "t850", tmp_path / "nowhere", tmp_path / "ck", epochs=1)
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / schema.raw_file_name("pl", "0101")).write_bytes(b"")
    with pytest.raises(ENS10DataError, match="raw GRIB layout"):
        open_preprocessed(raw, "pl", "mean")


def test_output_folders_are_checked_before_the_work(small_nc, tmp_path):
    """An output folder that is a file, or below a file, is refused before anything is written;
    preprocess names every missing ERA5 file and creates no output folder."""
    afile = tmp_path / "afile"
    afile.write_text("x")
    with pytest.raises(ENS10DataError, match="afile is a file"):
        check_output_dir(afile)
    with pytest.raises(ENS10DataError, match="afile is a file, not a folder"):
        check_output_dir(afile / "sub")
    check_output_dir(tmp_path / "new" / "deeper")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]
    with pytest.raises(ENS10DataError, match="afile is a file"):
        make_sample(afile, grid=90.0, years=(2016, 2016), n_dates=1, layouts=("netcdf",))
    raw = tmp_path / "raw"
    raw.mkdir()
    for kind in ("pl", "sfc"):
        (raw / schema.raw_file_name(kind, "0101")).write_bytes(b"")
    with pytest.raises(ENS10DataError) as err:
        preprocess(raw, tmp_path / "pre", era5_dir=tmp_path)
    for t in schema.TARGETS.values():
        assert t.era5_file in str(err.value)
    assert not (tmp_path / "pre").exists()


def test_preprocess_refuses_pl_and_sfc_files_of_different_years(sample_grib, tmp_path):
    """A pl file cut at a message boundary after its first year (2016 of 2016-2017) is still a
    valid GRIB file; preprocess compares it with the sfc file of the same date and names both."""
    raw = tmp_path / "raw"
    shutil.copytree(sample_grib / "grib", raw)
    pl = next(raw.glob("output.pl.*"))
    data = pl.read_bytes()
    cut = data.index(b"GRIB", len(data) // 2)  # the sample writes each file year by year
    assert data[cut - 4 : cut] == b"7777"
    pl.write_bytes(data[:cut])
    with pytest.raises(ENS10DataError) as err:
        preprocess(raw, tmp_path / "pre")
    msg = str(err.value)
    assert pl.name in msg and "[2016]" in msg and "[2016, 2017]" in msg
    assert pl.name.replace(".pl.", ".sfc.") in msg

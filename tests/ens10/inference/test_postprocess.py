"""``stratoflow ens10 postprocess`` on sample data: CF netCDF output vs PyTorch, and under mpiexec."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import xarray as xr

from ens10 import open_raw
from ens10.errors import ENS10DataError
from ens10.inference import ExportError
from ens10.inference.cli import add_postprocess_parser
from tests.ens10.inference.models import random_checkpoint, torch_reference

ROOT = Path(__file__).resolve().parents[3]


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="stratoflow ens10")
    add_postprocess_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(["postprocess", *argv])


@pytest.fixture(scope="module")
def mlp_ckpt(tmp_path_factory):
    net, ckpt = random_checkpoint("mlp", hidden=4)
    path = tmp_path_factory.mktemp("ckpt") / "mlp_t850.pt"
    torch.save(ckpt, path)
    return net, ckpt, path


def raw_members(grib_dir: Path, variables, years=(2016, 2017)) -> list[dict]:
    ds = open_raw(grib_dir, "pl", variables=[v.lower() for v in variables], levels=[850],
                  steps=[48], years=years).isel(step=0).sel(isobaricInhPa=850)
    out = []
    for t in range(ds.sizes["time"]):
        out.append({f"{v}_m{k}": ds[v.lower()].isel(time=t, number=k).values.astype(np.float64)
                    for v in variables for k in range(ds.sizes["number"])})
    return out


def test_postprocess_raw_grib_matches_pytorch(sample_grib, mlp_ckpt, tmp_path):
    """MLP over the raw GRIB members: the written mu/sigma equal PyTorch (float64) fed the
    numpy ensemble mean/std of the same GRIB members, within 1e-12 of their magnitude."""
    net, ckpt, path = mlp_ckpt
    out = tmp_path / "mlp.nc"
    args = parse(["--model", str(path), "--data", str(sample_grib / "grib"), "--out", str(out),
                  "--chunk", "1"])
    assert args.handler(args) == 0
    ds = xr.open_dataset(out)
    assert ds.attrs["Conventions"] == "CF-1.8" and ds["mu"].attrs["units"] == "K"
    assert ds["mu"].dims == ("time", "lat", "lon") and ds.sizes["time"] == 2
    variables = ["Z", "T", "Q", "W", "D", "U", "V"]
    for t, fields in enumerate(raw_members(sample_grib / "grib", variables)):
        ref_mu, ref_sigma = torch_reference(net, ckpt, fields)
        np.testing.assert_allclose(ds["mu"].values[t], ref_mu, rtol=0, atol=1e-12 * np.abs(ref_mu).max())
        np.testing.assert_allclose(ds["sigma"].values[t], ref_sigma, rtol=0,
                                   atol=1e-12 * np.abs(ref_sigma).max())
    assert not list(tmp_path.glob(".*.tmp")), "temporary file left behind"


def test_postprocess_preprocessed_layout(sample_grib, tmp_path):
    """Local EMOS on the preprocessed mean/std files vs PyTorch (float64) fed the same file
    values, within 1e-12 of the magnitude."""
    net, ckpt = random_checkpoint("emos")
    path = tmp_path / "emos_t850.pt"
    torch.save(ckpt, path)
    out = tmp_path / "emos.nc"
    args = parse(["--model", str(path), "--data", str(sample_grib / "netcdf"), "--out", str(out)])
    assert args.handler(args) == 0
    got = xr.open_dataset(out)
    mean = xr.open_dataset(sample_grib / "netcdf" / "ENS10_pl_mean.nc")["T"].sel(plev=85000.0)
    std = xr.open_dataset(sample_grib / "netcdf" / "ENS10_pl_std.nc")["T"].sel(plev=85000.0)
    mean, std = mean.sortby("lat"), std.sortby("lat")
    with torch.no_grad():
        mu, sigma = net.double()(None, torch.from_numpy(mean.values.astype(np.float64)),
                                 torch.from_numpy(std.values.astype(np.float64)))
    np.testing.assert_allclose(got["mu"].values, mu.numpy(), rtol=0, atol=1e-12 * float(mu.abs().max()))
    np.testing.assert_allclose(got["sigma"].values, sigma.numpy(), rtol=0,
                               atol=1e-12 * float(sigma.abs().max()))


def test_postprocess_errors_name_the_problem(sample_grib, mlp_ckpt, tmp_path):
    """Wrong --data, wrong suffix: ExportError naming the argument; a checkpoint of an
    architecture that is none of the six baselines ('persistence'): ENS10DataError naming it."""
    _, _, path = mlp_ckpt
    with pytest.raises(ExportError, match="--data"):
        args = parse(["--model", str(path), "--data", str(tmp_path), "--out", str(tmp_path / "x.nc")])
        args.handler(args)
    with pytest.raises(ExportError, match="--out"):
        args = parse(["--model", str(path), "--data", str(sample_grib / "grib"), "--out", "x.txt"])
        args.handler(args)
    _, ckpt = random_checkpoint("mlp", hidden=4)
    torch.save(dict(ckpt, model="persistence"), tmp_path / "persistence.pt")
    with pytest.raises(ENS10DataError, match="'persistence'"):
        args = parse(["--model", str(tmp_path / "persistence.pt"), "--data", str(sample_grib / "grib"),
                      "--out", str(tmp_path / "u.nc")])
        args.handler(args)


def test_postprocess_under_mpiexec_is_bitwise_equal(sample_grib, mlp_ckpt, tmp_path):
    """mpiexec -n 2 with the latitude split (19 rows: uneven) writes exactly the single-process
    file's values (np.array_equal)."""
    _, _, path = mlp_ckpt
    single = tmp_path / "single.nc"
    args = parse(["--model", str(path), "--data", str(sample_grib / "grib"), "--out", str(single)])
    args.handler(args)
    multi = tmp_path / "mpi.nc"
    code = ("import sys, argparse; from ens10.inference.cli import add_postprocess_parser as a; "
            "p = argparse.ArgumentParser(); a(p.add_subparsers()); "
            "n = p.parse_args(sys.argv[1:]); sys.exit(n.handler(n))")
    mpiexec = str(Path(sys.executable).parent / "mpiexec")
    cmd = [mpiexec, "-n", "2", sys.executable, "-c", code, "postprocess", "--model", str(path),
           "--data", str(sample_grib / "grib"), "--out", str(multi), "--layout", "2x1"]
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert res.returncode == 0, res.stderr[-3000:]
    a, b = xr.open_dataset(single), xr.open_dataset(multi)
    assert np.array_equal(a["mu"].values, b["mu"].values)
    assert np.array_equal(a["sigma"].values, b["sigma"].values)


def test_postprocess_full_disk_mid_run_keeps_the_result(sample_grib, mlp_ckpt, tmp_path,
                                                        monkeypatch, caplog):  # fmt: skip
    """`stratoflow ens10 postprocess` whose output folder fills up after the first of two
    times: exit 1, the error names --out and the rescue file in the current folder, whose
    mu/sigma equal those of an undisturbed run exactly; the older output is intact."""
    from ens10.inference.streamed_output import StreamedOutput
    from workflows.cli import main

    _, _, path = mlp_ckpt
    argv = ["ens10", "postprocess", "--model", str(path), "--data", str(sample_grib / "grib"),
            "--chunk", "1", "--out"]  # fmt: skip
    assert main([*argv, str(tmp_path / "ref.nc")]) == 0
    out_dir, here = tmp_path / "out", tmp_path / "here"
    out_dir.mkdir(), here.mkdir()
    (out_dir / "pp.nc").write_bytes(b"older")
    store = StreamedOutput._store

    def full_disk(self, t, mu, sigma):
        if self.tmp.parent == out_dir and t >= 1:
            raise OSError(28, "No space left on device", str(self.tmp))
        store(self, t, mu, sigma)

    monkeypatch.setattr(StreamedOutput, "_store", full_disk)
    monkeypatch.chdir(here)
    assert main([*argv, str(out_dir / "pp.nc")]) == 1
    (rescue,) = here.glob("stratoflow-rescue-*-pp.nc")
    assert str(rescue) in caplog.text and "No space left on device" in caplog.text
    ref, got = xr.load_dataset(tmp_path / "ref.nc"), xr.load_dataset(rescue)
    for name in ("mu", "sigma"):
        np.testing.assert_array_equal(got[name].values, ref[name].values)
    assert (out_dir / "pp.nc").read_bytes() == b"older" and not list(out_dir.glob(".*.tmp"))

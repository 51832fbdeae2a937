"""The Fortran shallow-water rerun of ``stratoflow bench fv3`` (benchmarks.fortran_rerun) without a
Fortran build: a stand-in ``mpirun`` prints a hand-typed FMS clock summary (FMS_TAIL:
FV_DYNAMICS 8.0 s) and writes a netCDF tile file; the stored run beside it says 16.0 s. The
reference for every figure is those hand-typed values."""

from __future__ import annotations

import json
import stat

import numpy as np
import pytest
import xarray as xr

from benchmarks.common import BenchmarkError
from benchmarks.fortran_rerun import output_difference, rerun_reference
from benchmarks.fv3 import fortran_peer, markdown
from tests.benchmarks.test_fv3_bench import FMS_TAIL, NAMELIST, _fake_payload


def _tile(path, h: np.ndarray) -> None:
    xr.Dataset({"h": (("time", "y", "x"), h), "ps": (("y", "x"), h[0] * 2)}).to_netcdf(path)


def _stored_run(tmp_path, h: np.ndarray):
    """A run folder as ../shared/fv3-reference holds them, its clock twice the stand-in's."""
    run = tmp_path / "tc2_C12_d1"
    run.mkdir()
    (run / "input.nml").write_text(NAMELIST)
    for name in ("diag_table", "field_table"):
        (run / name).write_text(f"{name}\n")
    (run / "stdout.txt").write_text(FMS_TAIL.replace("8.0000", "16.0000"))
    _tile(run / "atmos_out.tile1.nc", h)
    return run


def _fake_model(tmp_path, h: np.ndarray):
    """``fv3_sw.x`` stand-in: ``mpirun`` prints FMS_TAIL and leaves a tile file holding ``h``."""
    tail, tile = tmp_path / "tail.txt", tmp_path / "made.nc"
    tail.write_text(FMS_TAIL)
    _tile(tile, h)
    exe = tmp_path / "fv3_sw.x"
    exe.write_text("#!/bin/sh\nexit 0\n")
    mpirun = tmp_path / "mpirun"
    mpirun.write_text(f"#!/bin/sh\ncp '{tile}' atmos_out.tile1.nc\ncat '{tail}'\n")
    for f in (exe, mpirun):
        f.chmod(f.stat().st_mode | stat.S_IXUSR)
    return exe, mpirun


H = np.arange(24.0).reshape(2, 3, 4)


def test_a_rerun_gives_its_own_clocks_and_compares_its_output(tmp_path) -> None:
    """Reference: the rerun's FV_DYNAMICS is the stand-in's 8.0 s over 1 day / 1200 s x n_split
    2 = 144 acoustic steps, not the stored 16.0 s; identical files compare equal (2 variables,
    24 + 12 values)."""
    run = _stored_run(tmp_path, H)
    exe, mpirun = _fake_model(tmp_path, H)
    out = rerun_reference(run, exe, mpirun)
    assert out["run"]["clocks"]["FV_DYNAMICS"]["seconds"] == 8.0
    assert out["run"]["per_acoustic_step_s"]["FV_DYNAMICS"] == pytest.approx(8.0 / 144)
    assert out["output_vs_reference"] == {"max_abs_difference": 0.0, "values": 36,
                                          "variables": 2, "files": 1, "missing": [],
                                          "identical": True}  # fmt: skip
    assert out["run"]["run"] == "tc2_C12_d1 (rerun here)"
    json.dumps(out)


def test_a_different_output_is_measured_not_hidden(tmp_path) -> None:
    """Reference: one value changed by 0.5 (h) and so 1.0 in ps = 2 h: the largest difference
    is 1.0; a file the rerun did not write is listed as missing."""
    run = _stored_run(tmp_path, H)
    changed = H.copy()
    changed[0, 1, 2] += 0.5
    exe, mpirun = _fake_model(tmp_path, changed)
    diff = rerun_reference(run, exe, mpirun)["output_vs_reference"]
    assert diff["max_abs_difference"] == 1.0 and not diff["identical"]
    _tile(run / "atmos_out.tile2.nc", H)
    other = tmp_path / "other"
    other.mkdir()
    _tile(other / "atmos_out.tile1.nc", H)
    diff = output_difference(other, run)
    assert diff["missing"] == ["atmos_out.tile2.nc"] and not diff["identical"]


def test_a_missing_executable_is_named(tmp_path) -> None:
    run = _stored_run(tmp_path, H)
    with pytest.raises(BenchmarkError, match="--fortran-sw-exe .*nope.x does not exist.*build.sh"):
        rerun_reference(run, tmp_path / "nope.x", tmp_path / "mpirun")


def test_the_peer_ratio_is_to_the_reruns(tmp_path) -> None:
    """FV3's scheme at C12 on numpy, in one process, against two stand-in reruns (8.0 s / 144
    each) of a stored run that says 16.0 s: the ratio is our acoustic step over 8.0 / 144; the
    page shows both reruns, their mean as the reference and the stored run for context."""
    run = _stored_run(tmp_path, H)
    exe, mpirun = _fake_model(tmp_path, H)
    peer = fortran_peer(run, "numpy", repeats=1, mpi=False, rerun=(exe, mpirun))
    assert peer["fortran_acoustic_step_s"] == pytest.approx(8.0 / 144)
    assert peer["fortran"]["per_acoustic_step_s"]["FV_DYNAMICS"] == pytest.approx(16.0 / 144)
    (row,) = peer["rows"]
    assert row["ratio_vs_fortran"] == pytest.approx(row["acoustic_step_s"] / (8.0 / 144))
    payload = {**_fake_payload(), "fortran_peer": json.loads(json.dumps(peer))}
    text = markdown(payload)
    assert "| GFDL Fortran FV3, rerun here before ours, `FV_DYNAMICS` clock | 6 MPI |" in text
    assert "rerun here after ours" in text
    assert "| GFDL Fortran FV3, the reruns' mean `FV_DYNAMICS` | 6 MPI | gfortran -O2 | 111.11 | **55.56** |  | 1 (reference) |" in text
    assert "| GFDL Fortran FV3, the stored run, `FV_DYNAMICS` clock | 6 MPI | gfortran -O2 | 222.22 | **111.11** |  |  |" in text
    assert "equals the stored run's bit for bit (2 variables of 1 `atmos_out` tile files" in text


def test_missing_values_compare_equal_only_when_both_miss(tmp_path) -> None:
    """Reference: NaN at the same place in both files is equal (difference 0); NaN on one side
    only makes the largest difference NaN, and the files are not identical."""
    nan_h = H.copy()
    nan_h[1, 2, 3] = np.nan
    a, b, c = (tmp_path / n for n in "abc")
    for folder, h in ((a, nan_h), (b, nan_h), (c, H)):
        folder.mkdir()
        _tile(folder / "atmos_out.tile1.nc", h)
    same = output_difference(b, a)
    assert same["max_abs_difference"] == 0.0 and same["identical"]
    one_sided = output_difference(c, a)
    assert np.isnan(one_sided["max_abs_difference"]) and not one_sided["identical"]

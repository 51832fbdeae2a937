"""The post-processing output under failing writes (ens10.inference.streamed_output): a full
disk (ENOSPC, or netCDF4's RuntimeError) in the output folder mid-run, a rename that fails, and
no folder at all that takes the result. The reference is the arrays written (exact equality
of the float64 values read back), and the older output file byte for byte."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from ens10.inference.errors import ExportError
from ens10.inference.streamed_output import RescuedOutput, StreamedOutput

NT, NY, NX = 4, 3, 5
FIELDS = np.random.default_rng(7).normal(size=(2, NT, NY, NX))


def skeleton(path: Path) -> None:
    empty = np.full((NT, NY, NX), np.nan)
    xr.Dataset({v: (("time", "lat", "lon"), empty) for v in ("mu", "sigma")},
               coords={"time": np.arange(NT)}).to_netcdf(path, engine="netcdf4")  # fmt: skip


def fail_in(folder: Path, monkeypatch, from_time: int, error: str = "enospc") -> None:
    """Every write of time >= from_time into a file in ``folder`` fails as on a full disk."""
    store = StreamedOutput._store

    def failing(self, t, mu, sigma):
        if self.tmp.parent == folder and t >= from_time:
            if error == "enospc":
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self.tmp))
            raise RuntimeError("NetCDF: HDF error")
        store(self, t, mu, sigma)

    monkeypatch.setattr(StreamedOutput, "_store", failing)


def write_all(path: Path, rescue_folders: list[Path]) -> Path:
    with StreamedOutput(path, skeleton, rescue_folders) as out:
        for t in range(NT):
            out.write(t, FIELDS[0, t], FIELDS[1, t])
        return out.finish()


def assert_holds_all_times(path: Path) -> None:
    ds = xr.load_dataset(path)
    np.testing.assert_array_equal(ds["mu"].values, FIELDS[0])
    np.testing.assert_array_equal(ds["sigma"].values, FIELDS[1])


def leftovers(*folders: Path) -> list[Path]:
    return [p for folder in folders for p in folder.glob(".*.tmp")]


def test_plain_write_renames_into_place(tmp_path) -> None:
    out = tmp_path / "out" / "pp.nc"
    assert write_all(out, []) == out
    assert_holds_all_times(out)
    assert not leftovers(out.parent)


@pytest.mark.parametrize("error", ["enospc", "hdf"])
def test_full_disk_mid_run_keeps_the_old_file_and_finishes_in_the_rescue_folder(
    tmp_path, monkeypatch, error
) -> None:
    """Time 2 of 4 does not fit: times 0-1 move to the rescue folder and 2-3 are written
    there; RescuedOutput names the failure and the rescue file; the older out file is intact."""
    out_dir, rescue_dir = tmp_path / "out", tmp_path / "rescue"
    out_dir.mkdir(), rescue_dir.mkdir()
    out = out_dir / "pp.nc"
    out.write_bytes(b"an older result")
    fail_in(out_dir, monkeypatch, from_time=2, error=error)
    with pytest.raises(RescuedOutput) as caught:
        write_all(out, [out_dir, rescue_dir])
    (rescue,) = rescue_dir.glob("stratoflow-rescue-*-pp.nc")
    message = str(caught.value)
    assert str(out) in message and str(rescue) in message and "move it to" in message
    assert ("No space left on device" if error == "enospc" else "HDF error") in message
    assert_holds_all_times(rescue)
    assert out.read_bytes() == b"an older result"
    assert not leftovers(out_dir, rescue_dir)


def test_rescue_skips_folders_that_fail_too(tmp_path, monkeypatch) -> None:
    """The first rescue folder is full as well: the second one gets the result."""
    out_dir, full, free = tmp_path / "out", tmp_path / "full", tmp_path / "free"
    for d in (out_dir, full, free):
        d.mkdir()
    store = StreamedOutput._store

    def failing(self, t, mu, sigma):
        if self.tmp.parent in (out_dir, full) and t >= 1:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self.tmp))
        store(self, t, mu, sigma)

    monkeypatch.setattr(StreamedOutput, "_store", failing)
    with pytest.raises(RescuedOutput):
        write_all(out_dir / "pp.nc", [full, free])
    (rescue,) = free.glob("stratoflow-rescue-*-pp.nc")
    assert_holds_all_times(rescue)
    assert not list(full.iterdir()) and not leftovers(out_dir, free)


def test_no_folder_takes_the_result(tmp_path, monkeypatch) -> None:
    """Every folder is full: ExportError says the result is lost and what to do; no
    temporary file is left anywhere."""
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    fail_in(out_dir, monkeypatch, from_time=1)
    with pytest.raises(ExportError, match="the result is lost: free space") as caught:
        write_all(out_dir / "pp.nc", [out_dir])
    assert not isinstance(caught.value, RescuedOutput)
    assert not list(out_dir.iterdir())


def test_failed_rename_moves_the_complete_file_to_the_rescue_folder(tmp_path, monkeypatch) -> None:
    out_dir, rescue_dir = tmp_path / "out", tmp_path / "rescue"
    out_dir.mkdir(), rescue_dir.mkdir()
    out = out_dir / "pp.nc"
    replace = os.replace

    def failing_replace(src, dst):
        if Path(dst) == out:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(dst))
        replace(src, dst)

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(RescuedOutput, match="Read-only file system"):
        write_all(out, [rescue_dir])
    (rescue,) = rescue_dir.glob("stratoflow-rescue-*-pp.nc")
    assert_holds_all_times(rescue)
    assert not out.exists() and not leftovers(out_dir)

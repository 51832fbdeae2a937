"""Output locations checked before the work (workflows.outputs.check_output_path), and the
rescue copy when the final write still fails (write_or_rescue), through ``fv3 run --output``."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from workflows.cli import main
from workflows.errors import WorkflowError
from workflows.outputs import check_output_path, write_or_rescue


@pytest.fixture
def readonly_dir(tmp_path) -> Path:
    """A folder no file can be created in: mode 0555, or (root ignores the mode) /sys."""
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        (folder / "probe").touch()
    except PermissionError:
        yield folder
    else:
        (folder / "probe").unlink()
        yield Path("/sys")
    finally:
        folder.chmod(0o755)


def test_check_refuses_each_unwritable_location(tmp_path, readonly_dir) -> None:
    """Read-only folder, a directory as the target, a missing folder, a file as the folder and
    an extension the writer does not make: each a WorkflowError naming the option, the path and
    the fix; a good path is returned and nothing is left in its folder."""
    cases = {
        readonly_dir / "o.nc": r"--output .*o\.nc: the folder .* is not writable",
        tmp_path: r"--output .* is a directory; give a file name, e.g. .*out\.nc",
        tmp_path / "missing" / "o.nc": r"the folder .*missing does not exist; create it",
        tmp_path / "file.txt" / "o.nc": r"the folder .*file\.txt is not a directory",
        tmp_path / "o.png": r"--output .*o\.png: the writer makes \.nc files; give a name ending",
    }
    (tmp_path / "file.txt").write_text("x")
    for path, message in cases.items():
        with pytest.raises(WorkflowError, match=message):
            check_output_path(path, "--output", suffixes=(".nc",), command="fv3 run")
    before = sorted(tmp_path.iterdir())
    assert check_output_path(tmp_path / "o.NC", suffixes=(".nc",)) == tmp_path / "o.NC"
    assert sorted(tmp_path.iterdir()) == before  # the write probe is removed


#: what a full disk raises inside xarray's netCDF writer: OSError(ENOSPC), or netCDF4's own
#: RuntimeError (measured: writing 800 kB into a 64 KiB tmpfs)
FULL_DISK_ERRORS = {
    "enospc": lambda path: OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path)),
    "hdf-error": lambda path: RuntimeError("NetCDF: HDF error"),
}


def _full_disk_for(folder: Path, monkeypatch, error: str = "enospc") -> list[Path]:
    """xarray's netCDF writer writes a few bytes and then fails as on a full disk for every
    file in ``folder``; elsewhere it writes normally. Returns the targets tried."""
    real = xr.Dataset.to_netcdf
    tried: list[Path] = []

    def to_netcdf(self, path=None, *args, **kwargs):
        tried.append(Path(path))
        if Path(path).parent.resolve() == folder.resolve():
            Path(path).write_bytes(b"\x89HDF\r\n")
            raise FULL_DISK_ERRORS[error](path)
        return real(self, path, *args, **kwargs)

    monkeypatch.setattr(xr.Dataset, "to_netcdf", to_netcdf)
    return tried


def _result():
    """A small RunResult of a C4 shallow-water run (the fields write_netcdf needs)."""
    from fv3core.config import FV3Config
    from fv3core.experiments.driver import RunResult

    rng = np.random.default_rng(3)
    shape = (6, 4, 4)
    result = RunResult(FV3Config(case="williamson2", resolution=4, days=1.0), steps=2, dt=43200.0,
                       seconds=0.1, is_root=True)  # fmt: skip
    result.fields = {"h": rng.random(shape)}
    result.lon, result.lat, result.area = rng.random(shape), rng.random(shape), rng.random(shape)
    result.diagnostics = {"seconds_per_step": 0.05, "mass_relative_change": 0.0, "h_min": 1.0,
                          "h_max": 2.0}  # fmt: skip
    return result


@pytest.mark.parametrize("error", sorted(FULL_DISK_ERRORS))
def test_full_disk_keeps_the_old_file_and_a_rescue_copy(tmp_path, monkeypatch, error) -> None:
    """A full disk in the middle of writing out/o.nc: the older out/o.nc is byte for byte
    intact, no temporary file is left in out/, the result is in stratoflow-rescue-*-o.nc in the
    current folder (same field values) and the error names the failure and the rescue file."""
    from fv3core.output.netcdf import write_netcdf

    out, cwd = tmp_path / "out", tmp_path / "cwd"
    out.mkdir()
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    old = b"an older result"
    (out / "o.nc").write_bytes(old)
    tried = _full_disk_for(out, monkeypatch, error)
    result = _result()
    with pytest.raises(WorkflowError) as info:
        write_or_rescue(out / "o.nc", lambda p: write_netcdf(result, p), command="fv3 run")
    (rescue,) = cwd.glob("stratoflow-rescue-*-o.nc")
    message = str(info.value)
    reason = {"enospc": "No space left on device", "hdf-error": "NetCDF: HDF error"}[error]
    assert f"fv3 run: --output {out / 'o.nc'}: cannot write it ({reason});" in message
    assert f"the result is kept in {rescue}" in message
    assert (out / "o.nc").read_bytes() == old
    assert sorted(p.name for p in out.iterdir()) == ["o.nc"]
    assert tried[0].parent == out and tried[-1].parent == cwd
    with xr.open_dataset(rescue) as ds:
        np.testing.assert_array_equal(ds["h"].values[0], result.fields["h"].transpose(0, 2, 1))


def test_rescue_falls_back_to_tmpdir_and_says_when_all_fail(tmp_path, monkeypatch) -> None:
    """When the current folder cannot take the rescue copy either, it goes to $TMPDIR; when no
    folder can, the error says the result is lost and lists the folders tried."""
    import tempfile

    cwd, tmp = tmp_path / "cwd", tmp_path / "tmpdir"
    cwd.mkdir()
    tmp.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    failing = {tmp_path / "out", cwd}

    def write(path: Path) -> None:
        if path.parent in failing:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
        path.write_text("result")

    with pytest.raises(WorkflowError, match=r"the result is kept in .*tmpdir.*stratoflow-rescue"):
        write_or_rescue(tmp_path / "out" / "r.nc", write)
    assert [p.read_text() for p in tmp.glob("stratoflow-rescue-*-r.nc")] == ["result"]
    failing.add(tmp)
    with pytest.raises(WorkflowError, match=r"no rescue copy could be written .*the result is lost"):
        write_or_rescue(tmp_path / "out" / "r.nc", write)


def test_fv3_run_refuses_bad_output_before_the_run(tmp_path, readonly_dir, caplog, monkeypatch):
    """``fv3 run --output`` in a read-only folder or with a non-netCDF name: exit 1 with the
    named error, and fv3core.experiments.driver.run is never called."""
    def no_run(*args, **kwargs):
        raise AssertionError("fv3core.experiments.driver.run must not be reached")

    monkeypatch.setattr("fv3core.experiments.driver.run", no_run)
    base = ["fv3", "run", "--case", "williamson2", "--resolution", "12", "--no-progress"]
    assert main([*base, "--output", str(readonly_dir / "o.nc")]) == 1
    assert "is not writable" in caplog.text
    assert main([*base, "--output", str(tmp_path / "o.txt")]) == 1
    assert "give a name ending in .nc" in caplog.text


def test_fv3_run_full_disk_at_the_end_keeps_the_result(tmp_path, caplog, monkeypatch) -> None:
    """The run finishes but writing --output fails with ENOSPC: exit 1, the error names the
    rescue file in the current folder, which holds the run's final h; the older file stays."""
    out, cwd = tmp_path / "out", tmp_path / "cwd"
    out.mkdir()
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    (out / "tc2.nc").write_bytes(b"old")
    result = _result()
    monkeypatch.setattr("fv3core.experiments.driver.run", lambda config, **kw: result)
    _full_disk_for(out, monkeypatch)
    argv = ["fv3", "run", "--case", "williamson2", "--resolution", "4", "--no-progress",
            "--output", str(out / "tc2.nc")]  # fmt: skip
    assert main(argv) == 1
    (rescue,) = cwd.glob("stratoflow-rescue-*-tc2.nc")
    assert f"the result is kept in {rescue}" in caplog.text
    assert (out / "tc2.nc").read_bytes() == b"old"
    with xr.open_dataset(rescue) as ds:
        np.testing.assert_array_equal(ds["h"].values[0], result.fields["h"].transpose(0, 2, 1))


def test_fv3_run_number_options_refuse_nan_and_out_of_range(capsys) -> None:
    """``--alpha nan``, ``--days 0``, ``--layout 1.5``: argparse usage errors (exit 2) naming the
    option and what it needs, before anything runs."""
    for option, value, need in [("--alpha", "nan", "must be a finite number"),
                                ("--days", "0", "must be a positive finite number"),
                                ("--dt", "-5", "must be a finite number >= 0"),
                                ("--layout", "1.5", "must be a whole number >= 1")]:  # fmt: skip
        with pytest.raises(SystemExit) as info:
            main(["fv3", "run", option, value])
        assert info.value.code == 2
        assert f"argument {option}: {need}, got '{value}'" in capsys.readouterr().err


def test_fv3_config_refuses_non_finite_and_boolean_numbers(tmp_path) -> None:
    """A --config YAML with ``alpha: .nan`` or ``days: yes``: FV3ConfigError naming the key."""
    from fv3core.config import FV3Config
    from fv3core.errors import FV3ConfigError

    for text, message in [("alpha: .nan\n", "alpha=nan: must be a finite number"),
                          ("days: yes\n", "key 'days' must be float, got True")]:  # fmt: skip
        (tmp_path / "c.yaml").write_text(text)
        with pytest.raises(FV3ConfigError, match=message):
            FV3Config.from_yaml(tmp_path / "c.yaml")

"""The Fortran row of ``stratoflow bench fv3 --case baroclinic`` (benchmarks.fortran_baroclinic)
without a Fortran build: the case jw_cases.sh writes is the benchmarked model (reference: the
Fortran reference runs' namelist template in benchmarks/fortran_fv3/jw_cases.sh, read by
fv3core's namelist reader), and a stand-in ``mpirun`` that prints a hand-typed FMS clock summary
goes through run.sh and the clock reader to the seconds per large step."""

from __future__ import annotations

import dataclasses
import json
import stat

import pytest

from benchmarks.common import BenchmarkError
from benchmarks.fortran_baroclinic import case_for, config_differences, run_fortran, write_case
from fv3core.config import FV3Config
from tests.benchmarks.test_fv3_bench import FMS_TAIL
from workflows.cli import main


def _bench_config(**over) -> FV3Config:
    cfg = FV3Config.from_dict({"case": "baroclinic", "resolution": 12, "nz": 30,
                               "backend": "numpy", "days": 1.0}, source="test")  # fmt: skip
    return dataclasses.replace(cfg, **over)


def test_the_fortran_case_is_the_benchmarked_model(tmp_path) -> None:
    """jw_cases.sh's namelist for the bench's case, read back, equals the timed model on every
    key but the run length; a changed n_split or hord_tr shows up by name."""
    cfg = _bench_config()
    case = case_for(cfg, days=1)
    assert case.row() == "bench_C12_L30 13 4 1800 1 24 0. .F. 30 13 .true."
    case_dir = write_case(case, tmp_path)
    assert {p.name for p in case_dir.iterdir()} >= {"input.nml", "diag_table", "field_table"}
    assert config_differences(cfg, case_dir / "input.nml") == {}
    differs = config_differences(_bench_config(n_split=6, hord_tr=10), case_dir / "input.nml")
    assert differs == {"n_split": (4, 6), "hord_tr": (8, 10)}


def test_the_non_hydrostatic_fortran_case_is_the_benchmarked_model(tmp_path) -> None:
    """--non-hydrostatic: the Fortran case is written with hydrostatic = .false. and reads back
    as the timed non-hydrostatic model (FV3's non-hydrostatic defaults on both sides)."""
    cfg = _bench_config(hydrostatic=False)
    case = case_for(cfg, days=1)
    assert case.row().endswith(" .false.") and case.name == "benchnh_C12_L30"
    case_dir = write_case(case, tmp_path)
    assert config_differences(cfg, case_dir / "input.nml") == {}
    assert config_differences(_bench_config(), case_dir / "input.nml") == {"hydrostatic": (False, True)}


def test_bad_lengths_are_refused() -> None:
    with pytest.raises(BenchmarkError, match="at least one day"):
        case_for(_bench_config(), days=0)
    with pytest.raises(BenchmarkError, match="whole number of seconds"):
        case_for(_bench_config(dt=1800.5), days=1)


def _fake_mpirun(tmp_path, body: str):
    exe = tmp_path / "fv3_hydro.x"
    exe.write_text("#!/bin/sh\nexit 0\n")
    mpirun = tmp_path / "mpirun"
    mpirun.write_text("#!/bin/sh\n" + body)
    for f in (exe, mpirun):
        f.chmod(f.stat().st_mode | stat.S_IXUSR)
    return exe, mpirun


def test_a_run_gives_its_clocks_per_large_step(tmp_path) -> None:
    """Reference: FMS_TAIL typed by hand (FV_DYNAMICS 8.0 s, MAIN: time loop tmax 10.0 s, 6
    PEs) over 1 day / 1800 s = 48 large steps: 8.0 / 48 and 10.0 / 48 s per step."""
    tail = tmp_path / "tail.txt"
    tail.write_text(FMS_TAIL)
    exe, mpirun = _fake_mpirun(tmp_path, f"cat '{tail}'\n")
    row = run_fortran(_bench_config(), exe, mpirun, days=1)
    assert row["large_steps"] == 48 and row["ranks"] == 6 and row["dt_atmos"] == 1800
    assert row["step_s"] == pytest.approx(8.0 / 48)
    assert row["time_loop_step_s"] == pytest.approx(10.0 / 48)
    assert row["clocks"]["FV_DYNAMICS"] == {"seconds": 8.0, "stdout_line": 7}
    json.dumps(row)  # the row goes into the benchmark's JSON as it is


def test_a_failing_fortran_run_is_an_error_with_its_stderr(tmp_path) -> None:
    exe, mpirun = _fake_mpirun(tmp_path, "echo 'FATAL: bad namelist' >&2\nexit 3\n")
    with pytest.raises(BenchmarkError, match="failed .*exit 3.*\n.*FATAL: bad namelist"):
        run_fortran(_bench_config(), exe, mpirun, days=1)


def test_a_missing_executable_is_named(tmp_path) -> None:
    with pytest.raises(BenchmarkError, match="--fortran-exe .*nope.x does not exist"):
        run_fortran(_bench_config(), tmp_path / "nope.x", tmp_path / "mpirun", days=1)


def test_the_bench_refuses_a_missing_fortran_exe_before_measuring(tmp_path, capsys) -> None:
    code = main(["bench", "fv3", "--case", "baroclinic", "--resolution", "8", "--backends",
                 "numpy", "--fortran-exe", str(tmp_path / "none.x"), "--json",
                 str(tmp_path / "b.json")])  # fmt: skip
    assert code != 0 and not (tmp_path / "b.json").exists()
    assert "none.x does not exist" in capsys.readouterr().err


def test_bench_with_mpi_and_fortran_rows(tmp_path) -> None:
    """The whole benchmark at C8 L30 on numpy: the in-process step, the same model under a real
    ``mpiexec -n 6`` and the stand-in Fortran run (FMS_TAIL: 8.0 s over 48 steps); every ratio
    in the JSON is its step over the Fortran step, and the page shows each row."""
    tail = tmp_path / "tail.txt"
    tail.write_text(FMS_TAIL)
    exe, mpirun = _fake_mpirun(tmp_path, f"cat '{tail}'\n")
    out, md = tmp_path / "b.json", tmp_path / "fv3core.md"
    md.write_text("# fv3core\n")
    assert main(["bench", "fv3", "--case", "baroclinic", "--resolution", "8", "--levels", "30",
                 "--backends", "numpy", "--repeats", "1", "--mpi-ranks", "6",
                 "--fortran-exe", str(exe), "--fortran-mpirun", str(mpirun),
                 "--json", str(out), "--markdown", str(md)]) == 0  # fmt: skip
    data = json.loads(out.read_text())
    fortran, mpi, numpy_row = data["fortran"], data["mpi"], data["backends"]["numpy"]
    assert fortran["step_s"] == pytest.approx(8.0 / 48) and fortran["large_steps"] == 48
    assert mpi["ranks"] == 6 and mpi["step_s"] > 0 and 0 <= mpi["halo_share"] < 1
    assert mpi["ratio_vs_fortran"] == pytest.approx(mpi["step_s"] / fortran["step_s"])
    assert numpy_row["ratio_vs_fortran"] == pytest.approx(numpy_row["step_s"] / fortran["step_s"])
    text = md.read_text()
    assert "Against GFDL's Fortran FV3 in the same run: C8 L30" in text
    assert "| GFDL Fortran FV3, `FV_DYNAMICS` clock | mpirun -np 6 (Open MPI) | 0.17 | 1.00x |" in text
    assert f"| fv3core numpy | mpiexec -n 6 (MPICH) | {mpi['step_s']:.2f} |" in text


def test_the_executable_is_the_option_else_the_built_default(tmp_path, caplog) -> None:
    """Reference: the three cases written out: an option's value wins even if missing (checked
    later, by name); else the default build when the file exists; else None and a log line
    naming the build command and the option (none with ``warn=False``)."""
    from benchmarks.fortran_baroclinic import chosen_executable

    built, absent = tmp_path / "fv3_sw.x", tmp_path / "none.x"
    built.write_text("")
    assert chosen_executable(absent, built, "--fortran-sw-exe", "build.sh") == absent
    assert chosen_executable(None, built, "--fortran-sw-exe", "build.sh") == built
    with caplog.at_level("WARNING"):
        assert chosen_executable(None, absent, "--fortran-sw-exe", "build.sh") is None
        assert chosen_executable(None, absent, "--fortran-sw-exe", "build.sh", warn=False) is None
    assert [r.getMessage() for r in caplog.records] == [
        f"no Fortran run: {absent} is not built (build.sh), or pass --fortran-sw-exe"]

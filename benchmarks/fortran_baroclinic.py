"""GFDL's Fortran FV3 (the 3-D core, hydrostatic or not) on the baroclinic benchmark's own case, run in the
same benchmark run (``stratoflow bench fv3 --case baroclinic``).

The case is written by ``benchmarks/fortran_fv3/jw_cases.sh --inputs-only --row ...`` (FV3's
JW namelist template, the one the fidelity runs use) and run by ``run.sh`` with
``fv3_hydro.x`` (``DYCORE=hydrostatic benchmarks/fortran_fv3/build.sh``) under the system
Open MPI ``mpirun -np 6``, one OpenMP thread per rank. Its step time is the ``FV_DYNAMICS``
clock of the root PE's ``stdout.txt`` (every ``fv_dynamics`` call, diagnostics excluded) over
the run's large steps (:mod:`benchmarks.fortran_reference`).
"""

from __future__ import annotations

import logging
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.common import BenchmarkError, shown_path
from benchmarks.fortran_reference import FortranRun, read_run

log = logging.getLogger(__name__)

SCRIPTS = Path(__file__).resolve().parent / "fortran_fv3"
#: where ``DYCORE=hydrostatic build.sh`` puts the executable by default
DEFAULT_EXE = Path("/work/fortran_fv3_hydro/bin/fv3_hydro.x")
#: the Open MPI launcher the executable was built with (a venv's MPICH ``mpirun`` cannot start it)
DEFAULT_MPIRUN = Path("/usr/bin/mpirun")
#: FV3Config keys that may differ between the Fortran case's namelist and the timed model: the
#: run length and FV3's print interval (neither changes a step); every other key must agree
IGNORED_KEYS = ("days", "print_freq", "backend")


@dataclass(frozen=True)
class FortranCase:
    """One JW case as ``jw_cases.sh`` writes it: a row of its run table."""

    name: str
    resolution: int
    n_split: int
    dt_atmos: int
    days: int
    levels: int
    test_case: int = 13
    hydrostatic: bool = True

    def row(self) -> str:
        """The ``--row`` argument of ``jw_cases.sh`` (run npx n_split dt_atmos days out_hours
        consv_te checker_tr npz test_case hydrostatic); output once, at the end of the run."""
        return (f"{self.name} {self.resolution + 1} {self.n_split} {self.dt_atmos} {self.days} "
                f"{24 * self.days} 0. .F. {self.levels} {self.test_case} "
                f"{'.true.' if self.hydrostatic else '.false.'}")  # fmt: skip


def check_executables(exe: Path, mpirun: Path, build: str = "DYCORE=hydrostatic "
                      "benchmarks/fortran_fv3/build.sh", exe_option: str = "--fortran-exe") -> None:
    """A :class:`BenchmarkError` naming the option whose file is missing."""
    for path, what in ((exe, exe_option), (mpirun, "--fortran-mpirun")):
        if not path.is_file():
            raise BenchmarkError(f"{what} {path} does not exist (build the Fortran model with "
                                 f"{build}, or pass --no-peer)")  # fmt: skip


def chosen_executable(given: Path | None, default: Path, option: str, build: str,
                      warn: bool = True) -> Path | None:  # fmt: skip
    """``given`` (the ``option``'s value), else ``default`` when it is built; None (logged
    with ``warn``, naming the ``build`` command and the option) when neither is."""
    if given is not None:
        return given
    if default.is_file():
        return default
    if warn:
        log.warning("no Fortran run: %s is not built (%s), or pass %s", default, build, option)
    return None


def case_for(config: Any, days: int) -> FortranCase:
    """The Fortran case of the benchmarked ``FV3Config`` (``--case baroclinic``)."""
    if days < 1:
        raise BenchmarkError(f"--fortran-days {days}: the Fortran run needs at least one day")
    if float(config.dt) != int(config.dt):
        raise BenchmarkError(f"dt_atmos {config.dt} s is not a whole number of seconds, which "
                             "FV3's main_nml needs")  # fmt: skip
    nh = "" if config.hydrostatic else "nh"
    return FortranCase(name=f"bench{nh}_C{config.resolution}_L{config.nz}",
                       resolution=config.resolution, n_split=config.n_split,
                       dt_atmos=int(config.dt), days=days, levels=config.nz,
                       hydrostatic=config.hydrostatic)  # fmt: skip


def write_case(case: FortranCase, cases_dir: Path) -> Path:
    """Write ``case``'s input.nml, diag_table, field_table and data_table under ``cases_dir``
    with ``jw_cases.sh --inputs-only`` and return its folder."""
    cmd = ["bash", str(SCRIPTS / "jw_cases.sh"), "--inputs-only", "--row", case.row()]
    done = subprocess.run(cmd, env=_env(CASES_DIR=str(cases_dir)), capture_output=True,
                          text=True, check=False)  # fmt: skip
    if done.returncode != 0:
        raise BenchmarkError(f"jw_cases.sh could not write the Fortran case {case.name}: "
                             f"{done.stderr.strip()[-1000:]}")  # fmt: skip
    return cases_dir / case.name


def config_differences(config: Any, namelist: Path) -> dict[str, tuple[Any, Any]]:
    """The keys (but :data:`IGNORED_KEYS`) on which the Fortran case's namelist, read as
    ``stratoflow fv3 run --namelist`` reads it, and ``config`` differ: name -> (namelist's,
    config's)."""
    from fv3core.config import FV3Config

    fortran = FV3Config.from_namelist(namelist, backend=config.backend).to_dict()
    ours = config.to_dict()
    return {k: (fortran.get(k), ours.get(k)) for k in sorted(set(fortran) | set(ours))
            if k not in IGNORED_KEYS and fortran.get(k) != ours.get(k)}  # fmt: skip


def run_fortran(config: Any, exe: Path, mpirun: Path, days: int, ranks: int = 6,
                timeout: float = 3600.0) -> dict[str, Any]:  # fmt: skip
    """Run GFDL's Fortran FV3 on ``config``'s case for ``days`` and return its step time per
    large step (``FV_DYNAMICS`` and ``MAIN: time loop`` clocks) with its provenance."""
    check_executables(exe, mpirun)
    case = case_for(config, days)
    with tempfile.TemporaryDirectory(prefix="stratoflow-fortran-") as tmp:
        case_dir = write_case(case, Path(tmp) / "cases")
        differs = config_differences(config, case_dir / "input.nml")
        if differs:
            raise BenchmarkError("the Fortran case would not be the benchmarked model: "
                                 + ", ".join(f"{k} namelist {a!r} vs model {b!r}"
                                             for k, (a, b) in differs.items()))  # fmt: skip
        out_dir = Path(tmp) / "run"
        log.info("Fortran FV3: %s, %d day(s) on %d ranks", case.name, days, ranks)
        run, provenance = run_case(case_dir, out_dir, ranks, exe, mpirun, timeout)
    return summarize(run, case, exe, provenance)


def run_case(case_dir: Path, out_dir: Path, ranks: int, exe: Path, mpirun: Path,
             timeout: float) -> tuple[FortranRun, dict[str, str]]:  # fmt: skip
    """Run ``exe`` on ``case_dir``'s inputs with ``run.sh`` into ``out_dir``: the run's clocks
    and its ``provenance.txt``; a :class:`BenchmarkError` with the model's stderr if it fails."""
    from fv3core.validation.extract import run_provenance

    cmd = ["bash", str(SCRIPTS / "run.sh"), str(case_dir), str(out_dir), str(ranks)]
    try:
        done = subprocess.run(cmd, env=_env(FV3_EXE=str(exe), MPIRUN=str(mpirun)),
                              capture_output=True, text=True, timeout=timeout, check=False)  # fmt: skip
    except subprocess.TimeoutExpired as e:
        raise BenchmarkError(f"the Fortran run {case_dir.name} took over {timeout:.0f} s") from e
    if done.returncode != 0:
        err = out_dir / "stderr.txt"
        tail = err.read_text(errors="replace")[-1500:] if err.is_file() else done.stderr[-1500:]
        raise BenchmarkError(f"the Fortran run {case_dir.name} failed (run.sh exit "
                             f"{done.returncode}):\n{tail}")  # fmt: skip
    return read_run(out_dir), run_provenance(out_dir)


#: the lines of a run's ``provenance.txt`` a benchmark JSON keeps
PROVENANCE_KEYS = ("fv3", "fms", "compiler", "mpi", "exe_sha256", "fv3_flags")


def build_provenance(provenance: dict[str, str]) -> dict[str, str]:
    """What built the executable of a run (the :data:`PROVENANCE_KEYS` of its provenance)."""
    return {k: provenance[k] for k in PROVENANCE_KEYS if k in provenance}


def summarize(run: FortranRun, case: FortranCase, exe: Path,
              provenance: dict[str, str]) -> dict[str, Any]:  # fmt: skip
    """The JSON row of a Fortran run: seconds per large step of its clocks."""
    per_step = {name: clock.seconds / run.large_steps for name, clock in run.clocks.items()}
    return {"case": case.row(), "exe": shown_path(exe), "ranks": run.ranks,
            "large_steps": run.large_steps, "dt_atmos": run.dt_atmos, "n_split": run.n_split,
            "step_s": per_step["FV_DYNAMICS"], "time_loop_step_s": per_step["MAIN: time loop"],
            "per_large_step_s": per_step,
            "clocks": {name: {"seconds": c.seconds, "stdout_line": c.line}
                       for name, c in run.clocks.items()},
            "wall_ms": int(provenance.get("wall_ms", "0")),
            "provenance": build_provenance(provenance)}  # fmt: skip


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, **extra}

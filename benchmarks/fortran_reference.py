"""The time step of GFDL's Fortran FV3 in a reference run of ``../shared/fv3-reference``.

A run folder holds the model's ``input.nml`` and its root PE's ``stdout.txt``.  The step counts
come from the namelist (``main_nml`` ``days``... and ``dt_atmos``: large steps; ``fv_core_nml``
``n_split``: acoustic steps per large step); the times from the two FMS timing tables at the end
of ``stdout.txt``:

* the ``fv_timing`` block (``Block  User time  System Time  Total Time``, root PE, wall seconds):
  ``FV_DYNAMICS`` is every ``fv_dynamics`` call, i.e. the large steps without the diagnostics
  (``FV_DIAG``: the norms and the netCDF output);
* the ``mpp_clock`` table (``hits tmin tmax tavg tstd ...`` across the PEs): ``MAIN: time
  loop`` is the whole time loop, diagnostics and output included.

Every figure keeps the file and line it was read from.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.common import BenchmarkError

ROOT = Path(__file__).resolve().parent.parent
#: the Fortran reference runs (a sibling of the checkout)
REFERENCE_DIR = ROOT.parent / "shared" / "fv3-reference"
#: the run the shallow-water peer comparison uses by default
DEFAULT_RUN = REFERENCE_DIR / "tc2_C48_d5"

_FV_TIMING_HEADER = re.compile(r"^\s*Block\s+User time\s+System Time\s+Total Time")
_FV_TIMING_ROW = re.compile(r"^\s*([A-Z_][A-Z0-9_]*)\s+([-\d.Ee+]+)\s+([-\d.Ee+]+)\s+([-\d.Ee+]+)"
                            r"(?:\s+\d+)?\s*$")  # fmt: skip
_MPP_HEADER = re.compile(r"^\s*hits\s+tmin\s+tmax\s+tavg\s+tstd")
_MPP_ROW = re.compile(r"^(\S.*?)\s+(\d+)\s+([-\d.Ee+]+)\s+([-\d.Ee+]+)\s+([-\d.Ee+]+)"
                      r"\s+([-\d.Ee+]+)\s+([-\d.Ee+]+)\s+\d+\s+\d+\s+\d+\s*$")  # fmt: skip
_MPP_PES = re.compile(r"Tabulating mpp_clock statistics across\s+(\d+)\s+PEs")


@dataclass(frozen=True)
class Clock:
    """One timing line: seconds (``fv_timing``: total; ``mpp_clock``: tmax over the PEs) and
    the 1-based line of ``stdout.txt`` it was read from."""

    seconds: float
    line: int
    hits: int = 1
    tmin: float | None = None
    tavg: float | None = None


def parse_fv_timing(text: str) -> dict[str, Clock]:
    """The ``fv_timing`` block (name -> total seconds) of an FV3 stdout; empty if absent."""
    lines = text.splitlines()
    out: dict[str, Clock] = {}
    start = next((i for i, line in enumerate(lines) if _FV_TIMING_HEADER.match(line)), None)
    if start is None:
        return out
    for number, line in enumerate(lines[start + 1 :], start + 2):
        m = _FV_TIMING_ROW.match(line)
        if m:
            out[m.group(1)] = Clock(float(m.group(4)), number)
        elif out:  # the first line after the rows ends the block (the rule before them does not)
            break
    return out


def parse_mpp_clocks(text: str) -> tuple[dict[str, Clock], int | None]:
    """The ``mpp_clock`` table (clock name -> tmax over the PEs) of an FV3 stdout and the
    number of PEs it was tabulated across."""
    lines = text.splitlines()
    pes = None
    out: dict[str, Clock] = {}
    inside = False
    for number, line in enumerate(lines, 1):
        m = _MPP_PES.search(line)
        if m:
            pes = int(m.group(1))
        if _MPP_HEADER.match(line):
            inside = True
            continue
        if inside:
            row = _MPP_ROW.match(line)
            if not row:
                if out:
                    inside = False
                continue
            name = row.group(1).strip()
            out[name] = Clock(float(row.group(4)), number, hits=int(row.group(2)),
                              tmin=float(row.group(3)), tavg=float(row.group(5)))  # fmt: skip
    return out, pes


@dataclass(frozen=True)
class FortranRun:
    """The step times of one Fortran reference run, with their provenance."""

    run: str
    stdout: str
    namelist: str
    resolution: int
    layout: int
    ranks: int | None
    dt_atmos: float
    n_split: int
    run_seconds: float
    large_steps: int
    acoustic_steps: int
    #: ``fv_timing`` and ``mpp_clock`` figures used, name -> Clock
    clocks: dict[str, Clock] = field(default_factory=dict)

    @property
    def acoustic_dt(self) -> float:
        return self.dt_atmos / self.n_split

    def per_acoustic_step(self, clock: str) -> float:
        """Seconds of ``clock`` per acoustic step."""
        return self.clocks[clock].seconds / self.acoustic_steps

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["acoustic_dt"] = self.acoustic_dt
        out["per_acoustic_step_s"] = {k: self.per_acoustic_step(k) for k in self.clocks}
        return out


#: the clocks a FortranRun keeps: (table, name)
CLOCKS = (("fv_timing", "FV_DYNAMICS"), ("fv_timing", "FV_DIAG"), ("fv_timing", "DYN_CORE"),
          ("mpp", "MAIN: time loop"), ("mpp", "MAIN: initialization"),
          ("mpp", "Total runtime"))  # fmt: skip


def read_run(run_dir: Path | str) -> FortranRun:
    """The step counts (``input.nml``) and clocks (``stdout.txt``) of a reference run."""
    from fv3core.namelist import read_namelist

    run_dir = Path(run_dir)
    stdout, nml_path = run_dir / "stdout.txt", run_dir / "input.nml"
    for path in (stdout, nml_path):
        if not path.is_file():
            raise BenchmarkError(f"{path} not found: pass a run folder of {REFERENCE_DIR} "
                                 "(input.nml and stdout.txt)")  # fmt: skip
    nml = read_namelist(nml_path, check_supported=False)
    text = stdout.read_text(errors="replace")
    fv, (mpp, pes) = parse_fv_timing(text), parse_mpp_clocks(text)
    clocks = {name: (fv if table == "fv_timing" else mpp)[name] for table, name in CLOCKS
              if name in (fv if table == "fv_timing" else mpp)}  # fmt: skip
    for needed in ("FV_DYNAMICS", "MAIN: time loop"):
        if needed not in clocks:
            raise BenchmarkError(f"{stdout}: no {needed!r} timing line (FMS clock summary at "
                                 "the end of the model's stdout)")  # fmt: skip
    large = round(nml.run_seconds / nml.dt_atmos)
    n_split = nml.acoustic_steps
    return FortranRun(run=run_dir.name, stdout=str(stdout), namelist=str(nml_path),
                      resolution=nml.resolution, layout=int(nml.layout[0]), ranks=pes,
                      dt_atmos=float(nml.dt_atmos), n_split=n_split,
                      run_seconds=float(nml.run_seconds), large_steps=large,
                      acoustic_steps=large * n_split, clocks=clocks)  # fmt: skip

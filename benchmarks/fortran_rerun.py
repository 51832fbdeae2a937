"""GFDL's Fortran FV3 shallow-water model rerun, in the benchmark run, on a reference run's own
inputs (``stratoflow bench fv3 --fortran-sw-exe``).

A reference run of ``../shared/fv3-reference`` carries a clock measured on another machine at
another time. Rerunning its ``input.nml``, ``diag_table``, ``field_table`` and ``data_table``
with ``fv3_sw.x`` (``benchmarks/fortran_fv3/build.sh``) under the system Open MPI, here and next
to fv3core's timings, gives the peer's step time on the same machine. The rerun's netCDF output
is compared with the reference's, variable by variable, so the table says whether the rerun is
the reference's model.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.common import BenchmarkError, shown_path
from benchmarks.fortran_baroclinic import build_provenance, check_executables, run_case
from benchmarks.fortran_reference import read_run

log = logging.getLogger(__name__)

#: where ``benchmarks/fortran_fv3/build.sh`` puts the shallow-water executable by default
DEFAULT_SW_EXE = Path("/work/fortran_fv3/bin/fv3_sw.x")
#: the inputs a run folder holds besides its outputs (``data_table`` may be absent)
INPUTS = ("input.nml", "diag_table", "field_table", "data_table")
#: the output files compared with the reference's
OUTPUT_GLOB = "atmos_out.tile*.nc"


def output_difference(rerun: Path, reference: Path) -> dict[str, Any]:
    """The largest absolute difference, over every variable of every ``atmos_out`` tile file,
    between two run folders, and the number of values compared; a file or variable present
    in one folder only is listed in ``missing``."""
    import numpy as np
    import xarray as xr

    files = sorted(p.name for p in reference.glob(OUTPUT_GLOB))
    if not files:
        raise BenchmarkError(f"{reference} holds no {OUTPUT_GLOB} to compare the rerun with")
    worst, values, missing, compared = 0.0, 0, [], 0
    for name in files:
        if not (rerun / name).is_file():
            missing.append(name)
            continue
        with xr.open_dataset(reference / name, decode_times=False) as a, \
                xr.open_dataset(rerun / name, decode_times=False) as b:  # fmt: skip
            for var in a.data_vars:
                if var not in b.data_vars or a[var].shape != b[var].shape:
                    missing.append(f"{name}:{var}")
                    continue
                x, y = np.asarray(a[var].values, float), np.asarray(b[var].values, float)
                diff = np.abs(x - y)
                diff[np.isnan(x) & np.isnan(y)] = 0.0  # missing in both: equal
                # NaN where only one side is missing, and it stays NaN once met
                worst = float(np.max(diff, initial=worst))
                values += diff.size
                compared += 1
    return {"max_abs_difference": worst, "values": values, "variables": compared,
            "files": len(files), "missing": missing,
            "identical": not missing and worst == 0.0}  # fmt: skip


def rerun_reference(run_dir: Path, exe: Path, mpirun: Path, timeout: float = 3600.0) -> dict[str, Any]:
    """Run ``exe`` on ``run_dir``'s inputs with as many ranks as the reference used, and return
    the rerun's clocks (:meth:`FortranRun.to_json`), its provenance, and how its output differs
    from the reference's."""
    check_executables(exe, mpirun, build="benchmarks/fortran_fv3/build.sh",
                      exe_option="--fortran-sw-exe")  # fmt: skip
    reference = read_run(run_dir)
    ranks = reference.ranks or 6 * reference.layout**2
    with tempfile.TemporaryDirectory(prefix="stratoflow-fortran-sw-") as tmp:
        case_dir, out_dir = Path(tmp) / run_dir.name, Path(tmp) / "run"
        case_dir.mkdir()
        for name in INPUTS:
            if (run_dir / name).is_file():
                shutil.copyfile(run_dir / name, case_dir / name)
        log.info("Fortran FV3 SW: rerunning %s on %d ranks with %s", run_dir.name, ranks, exe)
        rerun, provenance = run_case(case_dir, out_dir, ranks, exe, mpirun, timeout)
        difference = output_difference(out_dir, run_dir)
    run = rerun.to_json()
    # the rerun's files went with the temporary folder: name the inputs it ran instead
    run.update(run=f"{run_dir.name} (rerun here)", stdout=f"{run_dir.name} rerun's stdout.txt",
               namelist=shown_path(run_dir / "input.nml"))  # fmt: skip
    log.info("Fortran FV3 SW rerun: FV_DYNAMICS %.3g s (the reference's %.3g s); output %s",
             rerun.clocks["FV_DYNAMICS"].seconds, reference.clocks["FV_DYNAMICS"].seconds,
             "identical" if difference["identical"] else
             f"differs by up to {difference['max_abs_difference']:.3g}")  # fmt: skip
    return {"run": run, "exe": shown_path(exe), "wall_ms": int(provenance.get("wall_ms", "0")),
            "provenance": build_provenance(provenance), "output_vs_reference": difference}

"""FV3's 3-D core under a real ``mpiexec -n 24`` (layout 2: four ranks per tile, one per
process): ``stratoflow fv3 run --case baroclinic`` writes bit for bit the netCDF of the same run
with its 24 ranks in one process (which tests/fv3core/test_baroclinic_model.py checks against 6
ranks).  A subprocess, not mpi-pytest: its child processes deselect slow tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

ROOT = Path(__file__).resolve().parent.parent.parent
ARGS = ["fv3", "run", "--case", "baroclinic", "--resolution", "12", "--layout", "2", "--dt", "3600",
        "--days", str(1.0 / 24.0), "--checker-tr", "--no-progress"]  # fmt: skip
CLI = "import sys; from workflows.cli import main; sys.exit(main(sys.argv[1:]))"


def _run(output: Path, ranks: int | None) -> None:
    cmd = [sys.executable, "-c", CLI, *ARGS, "--output", str(output)]
    if ranks:
        cmd = [str(Path(sys.executable).parent / "mpiexec"), "-n", str(ranks), *cmd]
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=1800,
                         env={**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"})  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]


@pytest.mark.slow  # 24 processes on 2 cores: about 9 minutes (measured beside a C96 run)
def test_mpiexec_24_ranks_writes_the_in_process_result(tmp_path) -> None:
    """Every variable of the output file (ps, t850, u850, v850, vort850, the tracer columns, the
    lon-lat fields) is bit for bit the in-process run's."""
    _run(tmp_path / "local.nc", None)
    _run(tmp_path / "mpi.nc", 24)
    with xr.open_dataset(tmp_path / "local.nc") as a, xr.open_dataset(tmp_path / "mpi.nc") as b:
        assert sorted(a.data_vars) == sorted(b.data_vars) and "vort850" in a.data_vars
        for name in a.data_vars:
            np.testing.assert_array_equal(a[name].values, b[name].values, err_msg=name)

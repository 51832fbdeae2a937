"""FV3 models under the venv's ``mpiexec``, one OpenMP thread per rank: the step time (max
over ranks), the halo share and each rank's peak RSS (``stratoflow bench fv3``, both cases)."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import BenchmarkError


def mpi_python(ranks: int, code: str) -> list[str]:
    """argv running ``python -c code`` on ``ranks`` ranks with the venv's ``mpiexec``."""
    mpiexec = Path(sys.executable).with_name("mpiexec")
    if not mpiexec.exists():
        raise BenchmarkError(f"{mpiexec} not found: install the mpich wheel into the venv")
    return [str(mpiexec), "-n", str(ranks), sys.executable, "-c", code]


def one_thread_env() -> dict[str, str]:
    """This process's environment with one OpenMP thread per rank."""
    return {**os.environ, "OMP_NUM_THREADS": "1"}


def fv3_mpi_worker(config_json: str, repeats: int, out: str) -> None:
    """Run under ``mpiexec -n 6 layout^2``: ``repeats`` large steps of FV3's scheme after one
    untimed step; rank 0 writes every rank's step time, halo time and peak RSS as JSON."""
    from benchmarks.memory import self_peak_rss_MB
    from fv3core.config import FV3Config
    from fv3core.experiments.driver import build_model

    config = FV3Config.from_dict(json.loads(config_json), source="bench fv3")
    _, decomposition, model, _, dt = build_model(config, mpi=True)
    comm = decomposition.communicator.comm_of(decomposition.ranks[0].rank)
    model.step()
    comm.barrier()
    halo0 = model.dynamics.halo_seconds
    t0 = time.perf_counter()
    for _ in range(repeats):
        model.step()
    comm.barrier()
    mine = {"step_s": (time.perf_counter() - t0) / repeats,
            "halo_s": (model.dynamics.halo_seconds - halo0) / repeats,
            "peak_rss_MB": self_peak_rss_MB()}  # fmt: skip
    ranks = comm.allgather(mine)
    if comm.rank == 0:
        Path(out).write_text(json.dumps({"dt_atmos": dt, "ranks": ranks}))


def fv3_mpi(config: Any, repeats: int, timeout: float = 3600.0) -> dict[str, Any]:
    """:func:`fv3_mpi_worker` under ``mpiexec -n 6 layout^2`` (1 OpenMP thread per rank), after
    building the model once in this process (the stencil cache warmed serially); its step time
    and halo time (max over ranks), every rank's peak RSS, and the peak memory of the whole
    mpiexec process tree (:func:`benchmarks.memory.peak_memory`)."""
    from benchmarks.memory import peak_memory
    from fv3core.experiments.driver import build_model

    build_model(config)  # compiles or loads every stencil before the ranks start
    ranks = 6 * config.layout**2
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "mpi.json"
        code = (f"from benchmarks.fv3_mpi import fv3_mpi_worker; "
                f"fv3_mpi_worker({json.dumps(config.to_dict())!r}, {repeats}, {str(out)!r})")  # fmt: skip
        usage, _, err = peak_memory(mpi_python(ranks, code), env=one_thread_env(), timeout=timeout)
        if usage.returncode != 0 or not out.exists():
            raise BenchmarkError(f"mpiexec -n {ranks} FV3 worker (C{config.resolution}, layout "
                                 f"{config.layout}) failed:\n{err[-2000:]}")  # fmt: skip
        data = json.loads(out.read_text())
    per_rank = data["ranks"]
    step = max(r["step_s"] for r in per_rank)
    rss = [r["peak_rss_MB"] for r in per_rank]
    return {"resolution": config.resolution, "layout": config.layout, "ranks": ranks,
            "n_split": config.n_split, "dt_atmos": data["dt_atmos"], "repeats": repeats,
            "backend": config.backend, "step_s": step,
            "acoustic_step_s": step / config.n_split,
            "halo_s": max(r["halo_s"] for r in per_rank),
            "halo_share": max(r["halo_s"] for r in per_rank) / step,
            "rss_per_rank_MB_max": max(rss), "rss_per_rank_MB_min": min(rss),
            "process_tree": {**usage.to_json(), "command": f"mpiexec -n {ranks} python -c "
                             "'from benchmarks.fv3_mpi import fv3_mpi_worker; ...'"}}  # fmt: skip

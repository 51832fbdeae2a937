"""The MPI abort guard (mapping.cluster.abort) under the venv's real ``mpiexec -n 6`` (MPICH's
hydra): one rank's uncaught exception or SIGINT, or a Ctrl-C to mpiexec, ends every rank within
10 s with a non-zero exit, and stderr names the rank. The job is a tiny script whose other ranks
wait in a blocking collective that can never complete (as ranks of a real run would); without
the guard each of these cases hangs until killed."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

from mapping.cluster import abort
from mapping.cluster.abort import abort_on_failure, under_mpi
from tests.mpi_jobs import MPIJob

SCRIPT = """\
import logging, sys, time
from mapping.cluster.abort import install_abort_guard

logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
install_abort_guard()
from mapping.cluster import MPIComm

comm = MPIComm()
mode, victim = sys.argv[1], int(sys.argv[2])
comm.barrier()
print(f"waiting {comm.rank}", flush=True)
if comm.rank == victim and mode == "raise":
    time.sleep(0.5)
    raise ValueError("failed on purpose")
if comm.rank == 0:
    time.sleep(600)  # rank 0 never joins: the others wait in MPI_Barrier (in C, not Python)
comm.barrier()
"""


def _job(tmp_path: Path, mode: str, victim: int) -> tuple[MPIJob, dict[int, int]]:
    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    job = MPIJob([sys.executable, str(script), mode, str(victim)], tmp_path)
    pids = job.started(lambda: job.stdout.read_text().count("waiting") == 6, "six waiting ranks")
    return job, pids


def test_uncaught_exception_on_one_rank_ends_the_job(tmp_path) -> None:
    """Rank 2 raises ValueError while the others wait in MPI_Barrier: every rank is gone within
    10 s, mpiexec exits 1 (MPI_Abort's code), and stderr names rank 2 and the exception."""
    job, _ = _job(tmp_path, "raise", victim=2)
    code = job.assert_all_gone()
    err = job.stderr.read_text()
    assert code == 1
    assert "rank 2 of 6" in err and "uncaught ValueError: failed on purpose" in err
    assert "aborting the MPI job" in err


def test_sigint_to_one_rank_blocked_in_mpi_ends_the_job(tmp_path) -> None:
    """SIGINT to rank 3 while it is blocked inside MPI_Barrier (where Python runs no signal
    handler): every rank is gone within 10 s, exit status 130 (128 + SIGINT), stderr names
    rank 3 and the signal."""
    job, pids = _job(tmp_path, "signal", victim=3)
    os.kill(pids[3], signal.SIGINT)
    code = job.assert_all_gone()
    err = job.stderr.read_text()
    assert code == 128 + signal.SIGINT
    assert "rank 3 of 6" in err and "received SIGINT" in err


def test_ctrl_c_to_mpiexec_ends_the_job(tmp_path) -> None:
    """SIGINT to mpiexec (a Ctrl-C; hydra forwards it to every rank): every rank is gone within
    10 s, exit status 130."""
    job, _ = _job(tmp_path, "signal", victim=3)
    os.kill(job.proc.pid, signal.SIGINT)
    code = job.assert_all_gone()
    assert code == 128 + signal.SIGINT
    assert "received SIGINT" in job.stderr.read_text()


def test_outside_mpi_the_guard_is_a_plain_block(monkeypatch) -> None:
    """Without an MPI launcher's variables ``abort_on_failure`` changes nothing: the exception
    reaches the caller (the CLI then reports it) and no handler is installed."""
    for name in ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK"):
        monkeypatch.delenv(name, raising=False)
    assert not under_mpi()
    handler = signal.getsignal(signal.SIGINT)
    with pytest.raises(ValueError, match="passes through"), abort_on_failure("test"):
        raise ValueError("passes through")
    assert signal.getsignal(signal.SIGINT) is handler
    assert sys.excepthook is not abort._excepthook

"""Faults of one rank of ``mpiexec -n 6 stratoflow fv3 run`` (the venv's MPICH hydra): SIGINT
(the guard of mapping.cluster.abort aborts the job) and SIGKILL (hydra ends the other ranks)
each end every rank within 10 s, with a non-zero exit. The signal comes once every rank is
running the case (each has logged the decomposition; they build stencils one rank at a time,
the others waiting in an MPI collective)."""

from __future__ import annotations

import os
import signal
import sys

import pytest

from tests.mpi_jobs import MPIJob

#: the smallest case (C12 on 6 ranks), long enough never to finish by itself
FV3_RUN = ["-m", "workflows.cli", "fv3", "run", "--case", "williamson2", "--resolution", "12",
           "--days", "100", "--no-progress"]  # fmt: skip


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGKILL], ids=["sigint", "sigkill"])
def test_signal_to_one_rank_of_fv3_run_ends_every_rank(tmp_path, signum) -> None:
    """The signal goes to rank 3 only: mpiexec and all six ranks are gone within 10 s; the
    exit status is 130 for SIGINT (the guard's MPI_Abort code, 128 + SIGINT; stderr names rank
    3 and the signal) and 9 for SIGKILL (hydra exits with the killed rank's signal number)."""
    job = MPIJob([sys.executable, *FV3_RUN], tmp_path)
    pids = job.started(lambda: job.stderr.read_text().count("C12 on 6 ranks") == 6,
                       "decomposition logged by six ranks")  # fmt: skip
    os.kill(pids[3], signum)
    code = job.assert_all_gone()
    text = job.stderr.read_text()
    assert code == {signal.SIGINT: 130, signal.SIGKILL: 9}[signum], text[-2000:]
    if signum == signal.SIGINT:
        assert "rank 3 of 6" in text and "received SIGINT" in text

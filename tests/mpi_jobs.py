"""Launch a real ``mpiexec -n N`` job from a test, find its ranks, and check that a fault ends
every one of them (tests/mapping/cluster/test_abort.py, tests/workflows/test_mpi_faults.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

MPIEXEC = Path(sys.executable).parent / "mpiexec"
#: how long every rank may take to be gone once the fault happened
GONE_S = 10.0
#: how long the ranks may take to start (imports on a loaded 2-core machine)
START_S = 180.0


class MPIJob:
    """``mpiexec -n nprocs argv`` in its own session, stdout and stderr in ``folder``; its
    ranks are the processes whose environment holds this job's token."""

    def __init__(self, argv: list[str], folder: Path, nprocs: int = 6) -> None:
        self.token = uuid.uuid4().hex
        self.folder = folder
        self.stdout, self.stderr = folder / "stdout.txt", folder / "stderr.txt"
        env = {**os.environ, "STRATOFLOW_TEST_JOB": self.token}
        with open(self.stdout, "w") as out, open(self.stderr, "w") as err:
            self.proc = subprocess.Popen([str(MPIEXEC), "-n", str(nprocs), *argv], cwd=folder,
                                         env=env, stdout=out, stderr=err,
                                         start_new_session=True)  # fmt: skip
        self.nprocs = nprocs
        self.segments: set[Path] = set()

    def ranks(self) -> dict[int, int]:
        """``{rank: pid}`` of the job's live (not zombie) ranks."""
        found = {}
        mark = f"STRATOFLOW_TEST_JOB={self.token}".encode()
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                env = (entry / "environ").read_bytes().split(b"\0")
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            rank = next((v for v in env if v.startswith(b"PMI_RANK=")), None)
            if mark in env and rank is not None and state != "Z":
                found[int(rank.split(b"=")[1])] = int(entry.name)
        return found

    def started(self, ready: Callable[[], bool], what: str) -> dict[int, int]:
        """Wait (up to ``START_S``) until ``ready()``; then every rank's pid. Notes the
        shared-memory segments the ranks map, which an aborted MPICH job leaves behind."""
        deadline = time.monotonic() + START_S
        try:
            while not ready():
                assert self.proc.poll() is None, f"the job ended before {what}"
                assert time.monotonic() < deadline, f"no {what} after {START_S} s"
                time.sleep(0.1)
            pids = self.ranks()
            assert sorted(pids) == list(range(self.nprocs))
        except BaseException:
            self.kill()
            raise
        for pid in pids.values():
            try:
                maps = Path(f"/proc/{pid}/maps").read_text().splitlines()
            except OSError:
                continue
            self.segments |= {Path(line.split()[-1]) for line in maps
                              if line.split()[-1].startswith("/dev/shm/mpich_shm")}  # fmt: skip
        return pids

    def assert_all_gone(self) -> int:
        """mpiexec's exit status, once it and every rank have ended (within ``GONE_S`` of the
        call); the job is killed (and the test fails) otherwise."""
        try:
            code = self.proc.wait(timeout=GONE_S)
            deadline = time.monotonic() + 1.0  # ranks are reaped by hydra's proxy
            while self.ranks() and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not self.ranks(), f"ranks {sorted(self.ranks())} still run after mpiexec ended"
            return code
        except subprocess.TimeoutExpired:
            pytest.fail(f"ranks {sorted(self.ranks())} still run {GONE_S} s after the fault")
        finally:
            self.kill()

    def kill(self) -> None:
        """Clean-up: SIGKILL mpiexec's session and any rank left; remove the job's
        shared-memory segments."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        for pid in self.ranks().values():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for segment in self.segments:
            segment.unlink(missing_ok=True)

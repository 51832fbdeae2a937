"""Long-lived tuning workers: one process pays the imports (GT4Py, DaCe) and the numpy
reference run once, then builds or measures every schedule sent to it.

A :class:`WorkerServer` runs ``python -m mapping.tuning.worker`` in ``serve`` (measure) or
``serve-build`` mode: each schedule goes to its stdin as a JSON line and its record comes back
on stdout behind :data:`RESULT_MARK` (other output of the child, such as
a compiler's, is skipped). A child that dies or does not answer in time is killed; the caller
reads which of the two it was (:attr:`WorkerServer.died`) and decides whether to start a fresh
one and retry.
"""

from __future__ import annotations

import json
import logging
import os
import select
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mapping.tuning.schedule import Schedule
from stencils.exit_status import exit_description

log = logging.getLogger(__name__)

#: Prefix of the result lines a serving worker writes to stdout.
RESULT_MARK = "@@stratoflow-result "


class WorkerServer:
    """One serving worker process for ``target``; ``ask(schedule, timeout)`` -> its record or None.

    After an ``ask`` that returned None, :attr:`died` says how the child ended: its exit status
    in words (``SIGSEGV``, ``exit 1``) if it died on its own, or None if it was killed for not
    answering in time."""

    def __init__(
        self,
        mode: str,
        request: Mapping[str, Any],
        env: Mapping[str, str],
        startup_timeout_s: float,
        cores: set[int] | None = None,
    ) -> None:
        if mode not in ("serve", "serve-build"):
            raise ValueError(f"unknown serving mode {mode!r}")
        self.mode = mode
        self.tmp = tempfile.TemporaryDirectory(prefix="stratoflow-serve-")
        tmp = Path(self.tmp.name)
        req = tmp / "request.json"
        req.write_text(json.dumps({**request, "mode": mode, "schedules": []}))
        self.stderr_path = tmp / "stderr.txt"
        self.died: str | None = None
        child_env = {**os.environ, **env}
        with self.stderr_path.open("w") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "mapping.tuning.worker", str(req)],
                env=child_env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True,
                preexec_fn=(lambda: os.sched_setaffinity(0, cores)) if cores else None,
            )  # fmt: skip
        self._ok = self._answer(startup_timeout_s) is not None
        if not self._ok:
            self._kill(f"did not start within {startup_timeout_s:.0f} s")

    @property
    def alive(self) -> bool:
        """Started, answering so far, and its process still running."""
        return self._ok and self.proc.poll() is None

    def _answer(self, timeout: float) -> dict[str, Any] | None:
        """The next result line within ``timeout`` seconds, or None (child died or is too slow)."""
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            line = self.proc.stdout.readline()
            if not line:  # end of output: the child is exiting
                self._reap()
                return None
            if line.startswith(RESULT_MARK):
                return json.loads(line[len(RESULT_MARK):])
        return None

    def ask(self, schedule: Schedule, timeout: float) -> dict[str, Any] | None:
        """Send ``schedule``; its record, or None after killing a child that died or timed out."""
        if not self.alive:
            return None
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps(schedule.to_dict()) + "\n")
            self.proc.stdin.flush()
        except OSError:  # its input closed: the child is exiting
            self._reap()
            rec = None
        else:
            rec = self._answer(timeout)
        if rec is None:
            code = self.proc.poll()
            if code is None:
                self._kill(f"no answer for {schedule.describe()} within {timeout:.0f} s")
            else:
                self.died = exit_description(code)
                self._kill(f"died running {schedule.describe()}")
        return rec

    def _reap(self, seconds: float = 30.0) -> None:
        """Wait up to ``seconds`` for an exiting child, so its exit status can be read."""
        try:
            self.proc.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            pass

    def stderr_tail(self, chars: int = 1500) -> str:
        try:
            return self.stderr_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def _kill(self, why: str) -> None:
        self._ok = False
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        log.warning("tuning worker (%s) ended: %s (exit %s): %s", self.mode, why, self.proc.returncode,
                    self.stderr_tail())  # fmt: skip

    def close(self) -> None:
        """End the child (EOF on its stdin, then kill if it lingers) and remove its files."""
        if self.proc.poll() is None:
            try:
                if self.proc.stdin is not None:
                    self.proc.stdin.close()
                self.proc.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        self._ok = False
        self.tmp.cleanup()

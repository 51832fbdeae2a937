"""Peak resident memory of a command and every process it starts.

Two figures, because a process tree has no single "peak RSS":

* ``largest_process_MB``: the peak RSS of the largest single process of the tree: the largest
  ``VmHWM`` (the high-water mark of the process's own address space since its ``exec``) of the
  tree's processes, sampled from ``/proc`` every ``interval`` seconds (processes that live
  shorter than that may be missed). ``wait4``'s ``ru_maxrss`` is not used for it: a process
  started by fork and exec keeps the RSS its parent had when it forked as its ``ru_maxrss``, so
  a command started by a large process (this benchmark, after building a C192 model) would
  report the parent's size;
* ``tree_peak_MB``: the largest sum of the current RSS of all live processes of the tree,
  sampled from ``/proc`` every ``interval`` seconds (a lower bound of the true peak sum; 0
  where ``/proc`` is absent).
"""

from __future__ import annotations

import logging
import os
import resource
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


@dataclass(frozen=True)
class MemoryUsage:
    """Peak memory and wall time of one command."""

    command: list[str]
    returncode: int
    wall_s: float
    largest_process_MB: float
    tree_peak_MB: float
    tree_peak_processes: int

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def proc_stats() -> dict[int, list[str]]:
    """pid -> the fields of ``/proc/PID/stat`` after ``(comm)`` (state, ppid, ...; ``proc(5)``
    field n is item n - 3) of every process readable now; empty where ``/proc`` is absent."""
    out: dict[int, list[str]] = {}
    root = Path("/proc")
    if not root.is_dir():
        return out
    for entry in root.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        out[int(entry.name)] = stat[stat.rindex(")") + 2 :].split()
    return out


def _children_of() -> dict[int, list[int]]:
    """ppid -> pids of every process in /proc."""
    out: dict[int, list[int]] = {}
    for pid, fields in proc_stats().items():
        out.setdefault(int(fields[1]), []).append(pid)
    return out


def tree_rss_bytes(root: int) -> tuple[int, int]:
    """(sum of the resident bytes, number) of the live processes of ``root``'s tree."""
    total, count, _ = tree_memory(root)
    return total, count


def tree_memory(root: int) -> tuple[int, int, int]:
    """(sum of the resident bytes, number, largest ``VmHWM`` in bytes) of the live processes of
    ``root``'s tree."""
    children = _children_of()
    total, count, largest, todo = 0, 0, 0, [root]
    while todo:
        pid = todo.pop()
        try:
            resident = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
        except (OSError, IndexError, ValueError):
            continue
        total += resident * _PAGE
        count += 1
        largest = max(largest, _high_water_bytes(pid))
        todo.extend(children.get(pid, ()))
    return total, count, largest


def _high_water_bytes(pid: int) -> int:
    """``VmHWM`` of ``/proc/PID/status`` (peak RSS of the process since its exec), bytes; 0 if
    unreadable."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024  # kB
    except (OSError, IndexError, ValueError):
        pass
    return 0


def peak_memory(
    command: Sequence[str],
    *,
    env: dict[str, str] | None = None,
    cwd: Path | str | None = None,
    interval: float = 0.1,
    timeout: float | None = None,
    capture: bool = True,
) -> tuple[MemoryUsage, str, str]:
    """Run ``command`` to its end; its :class:`MemoryUsage`, stdout and stderr (empty unless
    ``capture``).  ``timeout``: seconds before the command is killed (returncode -9)."""
    sampling = Path("/proc/self/statm").exists()
    pipe = subprocess.PIPE if capture else None
    t0 = time.perf_counter()
    proc = subprocess.Popen(list(command), env=env, cwd=cwd, stdout=pipe, stderr=pipe, text=True)
    peak, peak_count, largest = [0], [0], [0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(interval):
            total, count, high = tree_memory(proc.pid)
            largest[0] = max(largest[0], high)
            if total > peak[0]:
                peak[0], peak_count[0] = total, count

    out: list[str] = ["", ""]
    sampler = threading.Thread(target=sample, daemon=True) if sampling else None
    if sampler:
        sampler.start()
    # wait4 reaps the child itself (Popen must not): the pipes are read by threads meanwhile
    reader = threading.Thread(target=_read_pipes, args=(proc, out), daemon=True)
    if capture:
        reader.start()
    deadline = None if timeout is None else t0 + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if deadline is not None and time.perf_counter() > deadline:
            proc.kill()
        time.sleep(min(interval, 0.05))
    wall = time.perf_counter() - t0
    done.set()
    if sampler:
        sampler.join()
    if capture:
        reader.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    del usage  # its ru_maxrss includes the RSS this process had when it started the command
    usage_out = MemoryUsage(list(command), proc.returncode, wall, largest[0] / 1e6, peak[0] / 1e6,
                            peak_count[0])  # fmt: skip
    log.info("peak memory of %s: largest process %.0f MB, tree %.0f MB (%d processes), %.1f s",
             command[0], usage_out.largest_process_MB, usage_out.tree_peak_MB,
             usage_out.tree_peak_processes, wall)  # fmt: skip
    return usage_out, out[0], out[1]


def _read_pipes(proc: subprocess.Popen, out: list[str]) -> None:
    """Read ``proc``'s stdout and stderr to their ends into ``out`` (two threads)."""

    def read(stream: Any, index: int) -> None:
        out[index] = stream.read() if stream is not None else ""

    threads = [threading.Thread(target=read, args=(proc.stdout, 0), daemon=True),
               threading.Thread(target=read, args=(proc.stderr, 1), daemon=True)]  # fmt: skip
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def self_peak_rss_MB() -> float:
    """This process's own peak RSS (``ru_maxrss``), MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e6

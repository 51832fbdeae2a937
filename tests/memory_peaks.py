"""Each test's peak memory, recorded by the suite's conftest (a pytest plug-in module).

Before a test's set-up the kernel's high-water mark of the test process's resident set is
reset (``5`` written to ``/proc/self/clear_refs``) and the resident set then (``VmRSS``) noted;
after its teardown ``VmHWM`` of ``/proc/self/status`` minus that is what the test itself took at
its peak, set-up and fixtures included (``self_mb``). A pytest-xdist worker runs many tests, and
what earlier tests left resident (imported libraries, built stencils) is the worker's, not the
test's: it is recorded beside as ``process_mb``, the process's whole peak.

The processes a test starts (the bad-input commands, ``mpiexec`` and its ranks, compilers) are
sampled while it runs (:class:`DescendantSampler`): every ``SAMPLE_S`` seconds the process tree
below the test process is walked and each process's proportional set size (``Pss`` of
``/proc/PID/smaps_rollup``: its private pages plus its share of pages it shares) summed;
``children_mb`` is the largest sum, what the test's processes held together. The largest
high-water mark (``VmHWM``) of any one of them that called ``exec`` is kept beside
(``child_hwm_mb``), so a spike between two samples still shows. ``RUSAGE_CHILDREN`` is no measure here: a child forked from a large
worker inherits the worker's high-water mark until it calls ``exec``. For the same reason a
process is counted only once it has called ``exec`` (its command line differs from the worker's)
or has lived through two samples (a ``fork`` without ``exec``, counted by its private pages).
All of it travels with the teardown report (``user_properties``), so pytest-xdist's workers
report to the controller.

The terminal summary names the largest peaks; the whole table is written to
``$STRATOFLOW_TEST_MEMORY`` (default ``.pytest_cache/stratoflow-test-memory.json``); the tests
above ``$STRATOFLOW_TEST_MEMORY_LIMIT_MB`` (default 2048) are named in red, and with
``STRATOFLOW_TEST_MEMORY_STRICT=1`` they fail the session.
"""

from __future__ import annotations

import json
import os
import resource
import threading
from pathlib import Path
from typing import Any

import pytest

LIMIT_MB = float(os.environ.get("STRATOFLOW_TEST_MEMORY_LIMIT_MB") or 2048)
_PEAKS = pytest.StashKey[dict[str, dict[str, float]]]()
_SAMPLER = pytest.StashKey["DescendantSampler"]()
SAMPLE_S = float(os.environ.get("STRATOFLOW_TEST_MEMORY_SAMPLE_S") or 0.05)
_RESIDENT_BEFORE = pytest.StashKey[float]()


def reset_peak() -> bool:
    """Reset this process's resident-set high-water mark; False where the kernel has no such
    interface (then the peak is the process's peak so far)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def _status_kb(pid: int | str, key: str) -> int:
    """A ``/proc/PID/status`` entry in kB (0 where the process or the entry is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def peak_mb() -> float:
    """This process's resident-set high-water mark (VmHWM) in MiB since the last reset."""
    return (_status_kb("self", "VmHWM") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) / 1024


def resident_mb() -> float:
    """This process's resident set now (VmRSS) in MiB (0 where /proc is missing)."""
    return _status_kb("self", "VmRSS") / 1024


def _rollup_kb(pid: int, keys: tuple[str, ...]) -> int:
    """The sum of ``/proc/PID/smaps_rollup`` entries in kB (0 where the process is gone)."""
    total = 0
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.split(":")[0] in keys:
                total += int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return 0
    return total


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def descendants(pid: int) -> list[int]:
    """The processes below ``pid`` (children of any of its threads, and theirs), from
    ``/proc/PID/task/TID/children``."""
    found: list[int] = []
    todo = [pid]
    while todo:
        parent = todo.pop()
        try:
            tasks = list(Path(f"/proc/{parent}/task").iterdir())
        except OSError:
            continue
        for task in tasks:
            try:
                kids = [int(c) for c in (task / "children").read_text().split()]
            except (OSError, ValueError):
                continue
            found.extend(kids)
            todo.extend(kids)
    return found


class DescendantSampler(threading.Thread):
    """Samples the memory of the processes below this one while a test runs (see the module's
    docstring): ``peak_pss_mb`` is the largest sum of their ``Pss``, ``peak_hwm_mb`` the largest
    ``VmHWM`` of any one of them."""

    def __init__(self, interval_s: float = SAMPLE_S) -> None:
        super().__init__(name="stratoflow-memory-sampler", daemon=True)
        self.interval_s = interval_s
        self.peak_pss_mb = 0.0
        self.peak_hwm_mb = 0.0
        self._own = _cmdline(os.getpid())
        self._seen: set[int] = set()
        self._done = threading.Event()

    def sample(self) -> None:
        total_kb = 0
        alive: set[int] = set()
        for pid in descendants(os.getpid()):
            alive.add(pid)
            if _cmdline(pid) != self._own:
                total_kb += _rollup_kb(pid, ("Pss",))
                self.peak_hwm_mb = max(self.peak_hwm_mb, _status_kb(pid, "VmHWM") / 1024)
            elif pid in self._seen:  # a fork that stays: what it does not share with the worker
                total_kb += _rollup_kb(pid, ("Private_Clean", "Private_Dirty"))
        self.peak_pss_mb = max(self.peak_pss_mb, total_kb / 1024)
        self._seen = alive

    def run(self) -> None:
        while not self._done.wait(self.interval_s):
            self.sample()

    def finish(self) -> None:
        """Stop sampling (after one last sample) and wait for the thread."""
        self._done.set()
        self.join()
        self.sample()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    reset_peak()
    item.stash[_RESIDENT_BEFORE] = resident_mb()
    sampler = DescendantSampler()
    sampler.start()
    item.stash[_SAMPLER] = sampler


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]):  # noqa: ANN201
    if call.when == "teardown":
        peak = peak_mb()
        sampler = item.stash.get(_SAMPLER, None)
        if sampler is not None:
            sampler.finish()
        item.user_properties.append(("peak_rss_mb", round(peak - item.stash.get(_RESIDENT_BEFORE, 0.0), 1)))
        item.user_properties.append(("process_rss_mb", round(peak, 1)))
        item.user_properties.append(("child_pss_mb", round(sampler.peak_pss_mb, 1) if sampler else 0.0))
        item.user_properties.append(("child_hwm_mb", round(sampler.peak_hwm_mb, 1) if sampler else 0.0))
    yield


class _Collector:
    """The controller's table of peaks (test id -> this process's and its children's MiB)."""

    def __init__(self, config: pytest.Config) -> None:
        self.peaks = config.stash.setdefault(_PEAKS, {})

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        props = dict(report.user_properties)
        if report.when == "teardown" and "peak_rss_mb" in props:
            self.peaks[report.nodeid] = {"self_mb": props["peak_rss_mb"],
                                         "children_mb": props.get("child_pss_mb", 0.0),
                                         "child_hwm_mb": props.get("child_hwm_mb", 0.0),
                                         "process_mb": props.get("process_rss_mb", 0.0)}  # fmt: skip


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(_Collector(config), "stratoflow-memory-peaks")


def _largest(peaks: dict[str, dict[str, float]]) -> list[tuple[str, float]]:
    return sorted(((n, max(p["self_mb"], p["children_mb"], p.get("child_hwm_mb", 0.0)))
                   for n, p in peaks.items()),
                  key=lambda kv: -kv[1])  # fmt: skip


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    peaks = config.stash.get(_PEAKS, {})
    if not peaks:
        return
    ranked = _largest(peaks)
    path = Path(os.environ.get("STRATOFLOW_TEST_MEMORY") or
                Path(config.rootpath) / ".pytest_cache" / "stratoflow-test-memory.json")  # fmt: skip
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"limit_mb": LIMIT_MB, "largest": dict(ranked[:1]),
                                    "tests": peaks}, indent=1, sort_keys=True) + "\n")  # fmt: skip
    except OSError as exc:
        terminalreporter.write_line(f"test memory: cannot write {path}: {exc}")
    terminalreporter.write_line(
        f"test memory: largest peak {ranked[0][1]:.0f} MiB ({ranked[0][0]}); next: "
        + ", ".join(f"{n} {mb:.0f} MiB" for n, mb in ranked[1:5]) + f"; all in {path}"
    )
    process = max(p.get("process_mb", 0.0) for p in peaks.values())
    terminalreporter.write_line(f"test memory: the largest test process (a worker, with what its "
                                f"earlier tests left resident) peaked at {process:.0f} MiB")  # fmt: skip
    over = [(n, mb) for n, mb in ranked if mb > LIMIT_MB]
    if over:
        terminalreporter.write_line(
            f"test memory: {len(over)} test(s) above the {LIMIT_MB:.0f} MiB limit "
            "($STRATOFLOW_TEST_MEMORY_LIMIT_MB): " + ", ".join(f"{n} {mb:.0f} MiB" for n, mb in over),
            red=True,
        )


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if os.environ.get("STRATOFLOW_TEST_MEMORY_STRICT", "") in ("", "0"):
        return
    peaks = session.config.stash.get(_PEAKS, {})
    if any(mb > LIMIT_MB for _, mb in _largest(peaks)) and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED

"""Each test's peak memory, recorded by the suite's conftest (a pytest plug-in module).

Before a test's set-up the kernel's high-water mark of the test process's resident set is
reset (``5`` written to ``/proc/self/clear_refs``) and the resident set then (``VmRSS``) noted;
after its teardown ``VmHWM`` of ``/proc/self/status`` minus that is what the test itself took at
its peak, set-up and fixtures included (``self_mb``). A pytest-xdist worker runs many tests, and
what earlier tests left resident (imported libraries, built stencils) is the worker's, not the
test's: it is recorded beside as ``process_mb``, the process's whole peak. Child processes a test
waits for (the bad-input commands, MPI launches) are covered by ``RUSAGE_CHILDREN``'s
``ru_maxrss``, which rises when a child larger than all earlier ones ends. Both travel with the
teardown report (``user_properties``), so pytest-xdist's workers report to the controller.

The terminal summary names the largest peaks; the whole table is written to
``$STRATOFLOW_TEST_MEMORY`` (default ``.pytest_cache/stratoflow-test-memory.json``); the tests
above ``$STRATOFLOW_TEST_MEMORY_LIMIT_MB`` (default 2048) are named in red, and with
``STRATOFLOW_TEST_MEMORY_STRICT=1`` they fail the session.
"""

from __future__ import annotations

import json
import os
import resource
from pathlib import Path
from typing import Any

import pytest

LIMIT_MB = float(os.environ.get("STRATOFLOW_TEST_MEMORY_LIMIT_MB") or 2048)
_PEAKS = pytest.StashKey[dict[str, dict[str, float]]]()
_CHILDREN_BEFORE = pytest.StashKey[float]()
_RESIDENT_BEFORE = pytest.StashKey[float]()


def reset_peak() -> bool:
    """Reset this process's resident-set high-water mark; False where the kernel has no such
    interface (then the peak is the process's peak so far)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def peak_mb() -> float:
    """This process's resident-set high-water mark (VmHWM) in MiB since the last reset."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def resident_mb() -> float:
    """This process's resident set now (VmRSS) in MiB (0 where /proc is missing)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def children_mb() -> float:
    """The largest resident set of any child process waited for so far, in MiB."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    reset_peak()
    item.stash[_CHILDREN_BEFORE] = children_mb()
    item.stash[_RESIDENT_BEFORE] = resident_mb()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]):  # noqa: ANN201
    if call.when == "teardown":
        before = item.stash.get(_CHILDREN_BEFORE, 0.0)
        after = children_mb()
        peak = peak_mb()
        item.user_properties.append(("peak_rss_mb", round(peak - item.stash.get(_RESIDENT_BEFORE, 0.0), 1)))
        item.user_properties.append(("process_rss_mb", round(peak, 1)))
        item.user_properties.append(("child_peak_rss_mb", round(after, 1) if after > before else 0.0))
    yield


class _Collector:
    """The controller's table of peaks (test id -> this process's and its children's MiB)."""

    def __init__(self, config: pytest.Config) -> None:
        self.peaks = config.stash.setdefault(_PEAKS, {})

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        props = dict(report.user_properties)
        if report.when == "teardown" and "peak_rss_mb" in props:
            self.peaks[report.nodeid] = {"self_mb": props["peak_rss_mb"],
                                         "children_mb": props["child_peak_rss_mb"],
                                         "process_mb": props.get("process_rss_mb", 0.0)}  # fmt: skip


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(_Collector(config), "stratoflow-memory-peaks")


def _largest(peaks: dict[str, dict[str, float]]) -> list[tuple[str, float]]:
    return sorted(((n, max(p["self_mb"], p["children_mb"])) for n, p in peaks.items()),
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

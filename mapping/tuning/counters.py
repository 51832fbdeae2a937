"""Hardware counters (``perf stat``) for the dynamic part of a performance embedding.

The ``ipc`` feature is the instructions per cycle of the stencil's baseline (numpy backend)
calls. ``perf stat`` counts a whole process, Python start-up and imports included, so the
baseline worker runs twice, with few and with many timed calls, and the IPC is the ratio of
the *differences*: the counts of the extra stencil calls alone.

Whether counters can be read is probed once (:func:`probe`) and stored with the embedding as a
status with its reason, e.g. on a VM without a PMU ``perf`` reports ``<not supported>`` for
every hardware event: the feature is then NaN and left out of the distance.
"""

from __future__ import annotations

import functools
import logging
import shutil
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

EVENTS = ("instructions", "cycles")
PARANOID = Path("/proc/sys/kernel/perf_event_paranoid")


@dataclass(frozen=True)
class CounterStatus:
    """Whether hardware counters can be read here, and why not."""

    available: bool
    reason: str

    def to_text(self) -> str:
        return "measured" if self.available else f"unavailable: {self.reason}"


def parse_perf_stat(text: str) -> dict[str, float | None]:
    """``perf stat -x,`` output -> {event: count or None if not supported/counted}."""
    counts: dict[str, float | None] = {}
    for line in text.splitlines():
        parts = line.split(",")
        if len(parts) < 3:
            continue
        value, event = parts[0].strip(), parts[2].strip()
        event = event.split(":")[0]
        if event not in EVENTS:
            continue
        try:
            counts[event] = float(value)
        except ValueError:  # "<not supported>", "<not counted>"
            counts[event] = None
    return counts


def _perf_path() -> str | None:
    return shutil.which("perf")


@functools.lru_cache(maxsize=1)
def probe() -> CounterStatus:
    """Can ``perf stat`` count instructions and cycles on this machine? (cached per process)"""
    perf = _perf_path()
    if perf is None:
        return CounterStatus(False, "no 'perf' executable on PATH (Debian package linux-perf)")
    try:
        paranoid = PARANOID.read_text().strip()
    except OSError:
        paranoid = "?"
    try:
        proc = subprocess.run(
            [perf, "stat", "-x,", "-e", ",".join(EVENTS), "--", "true"],
            capture_output=True, text=True, timeout=30,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        return CounterStatus(False, f"'perf stat' did not run: {exc}")
    counts = parse_perf_stat(proc.stderr)
    if proc.returncode != 0 and not counts:
        return CounterStatus(
            False, f"'perf stat' failed (exit {proc.returncode}, perf_event_paranoid={paranoid}): "
            f"{proc.stderr.strip()[-200:]}",
        )  # fmt: skip
    missing = [e for e in EVENTS if counts.get(e) is None]
    if missing:
        return CounterStatus(
            False, f"'perf stat' reports <not supported> for {', '.join(missing)} "
            f"(no hardware PMU exposed to this machine; perf_event_paranoid={paranoid})",
        )  # fmt: skip
    return CounterStatus(True, f"perf stat counts {', '.join(EVENTS)}")


def perf_prefix() -> list[str]:
    perf = _perf_path() or "perf"
    return [perf, "stat", "-x,", "-e", ",".join(EVENTS), "--"]


def ipc_from_runs(
    run: Callable[[int], str], few: int = 3, many: int = 43
) -> float | None:
    """IPC of the stencil calls alone: ``run(repeats)`` runs the baseline worker under
    :func:`perf_prefix` and returns perf's output; counts of ``few`` are subtracted from those
    of ``many`` repeats."""
    lo, hi = parse_perf_stat(run(few)), parse_perf_stat(run(many))
    try:
        d_ins = float(hi["instructions"]) - float(lo["instructions"])  # type: ignore[arg-type]
        d_cyc = float(hi["cycles"]) - float(lo["cycles"])  # type: ignore[arg-type]
    except (KeyError, TypeError):
        return None
    if d_cyc <= 0 or d_ins <= 0:
        log.warning("perf counts did not grow with the repeats (%s -> %s): no IPC", lo, hi)
        return None
    return d_ins / d_cyc


def status_dict(status: CounterStatus) -> Mapping[str, str]:
    return {"ipc": status.to_text()}

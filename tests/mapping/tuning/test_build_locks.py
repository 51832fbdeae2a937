"""Build locks of tuned builds (mapping.tuning.building.build_lock_name): distinct builds of one
definition compile in parallel, two evaluations of the same build never do.

Reference: GT4Py's stencil ID by construction (every option of a compiled build enters it, the
OpenMP run-time settings do not; the numpy backend ignores build options). Loads or compiles
gt:cpu_ifirst for laplacian_2d into the test suite's stencil cache (shared with test_serving)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from mapping.tuning.building import build_lock_name, compile_definition
from mapping.tuning.schedule import Schedule
from mapping.tuning.targets import resolve
from stencils.build_lock import build_lock

GT1 = Schedule("gt:cpu_ifirst", threads=1)
GT2 = Schedule("gt:cpu_ifirst", threads=2)


def test_lock_names_follow_the_build_not_the_definition() -> None:
    """Same build, other threads: one lock; other backend or flags: another; numpy: one per backend."""
    d = resolve("laplacian_2d").definition
    assert build_lock_name(d, GT1) == build_lock_name(d, GT2)
    names = {build_lock_name(d, s) for s in (GT1, Schedule("gt:cpu_kfirst"), Schedule("numpy"),
                                              Schedule("gt:cpu_ifirst", opt_flags="-O3 -march=native"))}  # fmt: skip
    assert len(names) == 4
    assert build_lock_name(d, Schedule("numpy")) == build_lock_name(d, Schedule("numpy", oir_skip=("IJCacheDetection",)))


def test_a_held_build_lock_blocks_only_that_build() -> None:
    """While GT1's lock is held, the numpy build of the same definition completes and GT2 (the
    same build) waits; released, GT2 loads or compiles and returns the stencil."""
    target = resolve("laplacian_2d")
    cache = Path(os.environ["STRATOFLOW_CACHE_DIR"])
    done: dict[str, object] = {}

    def build(label: str, schedule: Schedule) -> threading.Thread:
        def go() -> None:
            done[label] = compile_definition(target.definition, target.externals, schedule, cache)[0]

        t = threading.Thread(target=go, daemon=True)
        t.start()
        return t

    with build_lock(cache, build_lock_name(target.definition, GT1)):
        other = build("numpy", Schedule("numpy"))
        other.join(timeout=300)
        assert "numpy" in done, "a build of another stencil ID waited for the held lock"
        same = build("gt", GT2)
        same.join(timeout=2.0)
        assert same.is_alive() and "gt" not in done
    same.join(timeout=600)
    assert done.get("gt") is not None

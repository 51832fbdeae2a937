"""Schedule spaces: every schedule a search may try for a stencil.

``full``     the product of all knobs (several thousand schedules; searched with a budget)
``compact``  five builds x twelve OpenMP settings + numpy (61 schedules) that the
             leave-one-out benchmark searches exhaustively (compilation is the limit here)
``tiny``     numpy + one compiled backend, for tests

Knobs: backend/layout; C++ flags (``-march=native``); GT4Py OIR passes skipped (on-the-fly
fusion of temporaries, IJ/K caches); for dace backends SDFG transformations (OpenMP schedule,
collapse, sequential inner maps, MapTiling, MapFusion, vectorisation); OpenMP threads,
thread binding and wait policy (run time only: no rebuild).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

from mapping.tuning.errors import TuningError
from mapping.tuning.schedule import Schedule

#: OpenMP run-time settings: threads x OMP_PROC_BIND x OMP_WAIT_POLICY (no rebuild needed).
RUNTIME_VARIANTS: tuple[tuple[int, str, str], ...] = tuple(
    itertools.product((1, 2), ("", "close", "spread"), ("", "passive"))
)

_GT_FLAGS = ("", "-march=native", "-march=native -funroll-loops")
_OIR_SKIPS: tuple[tuple[str, ...], ...] = (
    (),
    ("OnTheFlyMerging",),
    ("IJCacheDetection", "KCacheDetection"),
)
_OMP = ((), (("omp_schedule", (("kind", "dynamic"),)),), (("omp_schedule", (("kind", "guided"),)),))
_COLLAPSE = ((), (("collapse", ()),))
_INNER = ((), (("inner_sequential", ()),))
_TILE = ((), (("tile", (("sizes", (8, 8)),)),), (("tile", (("sizes", (32, 8)),)),))
_EXTRA = ((), (("map_fusion", ()),), (("vectorize", (("width", 4),)),))


def _with_runtime(builds: list[Schedule]) -> list[Schedule]:
    out = []
    for b in builds:
        for threads, bind, wait in RUNTIME_VARIANTS:
            out.append(
                Schedule(b.backend, b.opt_flags, b.oir_skip, b.sdfg, threads, bind, wait, b.label)
            )
    return out


def full_space() -> list[Schedule]:
    builds: list[Schedule] = []
    for backend in ("gt:cpu_ifirst", "gt:cpu_kfirst"):
        for flags, skip in itertools.product(_GT_FLAGS, _OIR_SKIPS):
            builds.append(Schedule(backend, flags, skip))
    for backend in ("dace:cpu", "dace:cpu_KJI", "dace:cpu_kfirst"):
        for flags, skip in itertools.product(_GT_FLAGS[:2], _OIR_SKIPS[:2]):
            for parts in itertools.product(_OMP, _COLLAPSE, _INNER, _TILE, _EXTRA):
                sdfg = tuple(t for part in parts for t in part)
                builds.append(Schedule(backend, flags, skip, sdfg))
    return [Schedule("numpy", label="numpy")] + _with_runtime(builds)


def compact_builds() -> list[Schedule]:
    """The five builds of the compact space (one per line of the docs' table)."""
    return [
        Schedule("gt:cpu_ifirst", label="gt ifirst"),
        Schedule("gt:cpu_kfirst", label="gt kfirst"),
        Schedule("dace:cpu", label="dace IJK"),
        Schedule("dace:cpu_KJI", label="dace KJI"),
        Schedule("dace:cpu_KJI", sdfg=_OMP[1] + _COLLAPSE[1], label="dace KJI dynamic+collapse"),
    ]


def compact_space() -> list[Schedule]:
    return [Schedule("numpy", label="numpy")] + _with_runtime(compact_builds())


def tiny_space() -> list[Schedule]:
    return [
        Schedule("numpy", label="numpy"),
        Schedule("gt:cpu_ifirst", threads=1, label="gt ifirst"),
        Schedule("gt:cpu_ifirst", threads=2, label="gt ifirst"),
    ]


SPACES: dict[str, Callable[[], list[Schedule]]] = {
    "full": full_space,
    "compact": compact_space,
    "tiny": tiny_space,
}


def get_space(name: str) -> list[Schedule]:
    try:
        return SPACES[name]()
    except KeyError:
        raise TuningError(f"unknown schedule space {name!r}; use one of {sorted(SPACES)}") from None

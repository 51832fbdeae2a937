"""SDFG transformations a schedule can ask for, applied to a GT4Py stencil's SDFG.

Each kind is a function ``(sdfg, **params) -> int`` returning how many places it changed; a
kind that changes nothing raises :class:`TuningError`, so that a schedule that is a no-op on a
stencil is recorded as invalid rather than measured as a duplicate of another schedule.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from mapping.tuning.errors import TuningError

log = logging.getLogger(__name__)


def _parallel_maps(sdfg: Any, top_level: bool | None = None) -> list[tuple[Any, Any]]:
    from dace import dtypes
    from dace.sdfg import nodes

    found = []
    for node, state in sdfg.all_nodes_recursive():
        if isinstance(node, nodes.MapEntry) and node.map.schedule == dtypes.ScheduleType.CPU_Multicore:
            nested = state.entry_node(node) is not None
            if top_level is None or top_level != nested:
                found.append((node, state))
    return found


def _horizontal(node: Any) -> bool:
    params = [str(p) for p in node.map.params]
    return params and all(p in ("__i", "__j") for p in params)


def omp_schedule(sdfg: Any, kind: str = "static", chunk: int = 0) -> int:
    from dace import dtypes

    kinds = {
        "static": dtypes.OMPScheduleType.Static,
        "dynamic": dtypes.OMPScheduleType.Dynamic,
        "guided": dtypes.OMPScheduleType.Guided,
    }
    if kind not in kinds:
        raise TuningError(f"omp_schedule kind {kind!r}: use one of {sorted(kinds)}")
    maps = _parallel_maps(sdfg)
    for node, _ in maps:
        node.map.omp_schedule = kinds[kind]
        if chunk:
            node.map.omp_chunk_size = int(chunk)
    return len(maps)


def collapse(sdfg: Any) -> int:
    n = 0
    for node, _ in _parallel_maps(sdfg):
        if len(node.map.params) > 1:
            node.map.collapse = len(node.map.params)
            n += 1
    return n


def inner_sequential(sdfg: Any) -> int:
    from dace import dtypes

    maps = _parallel_maps(sdfg, top_level=False)
    for node, _ in maps:
        node.map.schedule = dtypes.ScheduleType.Sequential
    return len(maps)


def tile(sdfg: Any, sizes: tuple[int, ...] = (8, 8)) -> int:
    from dace.transformation.dataflow import MapTiling

    n = 0
    for node, state in [(m, s) for m, s in _parallel_maps(sdfg) if _horizontal(m)]:
        MapTiling.apply_to(
            state.sdfg,
            options={"tile_sizes": tuple(int(s) for s in sizes), "divides_evenly": False},
            map_entry=node,
            verify=False,
            save=False,
        )
        n += 1
    return n


def map_fusion(sdfg: Any) -> int:
    from dace.transformation.dataflow import MapFusionVertical

    return int(sdfg.apply_transformations_repeated(MapFusionVertical, validate=False))


def vectorize(sdfg: Any, width: int = 4) -> int:
    """DaCe's ``Vectorization`` once on every map it applies to. Not repeated: each application
    adds a scalar remainder map that matches again, so repeated application never ends."""
    from dace.sdfg import nodes
    from dace.transformation.dataflow import Vectorization

    options = {"vector_len": int(width)}
    maps = [(node, state) for node, state in sdfg.all_nodes_recursive() if isinstance(node, nodes.MapEntry)]
    todo = [(n, s) for n, s in maps if Vectorization.can_be_applied_to(s.sdfg, options=options, map_entry=n)]
    for node, state in todo:
        Vectorization.apply_to(state.sdfg, options=options, map_entry=node, verify=False, save=False)
    return len(todo)


TRANSFORMS: dict[str, Callable[..., int]] = {
    "omp_schedule": omp_schedule,
    "collapse": collapse,
    "inner_sequential": inner_sequential,
    "tile": tile,
    "map_fusion": map_fusion,
    "vectorize": vectorize,
}


def apply_transforms(sdfg: Any, spec: list[tuple[str, dict[str, Any]]]) -> None:
    """Apply ``[[kind, params], ...]`` in order; raise TuningError if one does not apply."""
    for kind, params in spec:
        fn = TRANSFORMS.get(kind)
        if fn is None:
            raise TuningError(f"unknown SDFG transformation {kind!r}; known: {sorted(TRANSFORMS)}")
        changed = fn(sdfg, **params)
        log.debug("SDFG %s: %s%s changed %d places", sdfg.name, kind, params, changed)
        if changed == 0:
            raise TuningError(
                f"SDFG transformation {kind}{params or ''} does not apply to stencil {sdfg.name!r}"
            )

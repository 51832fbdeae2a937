"""The registry of step kinds: ``kind`` in a spec -> the adapter that runs it."""

from __future__ import annotations

from workflows.kinds.base import Kind, PlanContext, TaskPlan
from workflows.kinds.generic import CommandKind, MPIKind
from workflows.kinds.science import (
    ENS10EvaluateKind,
    ENS10SampleKind,
    ENS10TrainKind,
    FV3Kind,
    MapKind,
    StencilsDemoKind,
    TuneKind,
)

KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        CommandKind(),
        MPIKind(),
        StencilsDemoKind(),
        FV3Kind(),
        MapKind(),
        TuneKind(),
        ENS10SampleKind(),
        ENS10TrainKind(),
        ENS10EvaluateKind(),
    )
}

__all__ = ["KINDS", "Kind", "PlanContext", "TaskPlan"]

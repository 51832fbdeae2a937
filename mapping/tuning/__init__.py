"""Schedule tuning and transfer tuning for GTScript stencils (see docs/tuning.md).

Schedules (:mod:`.schedule`) over spaces (:mod:`.space`) are built, validated against the numpy
backend and timed in child processes (:mod:`.measure`), searched exhaustively, randomly or with
optuna (:mod:`.search`), stored with performance embeddings (:mod:`.features`) in a SQLite
database (:mod:`.db`), transferred by nearest neighbours (:mod:`.transfer`), and used by
:class:`TunedStencilFactory` once applied.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Schedule", "TuningDB", "TuningError", "TunedStencilFactory"]


def __getattr__(name: str) -> Any:  # lazy: importing the package must not import gt4py
    if name == "Schedule":
        from mapping.tuning.schedule import Schedule

        return Schedule
    if name == "TuningDB":
        from mapping.tuning.db import TuningDB

        return TuningDB
    if name == "TuningError":
        from mapping.tuning.errors import TuningError

        return TuningError
    if name == "TunedStencilFactory":
        from mapping.tuning.factory import TunedStencilFactory

        return TunedStencilFactory
    raise AttributeError(f"module 'mapping.tuning' has no attribute {name!r}")

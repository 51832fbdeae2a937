"""The stencil factory fv3core builds with: applied tuned schedules are used automatically.

``stratoflow tune apply STENCIL`` records a schedule in the tuning database
(``$STRATOFLOW_TUNING_DB`` or ``~/.cache/stratoflow/tuning.sqlite``). When that database exists
and holds applied schedules, fv3core's runs build through
:class:`mapping.tuning.TunedStencilFactory`, so each applied stencil gets its tuned backend and
flags and every other stencil the run's backend. ``STRATOFLOW_TUNED=0`` turns this off. No
database file is created by a run.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from stencils.config import env_flag
from stencils.factory import StencilFactory

log = logging.getLogger(__name__)


def _tuning_db() -> Path | None:
    """The tuning database fv3core runs read, or None (``STRATOFLOW_TUNED=0``, no file)."""
    if not env_flag("STRATOFLOW_TUNED", True):
        return None
    from mapping.tuning.db import default_db_path

    path = default_db_path()
    return path if path.is_file() else None


def applied_schedules() -> dict[str, Any]:
    """Stencil name -> the applied tuned ``Schedule`` that fv3core runs build it with (empty
    without a database or with ``STRATOFLOW_TUNED=0``): part of what decides a run's result."""
    path = _tuning_db()
    if path is None:
        return {}
    from mapping.tuning.db import TuningDB

    return TuningDB(path).applied()


def stencil_factory(backend: str) -> StencilFactory:
    """A :class:`TunedStencilFactory` for ``backend`` when applied schedules exist, else a
    plain :class:`StencilFactory`."""
    path = _tuning_db()
    if path is None:
        return StencilFactory(backend)
    from mapping.tuning.factory import TunedStencilFactory

    factory = TunedStencilFactory(backend, db=path)
    if not factory.applied:
        return StencilFactory(backend)
    log.info("tuned schedules applied from %s: %s", path, ", ".join(sorted(factory.applied)))
    return factory

"""Build stencils with their applied tuned schedule: a drop-in :class:`StencilFactory`.

``stratoflow tune apply STENCIL`` records a stencil's best schedule in the tuning database;
``TunedStencilFactory`` (used instead of ``StencilFactory`` by fv3core or a workflow that opts
in) builds that stencil with the schedule's backend, compiler flags, OIR passes and SDFG
transformations, and every other stencil as its config says. A stencil is matched by its
library name (``hdiff``) or by ``module:function`` of its definition (with externals,
``module:function[x,iord=5]`` first: :func:`mapping.tuning.targets.names_for_externals`).
The schedule's OpenMP settings cannot change an already-running process: they are logged (set ``OMP_NUM_THREADS`` /
``OMP_PROC_BIND`` before starting Python, as ``stratoflow tune apply`` prints).
"""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from mapping.tuning.db import TuningDB
from mapping.tuning.schedule import Schedule
from stencils.config import StencilConfig
from stencils.errors import StencilError
from stencils.factory import Stencil, StencilFactory

log = logging.getLogger(__name__)


def stencil_names(
    definition: Callable[..., None], externals: Mapping[str, Any] | None = None
) -> list[str]:
    """Names under which a definition built with ``externals`` can be tuned, most specific
    first: library name(s), then ``module:function[x,...]`` forms, then ``module:function``."""
    from mapping.tuning.targets import names_for_externals
    from stencils.library import LIBRARY

    names = [n for n, ls in LIBRARY.items() if ls.definition is definition]
    names += names_for_externals(f"{definition.__module__}:{definition.__name__}", dict(externals or {}))
    return names


class TunedStencilFactory(StencilFactory):
    """A StencilFactory that uses the applied tuned schedule of a stencil when there is one."""

    def __init__(
        self,
        config: StencilConfig | str | None = None,
        db: TuningDB | Path | str | None = None,
    ) -> None:
        super().__init__(config)
        self.db = db if isinstance(db, TuningDB) else TuningDB(db)
        self.applied: dict[str, Schedule] = self.db.applied()

    def schedule_for(
        self, definition: Callable[..., None], externals: Mapping[str, Any] | None = None
    ) -> tuple[str, Schedule] | None:
        for name in stencil_names(definition, externals):
            if name in self.applied:
                return name, self.applied[name]
        return None

    def _build(
        self, definition: Callable[..., None], externals: Mapping[str, Any] | None, name: str
    ) -> Stencil:
        found = self.schedule_for(definition, externals)
        if found is None:
            return super()._build(definition, externals, name)
        tuned_name, schedule = found
        from gt4py.cartesian import gtscript

        from mapping.tuning.gt4py_hooks import install

        StencilConfig(
            backend=schedule.backend,
            cache_dir=self.config.cache_dir,
            rebuild=self.config.rebuild,
            validate_args=self.config.validate_args,
        ).apply()
        install()
        t0 = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                obj = gtscript.stencil(
                    backend=schedule.backend,
                    definition=definition,
                    externals=dict(externals or {}),
                    rebuild=self.config.rebuild,
                    **schedule.gt4py_options(),
                )
        except Exception as exc:
            raise StencilError(
                f"building stencil {name!r} with its tuned schedule ({schedule.describe()}) "
                f"failed: {type(exc).__name__}: {exc}; remove it with "
                f"'stratoflow tune apply --remove {tuned_name}'"
            ) from exc
        seconds = time.perf_counter() - t0
        env = schedule.environment(0)
        log.info(
            "built %s with tuned schedule %s in %.2f s (run with %s)",
            name, schedule.describe(), seconds, " ".join(f"{k}={v}" for k, v in env.items() if v != "0"),
        )
        return Stencil(obj, name, seconds)

"""Build stencils and programs with their applied tuned schedule: a drop-in :class:`StencilFactory`.

``stratoflow tune apply STENCIL`` records a stencil's best schedule in the tuning database;
``TunedStencilFactory`` (used instead of ``StencilFactory`` by fv3core or a workflow that opts
in) builds that stencil with the schedule's backend, compiler flags, OIR passes and SDFG
transformations, and every other stencil as its config says. A stencil is matched by its
library name (``hdiff``) or by ``module:function`` of its definition (with externals,
``module:function[x,iord=5]`` first: :func:`mapping.tuning.targets.names_for_externals`).

Programs: ``stratoflow tune apply PROGRAM`` records a program's schedule, fusion included;
``factory.tuned_program(program).run(inputs)`` runs a :class:`stencils.program.StencilProgram`
with it (its calls fused as the schedule says, every stencil built with the schedule), and
``program.run(inputs)`` semantics otherwise (see :class:`TunedProgram`).

Tuned builds come from the tuning build cache (``$STRATOFLOW_TUNING_CACHE`` or
``~/.cache/stratoflow/builds``) under the same GT4Py names the tuning workers use
(:mod:`mapping.tuning.building`), so a schedule measured by a search loads in ~0.1 s.
The schedule's OpenMP settings cannot change an already-running process: they are logged (set
``OMP_NUM_THREADS`` / ``OMP_PROC_BIND`` before starting Python, as ``stratoflow tune apply`` prints).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mapping.tuning.db import TuningDB
from mapping.tuning.errors import TuningError
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


def _tuning_cache(build_cache: Path | str | None) -> Path:
    from mapping.tuning.measure import default_cache_dir

    return Path(build_cache) if build_cache else default_cache_dir()


def build_with_schedule(
    definition: Callable[..., None],
    externals: Mapping[str, Any] | None,
    name: str,
    schedule: Schedule,
    build_cache: Path,
    rebuild: bool,
    tuned_name: str,
) -> Stencil:
    """A :class:`Stencil` of ``definition`` built (or loaded from ``build_cache``) as ``schedule`` says."""
    from mapping.tuning.building import compile_definition

    t0 = time.perf_counter()
    try:
        obj, _ = compile_definition(definition, dict(externals or {}), schedule, build_cache, rebuild=rebuild)
    except Exception as exc:
        raise StencilError(
            f"building stencil {name!r} with its tuned schedule ({schedule.describe()}) "
            f"failed: {type(exc).__name__}: {exc}; remove it with "
            f"'stratoflow tune apply --remove {tuned_name}'"
        ) from exc
    seconds = time.perf_counter() - t0
    env = schedule.environment(0)
    log.info(
        "built %s with tuned schedule %s (%s) in %.2f s (run with %s)",
        name, schedule.describe(), tuned_name, seconds,
        " ".join(f"{k}={v}" for k, v in env.items() if v != "0") or "no OpenMP settings",
    )  # fmt: skip
    return Stencil(obj, name, seconds)


class ScheduledStencilFactory(StencilFactory):
    """Builds every stencil with one schedule (the calls of a tuned program)."""

    def __init__(self, schedule: Schedule, config: StencilConfig, build_cache: Path, tuned_name: str) -> None:
        super().__init__(StencilConfig(
            backend=schedule.backend, cache_dir=config.cache_dir, rebuild=config.rebuild,
            validate_args=config.validate_args,
        ))  # fmt: skip
        self.schedule = schedule
        self.build_cache = build_cache
        self.tuned_name = tuned_name

    def _build(
        self, definition: Callable[..., None], externals: Mapping[str, Any] | None, name: str,
        oir_skip: tuple[str, ...] = (),
    ) -> Stencil:  # fmt: skip
        """Built as the schedule says (its own OIR passes; ``oir_skip`` of the call is the
        untuned default and does not apply)."""
        return build_with_schedule(
            definition, externals, name, self.schedule, self.build_cache, self.config.rebuild, self.tuned_name
        )


@dataclass(frozen=True)
class TunedProgram:
    """A program as a :class:`TunedStencilFactory` runs it.

    ``program`` is what runs: the original program, or (with an applied schedule that fuses)
    its rewrite with each fused group as one call (:func:`mapping.tuning.programs.fused_program`);
    ``factory`` builds its calls: a :class:`ScheduledStencilFactory` for the applied schedule,
    else the TunedStencilFactory itself (per-stencil schedules). ``run`` takes and returns what
    :meth:`stencils.program.StencilProgram.run` does.
    """

    program: Any
    factory: StencilFactory
    schedule: Schedule | None = None
    tuned_name: str | None = None

    def build(self) -> list[Stencil]:
        """The program's stencils as built (one per fused group), in call order."""
        return self.program.build(self.factory)

    def run(self, inputs: Mapping[str, np.ndarray], halo: int | None = None) -> dict[str, np.ndarray]:
        return self.program.run(inputs, backend=self.factory, halo=halo)


def _program_signature(program: Any) -> tuple:
    from mapping.tuning.programs import program_calls

    calls = tuple(
        (c.label, c.definition.__module__, c.definition.__qualname__, tuple(sorted(c.bindings.items())),
         repr(sorted(c.externals.items())))
        for c in program_calls(program)
    )  # fmt: skip
    return (tuple(program.inputs), tuple(program.outputs), calls)


class TunedStencilFactory(StencilFactory):
    """A StencilFactory that uses the applied tuned schedule of a stencil (or program) when
    there is one. ``build_cache``: the tuning build cache (default ``$STRATOFLOW_TUNING_CACHE``
    or ~/.cache/stratoflow/builds), where the searches left the schedules' builds."""

    def __init__(
        self,
        config: StencilConfig | str | None = None,
        db: TuningDB | Path | str | None = None,
        build_cache: Path | str | None = None,
    ) -> None:
        super().__init__(config)
        self.db = db if isinstance(db, TuningDB) else TuningDB(db, read_only=True)  # reads only
        self.applied: dict[str, Schedule] = self.db.applied()
        self.build_cache = _tuning_cache(build_cache)

    def schedule_for(
        self, definition: Callable[..., None], externals: Mapping[str, Any] | None = None
    ) -> tuple[str, Schedule] | None:
        for name in stencil_names(definition, externals):
            if name in self.applied:
                return name, self.applied[name]
        return None

    def _build(
        self, definition: Callable[..., None], externals: Mapping[str, Any] | None, name: str,
        oir_skip: tuple[str, ...] = (),
    ) -> Stencil:  # fmt: skip
        found = self.schedule_for(definition, externals)
        if found is None:
            return super()._build(definition, externals, name, oir_skip)
        tuned_name, schedule = found
        if schedule.fuse:
            raise StencilError(
                f"stencil {name!r}: the schedule applied to {tuned_name!r} fuses program calls "
                f"({schedule.describe()}); apply a stencil schedule, or remove it with "
                f"'stratoflow tune apply --remove {tuned_name}'"
            )
        return build_with_schedule(
            definition, externals, name, schedule, self.build_cache, self.config.rebuild, tuned_name
        )

    # -- programs -------------------------------------------------------------------------
    def program_schedule(self, program: Any, name: str | None = None) -> tuple[str, Schedule] | None:
        """(tuned name, schedule) applied to ``program``: under ``name``, its ``program.name``
        (``biharmonic``), or a ``module:attribute`` whose program has the same calls."""
        from mapping.tuning.programs import load_program

        for key in [n for n in (name, program.name) if n]:
            if key in self.applied:
                return key, self.applied[key]
        signature = None
        for key, schedule in self.applied.items():
            if ":" not in key or "[" in key:
                continue
            try:
                other = load_program(key)
            except TuningError:
                continue
            if other is None:
                continue
            signature = signature or _program_signature(program)
            if _program_signature(other) == signature:
                return key, schedule
        return None

    def tuned_program(self, program: Any, name: str | None = None) -> TunedProgram:
        """How ``program`` runs with the applied schedules: ``.run(inputs)`` as
        ``program.run(inputs)``, ``.build()`` for the stencils it builds."""
        found = self.program_schedule(program, name)
        if found is None:
            return TunedProgram(program, self)
        tuned_name, schedule = found
        from mapping.tuning.programs import fused_program

        try:
            runnable = fused_program(program, schedule.fuse, self.build_cache, name=tuned_name)
        except TuningError as exc:
            raise StencilError(
                f"program {program.name!r}: the schedule applied to {tuned_name!r} "
                f"({schedule.describe()}) does not fit it: {exc}; remove it with "
                f"'stratoflow tune apply --remove {tuned_name}'"
            ) from exc
        factory = ScheduledStencilFactory(schedule, self.config, self.build_cache, tuned_name)
        log.info("program %s runs with tuned schedule %s (%s)", program.name, schedule.describe(), tuned_name)
        return TunedProgram(runnable, factory, schedule, tuned_name)

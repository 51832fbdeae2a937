"""Build a GTScript definition as a schedule says, under one deterministic GT4Py name.

GT4Py names a build (its cache directory and the hash of its stencil ID) after the module that
*calls* ``gtscript.stencil`` unless a ``name`` is given, and tuning builds run from several
callers (worker processes run as ``python -m mapping.tuning.worker``, module ``__main__``;
in-process builds from :mod:`mapping.tuning.worker` and :mod:`mapping.tuning.factory`). Every
tuned build is therefore named after its *definition*, ``<definition module>.<function name>``
(as :class:`stencils.StencilFactory` names its builds), so searches, transfers,
re-measurements, :class:`~mapping.tuning.factory.TunedStencilFactory` and tests share one
cache entry per (definition, externals, schedule). The stencil ID also hashes the compile
arguments GT4Py read from ``GT4PY_EXTRA_COMPILE_ARGS`` when it was imported, which depends on
whether gt4py or :mod:`stencils.config` is imported first: it is set to the environment's
value before every build.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from mapping.tuning.schedule import Schedule

log = logging.getLogger(__name__)

def build_name(definition: Callable[..., None]) -> str:
    """The GT4Py qualified name of every tuned build of ``definition``."""
    return f"{definition.__module__}.{definition.__name__}"


def build_lock_name(definition: Callable[..., None], schedule: Schedule) -> str:
    """The :func:`stencils.build_lock.build_lock` name of ``schedule``'s build of ``definition``:
    one per GT4Py stencil ID, so distinct builds of one definition compile in parallel while two
    processes never write the same build. A compiled build's options all enter its ID
    (:attr:`Schedule.build_key`); the other backends ignore them, so theirs is per backend."""
    name = f"{build_name(definition)}@{schedule.backend}"
    return f"{name}.{schedule.build_key}" if schedule.compiled else name


def _gt4py_kwargs(
    definition: Callable[..., None], externals: Mapping[str, Any], schedule: Schedule, cache_dir: str | Path
) -> dict[str, Any]:
    from mapping.tuning.sdfg_option import install
    from stencils.config import StencilConfig

    # also sets GT4Py's compile flags from this process's environment (they enter the stencil
    # ID), so a worker process and an in-process build give the same ID
    StencilConfig(backend=schedule.backend, cache_dir=Path(cache_dir)).apply()
    install()
    return dict(
        backend=schedule.backend, definition=definition, externals=dict(externals), **schedule.gt4py_options()
    )


def _load_cached(kwargs: Mapping[str, Any]) -> Any | None:
    """The stencil object from the cache, or None."""
    from gt4py.cartesian import gtscript

    try:
        return gtscript.stencil(raise_if_not_cached=True, name=build_name(kwargs["definition"]), **kwargs)
    except ValueError as exc:
        if "not up to date in the cache" not in str(exc):
            raise
    return None


def is_cached(
    definition: Callable[..., None], externals: Mapping[str, Any], schedule: Schedule, cache_dir: str | Path
) -> bool:
    """Whether ``schedule``'s build of ``definition`` loads from ``cache_dir`` without compiling
    (False also when the definition changed since it was built)."""
    kwargs = _gt4py_kwargs(definition, externals, schedule, cache_dir)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _load_cached(kwargs) is not None


def compile_definition(
    definition: Callable[..., None],
    externals: Mapping[str, Any],
    schedule: Schedule,
    cache_dir: str | Path,
    rebuild: bool = False,
) -> tuple[Any, bool]:
    """(GT4Py stencil object of ``definition`` built as ``schedule`` says, whether it was compiled
    rather than loaded from the cache in ``cache_dir``)."""
    from gt4py.cartesian import gtscript

    from stencils.build_lock import build_lock

    kwargs = _gt4py_kwargs(definition, externals, schedule, cache_dir)
    with warnings.catch_warnings(), build_lock(Path(cache_dir), build_lock_name(definition, schedule)):
        warnings.simplefilter("ignore")
        if not rebuild:
            obj = _load_cached(kwargs)
            if obj is not None:
                return obj, False
        log.debug("compiling %s as %s", build_name(definition), schedule.describe())
        obj = gtscript.stencil(name=build_name(definition), rebuild=rebuild, **kwargs)
        return obj, schedule.compiled

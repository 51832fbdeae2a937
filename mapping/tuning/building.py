"""Build a GTScript definition as a schedule says, under one deterministic GT4Py name.

GT4Py names a build (its cache directory and the hash of its stencil ID) after the module
that *calls* ``gtscript.stencil`` unless a ``name`` is given. Tuning workers run as
``python -m mapping.tuning.worker`` (module ``__main__``), in-process builds call from
``mapping.tuning.worker`` or ``mapping.tuning.factory``: the same stencil and schedule were
compiled once per caller. Every tuned build is therefore named after its *definition*,
``<definition module>.<function name>`` (as :class:`stencils.StencilFactory` names its builds),
so searches, transfers, re-measurements, :class:`~mapping.tuning.factory.TunedStencilFactory`
and tests share one cache entry per (definition, externals, schedule). The stencil ID also
hashes the compile arguments GT4Py read from ``GT4PY_EXTRA_COMPILE_ARGS`` at its import, which
depended on whether gt4py or :mod:`stencils.config` was imported first: it is set to the
environment's value before every build.

Builds made before this naming (worker builds under ``__main__``, in-process ones under
``mapping.tuning.worker`` / ``mapping.tuning.factory``) are still found: a cache miss under the
definition's name looks for those legacy entries before compiling.
"""

from __future__ import annotations

import logging
import os
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from mapping.tuning.schedule import Schedule

log = logging.getLogger(__name__)

#: Modules builds were named after before the explicit naming (``python -m`` runs ``__main__``).
LEGACY_MODULES: tuple[str, ...] = ("__main__", "mapping.tuning.worker", "mapping.tuning.factory")


def build_name(definition: Callable[..., None]) -> str:
    """The GT4Py qualified name of every tuned build of ``definition``."""
    return f"{definition.__module__}.{definition.__name__}"


def _gt4py_kwargs(
    definition: Callable[..., None], externals: Mapping[str, Any], schedule: Schedule, cache_dir: str | Path
) -> dict[str, Any]:
    from stencils.config import StencilConfig

    StencilConfig(backend=schedule.backend, cache_dir=Path(cache_dir)).apply()
    from gt4py.cartesian import config as gt_config

    from mapping.tuning.gt4py_hooks import install

    # GT4Py reads GT4PY_EXTRA_COMPILE_ARGS into every stencil ID once, when it is imported: a
    # process that imported gt4py before stencils.config added -std=c++20 (a test, fv3core)
    # would give the same build another ID than a worker process does. Use the current value.
    gt_config.GT4PY_EXTRA_COMPILE_ARGS = os.environ.get("GT4PY_EXTRA_COMPILE_ARGS", "")

    install()
    return dict(
        backend=schedule.backend, definition=definition, externals=dict(externals), **schedule.gt4py_options()
    )


def _load_cached(kwargs: Mapping[str, Any]) -> Any | None:
    """The stencil object from the cache under its name or a legacy one, or None."""
    from gt4py.cartesian import gtscript

    definition = kwargs["definition"]
    legacy = [f"{module}.{definition.__name__}" for module in LEGACY_MODULES]
    for name in [build_name(definition), *legacy]:
        try:
            return gtscript.stencil(raise_if_not_cached=True, name=name, **kwargs)
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

    kwargs = _gt4py_kwargs(definition, externals, schedule, cache_dir)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if not rebuild:
            obj = _load_cached(kwargs)
            if obj is not None:
                return obj, False
        log.debug("compiling %s as %s", build_name(definition), schedule.describe())
        obj = gtscript.stencil(name=build_name(definition), rebuild=rebuild, **kwargs)
        return obj, schedule.compiled

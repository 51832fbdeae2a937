"""What can be tuned: a GTScript stencil with a way to make valid inputs.

A target is named either by a stencil library name (``hdiff``) or by ``module:function`` for a
module-level GTScript definition anywhere (e.g. fv3core's stencils). Library stencils bring
their own input generator and halo; other definitions get smooth random inputs with a halo as
wide as their largest horizontal read offset (from :func:`stencils.access.analyse`).
"""

from __future__ import annotations

import importlib
import inspect
import logging
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mapping.tuning.errors import TuningError

log = logging.getLogger(__name__)

#: Packages scanned for module-level GTScript definitions besides the stencil library.
DISCOVER_PACKAGES: tuple[str, ...] = ("fv3core",)


@dataclass(frozen=True)
class TuningTarget:
    """A stencil to tune, with everything needed to run it on a domain."""

    name: str
    definition: Callable[..., None]
    halo: int
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    params: Mapping[str, float] = field(default_factory=dict)
    externals: Mapping[str, Any] = field(default_factory=dict)
    make_inputs: Callable[[Any, np.random.Generator], dict[str, np.ndarray]] | None = None

    def domain(self, nx: int, ny: int, nz: int) -> Any:
        from stencils.storage import Domain

        return Domain(nx, ny, nz, self.halo)

    field_axes: Mapping[str, str] = field(default_factory=dict)  # e.g. {"rarea": "IJ"}; default IJK

    def allocate(self, domain: Any, seed: int = 0) -> dict[str, np.ndarray]:
        """Numpy arrays (with halo) for every field: generated inputs, zeroed outputs."""
        rng = np.random.default_rng(seed)
        if self.make_inputs is not None:
            arrays = self.make_inputs(domain, rng)
        else:
            from stencils.library.base import smooth_field

            arrays = {name: smooth_field(domain, rng) + 2.0 for name in self.inputs}
        for name in self.outputs:
            arrays.setdefault(name, np.zeros(domain.shape, dtype=np.float64))
        for name, axes in self.field_axes.items():
            if axes != "IJK" and name in arrays:
                index = tuple(slice(None) if a in axes else 0 for a in "IJK")
                arrays[name] = np.ascontiguousarray(arrays[name][index])
        return arrays


def _library_target(name: str) -> TuningTarget:
    from stencils.library import LIBRARY

    ls = LIBRARY[name]
    return TuningTarget(
        name=name,
        definition=ls.definition,
        halo=ls.halo,
        inputs=tuple(ls.inputs),
        outputs=tuple(ls.outputs),
        params=dict(ls.params),
        make_inputs=ls.make_inputs,
    )


def analyse_definition(definition: Callable[..., None], externals: Mapping[str, Any] | None = None) -> Any:
    """:func:`stencils.access.analyse`, also for modules with postponed (string) annotations.

    ``gtscript.stencil`` evaluates string annotations, the ``lazy_stencil`` the analysis uses
    does not: evaluate them the way ``gtscript.stencil`` does, and restore them afterwards.
    """
    from gt4py.cartesian import gtscript

    from stencils.access import analyse

    original = gtscript._set_arg_dtypes(definition, {})
    try:
        return analyse(definition, externals)
    finally:
        definition.__annotations__ = original


def _definition_target(name: str, definition: Callable[..., None]) -> TuningTarget:
    try:
        access = analyse_definition(definition)
    except Exception as exc:
        raise TuningError(f"stencil {name!r} cannot be analysed: {exc}") from exc
    halo = max(
        [abs(o[d]) for offs in access.reads.values() for o in offs for d in (0, 1)] or [0]
    )
    outputs = tuple(f for f in access.fields if f in access.writes)
    inputs = tuple(f for f in access.fields if f not in access.writes)
    inout = [f for f in outputs if f in access.reads]
    from gt4py.cartesian.gtc import gtir

    axes = {
        str(p.name): "".join(str(d) for d in ("I", "J", "K") if p.dimensions[("I", "J", "K").index(d)])
        for p in access.gtir.params
        if isinstance(p, gtir.FieldDecl)
    }
    return TuningTarget(
        name=name,
        definition=definition,
        halo=halo,
        inputs=inputs + tuple(inout),
        outputs=outputs,
        params={s: 0.5 for s in access.scalars},
        field_axes=axes,
    )


def is_gtscript_definition(obj: Any) -> bool:
    """A plain function whose parameters are annotated with GTScript ``Field`` types."""
    if not inspect.isfunction(obj):
        return False
    try:
        annotations = inspect.get_annotations(obj)
    except Exception:
        return False
    return any("Field" in repr(a) or "gtscript" in repr(a) for a in annotations.values()) and any(
        "Field" in repr(a) for a in annotations.values()
    )


def discover(packages: tuple[str, ...] = DISCOVER_PACKAGES) -> list[str]:
    """``module:function`` names of the GTScript definitions in ``packages`` that can be tuned
    on their own (see :func:`discover_all` for those that cannot, and why)."""
    return discover_all(packages)[0]


def discover_all(packages: tuple[str, ...] = DISCOVER_PACKAGES) -> tuple[list[str], dict[str, str]]:
    """(tunable names, {name: why not} for definitions that need externals or do not parse)."""
    tunable: list[str] = []
    skipped: dict[str, str] = {}
    for name in _discover_names(packages):
        try:
            resolve(name)
            tunable.append(name)
        except TuningError as exc:
            skipped[name] = str(exc)
            log.info("not tunable on its own: %s", exc)
    return tunable, skipped


def _discover_names(packages: tuple[str, ...]) -> list[str]:
    found: list[str] = []
    for pkg_name in packages:
        try:
            pkg = importlib.import_module(pkg_name)
        except Exception as exc:  # a package that does not import is reported, not fatal
            log.warning("cannot import %s to discover stencils: %s", pkg_name, exc)
            continue
        modules = [pkg_name]
        if hasattr(pkg, "__path__"):
            modules += [m.name for m in pkgutil.walk_packages(pkg.__path__, prefix=pkg_name + ".")]
        for mod_name in modules:
            try:
                module = importlib.import_module(mod_name)
            except Exception as exc:
                log.warning("cannot import %s to discover stencils: %s", mod_name, exc)
                continue
            for attr, obj in sorted(vars(module).items()):
                if (
                    not attr.startswith("_")
                    and is_gtscript_definition(obj)
                    and obj.__module__ == mod_name
                ):
                    found.append(f"{mod_name}:{attr}")
    return found


def library_names() -> list[str]:
    from stencils.library import LIBRARY

    return list(LIBRARY)


def resolve(name: str) -> TuningTarget:
    """The target called ``name`` (library name or ``module:function``)."""
    from stencils.library import LIBRARY

    if name in LIBRARY:
        return _library_target(name)
    if ":" in name:
        mod_name, attr = name.split(":", 1)
        try:
            definition = getattr(importlib.import_module(mod_name), attr)
        except (ImportError, AttributeError) as exc:
            raise TuningError(
                f"stencil {name!r}: cannot import {attr!r} from {mod_name!r} ({exc})"
            ) from exc
        if not is_gtscript_definition(definition):
            raise TuningError(f"{name!r} is not a GTScript stencil definition (Field parameters)")
        return _definition_target(name, definition)
    raise TuningError(
        f"unknown stencil {name!r}: use a library name ({', '.join(LIBRARY)}) or "
        "'module:function' for a GTScript definition (see 'stratoflow tune list')"
    )

"""Which stencils can be tuned: packages register their tunable GTScript definitions.

A :class:`Tunable` names the modules whose module-level GTScript definitions can be tuned (a
package is scanned with all its submodules) and the code-path externals to try, each with the
values the package runs with. Tuning knows no application: :func:`mapping.tuning.targets.discover`
lists what the registrations name, nothing else.

An installed package declares its registration as an entry point of the group
``stratoflow.tunable`` in its ``pyproject.toml`` (the object is a :class:`Tunable`)::

    [project.entry-points."stratoflow.tunable"]
    mypackage = "mypackage.tunable:TUNABLE"

Code that is not an installed package (a script, a test) calls :func:`register` (and
:func:`unregister` when it is done).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

from mapping.tuning.errors import TuningError

log = logging.getLogger(__name__)

#: The entry-point group packages declare their :class:`Tunable` in.
ENTRY_POINT_GROUP = "stratoflow.tunable"


@dataclass(frozen=True)
class Tunable:
    """A package's tunable stencils.

    ``modules``: modules (or packages, scanned with their submodules) whose public module-level
    GTScript definitions are tuning targets. ``externals``: code-path externals and the values
    to try, e.g. ``{"iord": (5, 8)}``; a definition that reads one is tuned once per value.
    ``targets``: target names with explicit externals (``module:function[KEY=VALUE,...]``),
    e.g. the variants the package's models build; a definition named here is tuned as these
    targets only (its scanned variants are left out). ``inputs``: definitions
    (``module:function``) whose generic inputs are unphysical, each with the ``module:function``
    of a maker, ``maker(name, domain)``: on the compute domain ``domain``, the input field
    ``name`` (with as many levels as the model gives it) or the value of the scalar ``name``,
    or None for a generic one. ``renamed``: how targets of older tuning exports (format 1) are
    named today: an old ``module`` or ``module:function`` (the more specific wins) -> its
    module today, or None where that definition is retired (its rows are not imported)."""

    name: str
    modules: tuple[str, ...]
    externals: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    targets: tuple[str, ...] = ()
    inputs: Mapping[str, str] = field(default_factory=dict)
    renamed: Mapping[str, str | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if isinstance(self.modules, str) or not self.modules:
            raise TuningError(
                f"tunable {self.name!r}: modules must be a non-empty tuple of module names, "
                f"got {self.modules!r}"
            )
        object.__setattr__(self, "modules", tuple(self.modules))
        choices = {}
        for key, values in dict(self.externals).items():
            values = tuple(values) if isinstance(values, (tuple, list)) else ()
            if not key.isidentifier() or not values:
                raise TuningError(
                    f"tunable {self.name!r}: external {key!r} needs an identifier as its name "
                    f"and a non-empty tuple of values, got {self.externals[key]!r}"
                )
            choices[key] = values
        object.__setattr__(self, "externals", choices)
        if isinstance(self.targets, str) or not all(isinstance(t, str) and ":" in t for t in self.targets):
            raise TuningError(
                f"tunable {self.name!r}: targets must be a tuple of 'module:function[...]' names, "
                f"got {self.targets!r}"
            )
        object.__setattr__(self, "targets", tuple(self.targets))
        bad = {k: v for k, v in dict(self.inputs).items() if not (":" in str(k) and ":" in str(v))}
        if bad:
            raise TuningError(
                f"tunable {self.name!r}: inputs must map 'module:function' definitions to the "
                f"'module:function' of their field maker, got {bad!r}"
            )
        object.__setattr__(self, "inputs", dict(self.inputs))
        bad = {k: v for k, v in dict(self.renamed).items()
               if not isinstance(k, str) or not (v is None or (isinstance(v, str) and v))}
        if bad:
            raise TuningError(
                f"tunable {self.name!r}: renamed must map old 'module' or 'module:function' names "
                f"to a module name or None, got {bad!r}"
            )
        object.__setattr__(self, "renamed", dict(self.renamed))


class Registry:
    """Registrations by name: the entry points of ``group`` (read once, on first use; ``None``:
    none) and those added with :meth:`register`, which win over an entry point of the same
    name."""

    def __init__(self, group: str | None = ENTRY_POINT_GROUP) -> None:
        self.group = group
        self._explicit: dict[str, Tunable] = {}
        self._installed: dict[str, Tunable] | None = None

    def register(self, tunable: Tunable) -> Tunable:
        if not isinstance(tunable, Tunable):
            raise TuningError(f"register() takes a Tunable, got {type(tunable).__name__}")
        known = self._explicit.get(tunable.name)
        if known is not None and known != tunable:
            raise TuningError(
                f"tunable {tunable.name!r} is registered already ({known}); unregister it first"
            )
        self._explicit[tunable.name] = tunable
        return tunable

    def unregister(self, name: str) -> None:
        if self._explicit.pop(name, None) is None:
            raise TuningError(f"no tunable {name!r} was registered with register()")

    def installed(self) -> dict[str, Tunable]:
        """The registrations of the installed packages' entry points (loaded once)."""
        if self._installed is None:
            self._installed = _load_entry_points(self.group) if self.group else {}
        return dict(self._installed)

    def tunables(self) -> list[Tunable]:
        """Every registration: installed packages' in name order, then explicit ones."""
        merged = {n: t for n, t in sorted(self.installed().items()) if n not in self._explicit}
        return [*merged.values(), *self._explicit.values()]


def _load_entry_points(group: str) -> dict[str, Tunable]:
    found: dict[str, Tunable] = {}
    for ep in metadata.entry_points(group=group):
        try:
            tunable = ep.load()
        except Exception as exc:  # a package that does not import is reported, not fatal
            log.warning("cannot load tunable stencils of entry point %s (%s): %s", ep.name, ep.value, exc)
            continue
        if not isinstance(tunable, Tunable):
            log.warning(
                "entry point %s (%s) of group %s is a %s, not a mapping.tuning.registry.Tunable; "
                "skipped", ep.name, ep.value, group, type(tunable).__name__,
            )  # fmt: skip
            continue
        found[tunable.name] = tunable
    return found


#: The registrations tuning discovers by default.
REGISTRY = Registry()


def register(tunable: Tunable) -> Tunable:
    """Add ``tunable`` to the default registry (for code that is not an installed package)."""
    return REGISTRY.register(tunable)


def unregister(name: str) -> None:
    """Remove a registration made with :func:`register`."""
    REGISTRY.unregister(name)


def registered() -> list[Tunable]:
    """Every registration of the default registry (entry points and :func:`register`)."""
    return REGISTRY.tunables()


def current_name(name: str, tunables: list[Tunable] | None = None) -> str | None:
    """The target ``name`` of an older tuning export (format 1) as the registrations name it
    today (:attr:`Tunable.renamed`), None where its definition is retired; names no
    registration renamed come back unchanged."""
    module, _, rest = name.partition(":")
    definition = rest.split("[", 1)[0]
    for tunable in registered() if tunables is None else tunables:
        for old in (f"{module}:{definition}", module):
            if old in tunable.renamed:
                new = tunable.renamed[old]
                return None if new is None else f"{new}:{rest}"
    return name

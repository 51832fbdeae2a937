"""What can be tuned: a GTScript stencil with a way to make valid inputs.

A target is named either by a stencil library name (``hdiff``) or by ``module:function`` for a
module-level GTScript definition anywhere. Library stencils bring their own input generator and
halo; other definitions get smooth random inputs with a halo as wide as their largest horizontal
read offset (from :func:`stencils.access.analyse`), each field with as many levels as the stencil
accesses (an interface field read one level past the last layer has one more) and of its declared
dtype. :func:`discover` lists the definitions of the modules packages registered
(:mod:`mapping.tuning.registry`).

Definitions that read externals carry them in the name, in brackets:
``module:function[x,iord=5]`` or ``module:function[DI=1,DJ=0]``. ``x``/``y`` stand for the
direction convention of directional stencils (:meth:`stencils.directions.Direction.externals`:
offsets, face offsets and tile-edge regions on the first and last cell of the compute domain);
``key=value`` gives one external (an int, float, ``true``/``false`` or an axis index such as
``I[0]+1`` or ``J[-1]``). The canonical name (direction first, then sorted keys) is the
database key, so each variant is tuned and stored on its own.
"""

from __future__ import annotations

import importlib
import inspect
import itertools
import logging
import pkgutil
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mapping.tuning.errors import TuningError
from mapping.tuning.registry import Tunable, registered
from stencils import directions

log = logging.getLogger(__name__)

_AXIS_RE = re.compile(r"^([IJK])\[(-?\d+)\]\s*(?:([+-])\s*(\d+))?$")
_NAME_RE = re.compile(r"^(?P<base>[^\[\]]+)(?:\[(?P<ext>[^\[\]]*(?:\[[^\]]*\][^\[\]]*)*)\])?$")
_DIRECTION_NAMES = tuple(d.name for d in directions.DIRECTIONS)


def parse_value(text: str) -> Any:
    """An external's value from its text: int, float, true/false or an axis index."""
    text = text.strip()
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    m = _AXIS_RE.match(text)
    if m:
        from gt4py.cartesian import gtscript

        axis = getattr(gtscript, m.group(1))[int(m.group(2))]
        if m.group(3):
            axis = axis + int(m.group(4)) if m.group(3) == "+" else axis - int(m.group(4))
        return axis
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    raise TuningError(
        f"external value {text!r} is not an int, float, true/false or axis index like I[0]+1"
    )


def format_value(value: Any) -> str:
    """Inverse of :func:`parse_value` (raises TuningError for values a name cannot carry)."""
    if isinstance(value, np.generic):  # numpy scalars name as the Python scalar they hold
        value = value.item()
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    axis, index, offset = (getattr(value, k, None) for k in ("axis", "index", "offset"))
    if axis is not None and index is not None:
        off = int(offset or 0)
        return f"{axis}[{int(index)}]" + (f"{off:+d}" if off else "")
    raise TuningError(
        f"external value {value!r} ({type(value).__name__}) cannot be part of a tuning target name"
    )


def split_name(name: str) -> tuple[str, str | None, dict[str, Any]]:
    """``module:function[x,k=v]`` -> (``module:function``, direction or None, {k: value})."""
    m = _NAME_RE.match(name.strip())
    if not m:
        raise TuningError(f"stencil name {name!r}: use NAME, module:function or module:function[x,key=value]")
    direction: str | None = None
    explicit: dict[str, Any] = {}
    for item in _split_items(m.group("ext") or ""):
        if "=" in item:
            key, value = (t.strip() for t in item.split("=", 1))
            if not key.isidentifier():
                raise TuningError(f"stencil name {name!r}: {key!r} is not an external's name")
            explicit[key] = parse_value(value)
        elif item in _DIRECTION_NAMES and direction is None:
            direction = item
        else:
            raise TuningError(
                f"stencil name {name!r}: bracket item {item!r} is neither x, y nor key=value"
            )
    return m.group("base").strip(), direction, explicit


def _split_items(text: str) -> list[str]:
    items, depth, cur = [], 0, ""
    for ch in text:
        depth += ch == "["
        depth -= ch == "]"
        if ch == "," and depth == 0:
            items.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        items.append(cur.strip())
    return items


def canonical_name(base: str, direction: str | None, explicit: Mapping[str, Any]) -> str:
    """The database key of a target: direction first, then sorted ``key=value`` items."""
    items = ([direction] if direction else []) + [
        f"{k}={format_value(v)}" for k, v in sorted(explicit.items())
    ]
    return f"{base}[{','.join(items)}]" if items else base


def canonical(name: str) -> str:
    """The canonical spelling of a target name (no import, no analysis)."""
    return canonical_name(*split_name(name)) if ":" in name else name.strip()


def target_externals(direction: str | None, explicit: Mapping[str, Any]) -> dict[str, Any]:
    ext = directions.direction(direction).externals() if direction else {}
    ext.update(explicit)
    return ext


def names_for_externals(base: str, externals: Mapping[str, Any]) -> list[str]:
    """Target names a build of ``base`` with ``externals`` may be tuned under, most specific
    first: the direction form (``[x,iord=5]``) if the offsets match a direction, the fully
    explicit form, then the bare name. Region bounds are left out of the direction match
    (their values depend on the subdomain, the tuned code path does not)."""
    if not externals:
        return [base]
    names = []
    scalars = {k: v for k, v in externals.items() if isinstance(v, (bool, int, float))}
    for d in directions.DIRECTIONS:
        preset = {k: v for k, v in d.externals().items() if isinstance(v, int)}
        if all(scalars.get(k, v) == v for k, v in preset.items()) and set(preset) & set(scalars):
            rest = {k: v for k, v in scalars.items() if k not in preset}
            names.append(canonical_name(base, d.name, rest))
    try:
        names.append(canonical_name(base, None, externals))
    except TuningError:
        pass
    names.append(base)
    return names


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
    #: levels a field has beyond the compute domain's last (1: an interface field); default 0
    field_levels: Mapping[str, int] = field(default_factory=dict)
    #: dtype of fields that are not float64 (e.g. an integer index field)
    field_dtypes: Mapping[str, Any] = field(default_factory=dict)
    #: the registration's physical inputs, ``maker(name, domain)`` on the compute domain: a
    #: field's array (with the levels it has in the model) or a scalar's value, None where
    #: generic (``Tunable.inputs``)
    field_maker: Callable[[str, Any], Any] | None = None

    def allocate(self, domain: Any, seed: int = 0) -> dict[str, np.ndarray]:
        """Numpy arrays (with halo) for every field: generated inputs, zeroed outputs; each as
        many levels as the stencil accesses and of its declared dtype."""
        rng = np.random.default_rng(seed)
        if self.make_inputs is not None:
            arrays = self.make_inputs(domain, rng)
        else:
            from stencils.library.base import smooth_field

            arrays = {}
            for name in self.inputs:  # generic ones drawn in order, whatever the maker gives
                on = self._field_domain(domain, name)
                generic = smooth_field(on, rng) + 2.0
                made = self.field_maker(name, domain) if self.field_maker is not None else None
                arrays[name] = (generic if made is None else made).astype(self.field_dtypes.get(name, np.float64))
        for name in self.outputs:
            shape = self._field_domain(domain, name).shape
            arrays.setdefault(name, np.zeros(shape, dtype=self.field_dtypes.get(name, np.float64)))
        for name, axes in self.field_axes.items():
            if axes != "IJK" and name in arrays:
                index = tuple(slice(None) if a in axes else 0 for a in "IJK")
                arrays[name] = np.ascontiguousarray(arrays[name][index])
        return arrays

    def scalars(self, domain: Any) -> dict[str, Any]:
        """The scalar arguments on ``domain``: ``params``, with the registration's physical values
        (e.g. a level count) where its field maker gives one."""
        values = dict(self.params)
        if self.field_maker is not None:
            for name in self.params:
                made = self.field_maker(name, domain)
                if made is not None:
                    values[name] = made
        return values

    def _field_domain(self, domain: Any, name: str) -> Any:
        from stencils.storage import Domain

        return Domain(domain.nx, domain.ny, domain.nz + self.field_levels.get(name, 0), domain.halo)


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
    """:func:`stencils.access.analyse` (which evaluates postponed string annotations the way
    ``gtscript.stencil`` does)."""
    from stencils.access import analyse

    return analyse(definition, externals)


def _definition_target(
    name: str, definition: Callable[..., None], externals: Mapping[str, Any] | None = None
) -> TuningTarget:
    try:
        access = analyse_definition(definition, externals)
    except Exception as exc:
        hint = ""
        if "external symbol" in str(exc):
            hint = (
                "; give its externals in the name, e.g. "
                f"'{name.split('[')[0]}[x]' (direction offsets and regions) or '[KEY=VALUE,...]'"
            )
        raise TuningError(f"stencil {name!r} cannot be analysed: {exc}{hint}") from exc
    halo = max(
        [abs(o[d]) for offs in access.reads.values() for o in offs for d in (0, 1)] or [0]
    )
    outputs = tuple(f for f in access.fields if f in access.writes)
    inputs = tuple(f for f in access.fields if f not in access.writes)
    # fields the chosen externals make unused (read only on another code path) are still arguments
    unused = tuple(
        p for p in inspect.signature(definition).parameters
        if p not in access.fields and p not in access.scalars
    )  # fmt: skip
    inout = [f for f in outputs if f in access.reads]
    from stencils.gt4py_internals import common, gtir, k_boundary

    decls = [p for p in access.gtir.params if isinstance(p, gtir.FieldDecl)]
    axes = {str(p.name): "".join(d for d, on in zip("IJK", p.dimensions) if on) for p in decls}
    dtypes = {str(p.name): np.dtype(p.dtype.name.lower()) for p in decls if p.dtype != common.DataType.FLOAT64}
    levels = {}
    for f, (below, beyond) in k_boundary(access.gtir).items():
        if below > 0:
            raise TuningError(
                f"stencil {name!r} reads field {f!r} {below} level(s) below the first level of its "
                "compute domain; tuning runs every stencil from level 0: not tunable"
            )
        if beyond > 0:
            levels[f] = beyond
    return TuningTarget(
        name=name,
        definition=definition,
        halo=halo,
        inputs=inputs + tuple(inout) + unused,
        outputs=outputs,
        params={s: 0.5 for s in access.scalars},
        externals=dict(externals or {}),
        field_axes=axes,
        field_levels=levels,
        field_dtypes=dtypes,
        field_maker=_field_maker(name.split("[")[0]),
    )


def _field_maker(base: str) -> Callable[[str, Any], Any] | None:
    """The field maker a registration names for definition ``base`` (``Tunable.inputs``)."""
    for registration in registered():
        path = registration.inputs.get(base)
        if path is not None:
            module, _, attr = path.partition(":")
            try:
                return getattr(importlib.import_module(module), attr)
            except (ImportError, AttributeError) as exc:
                raise TuningError(
                    f"tunable {registration.name!r}: the field maker {path!r} of {base!r} does not "
                    f"import: {exc}"
                ) from exc
    return None


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


def discover(tunables: Iterable[Tunable] | None = None) -> list[str]:
    """``module:function`` names of the GTScript definitions of ``tunables`` (default: every
    registration, :func:`mapping.tuning.registry.registered`) that can be tuned on their own
    (see :func:`discover_all` for those that cannot, and why)."""
    return discover_all(tunables)[0]


def discover_all(
    tunables: Iterable[Tunable] | None = None,
) -> tuple[list[str], dict[str, str]]:
    """(tunable names, {name: why not} for definitions that need other externals or do not
    parse) of the definitions of ``tunables`` (default: every registration): each
    registration's explicit targets, then its modules' other definitions."""
    tunable: list[str] = []
    skipped: dict[str, str] = {}
    seen: set[str] = set()
    for registration in registered() if tunables is None else tunables:
        for name in registration.targets:
            base = split_name(name)[0]
            try:
                resolve(name)
                tunable.append(canonical(name))
            except TuningError as exc:
                skipped[name] = str(exc)
                log.info("not tunable: %s", exc)
            seen.add(base)
        for name in _discover_names(registration.modules):
            if name in seen:
                continue
            seen.add(name)
            try:
                resolve(name)
                tunable.append(name)
                continue
            except TuningError as exc:
                if "external symbol" not in str(exc):
                    skipped[name] = str(exc)
                    log.info("not tunable: %s", exc)
                    continue
            try:
                tunable += external_variants(name, registration.externals)
            except TuningError as exc:
                skipped[name] = str(exc)
                log.info("not tunable with the direction externals: %s", exc)
    return tunable, skipped


def external_variants(name: str, choices: Mapping[str, tuple[Any, ...]] | None = None) -> list[str]:
    """Names of the x and y variants of a directional definition, one per value of each
    code-path external in ``choices`` it reads (e.g. ``{"iord": (5, 8)}``, a registration's
    :attr:`~mapping.tuning.registry.Tunable.externals`); TuningError if it needs other
    externals."""
    from stencils.access import gtir_of

    choices = dict(choices or {})
    definition = _import_definition(name)
    defaults = {k: v[0] for k, v in choices.items()}
    try:
        used = set(gtir_of(definition, {**directions.X.externals(), **defaults}).externals)
    except Exception as exc:
        raise TuningError(
            f"stencil {name!r} needs externals beyond the x/y direction convention ({exc}); "
            "name them explicitly: module:function[KEY=VALUE,...]"
        ) from exc
    keys = sorted(k for k in choices if k in used)
    names = []
    for d in directions.DIRECTIONS:
        for values in itertools.product(*(choices[k] for k in keys)):
            names.append(canonical_name(name, d.name, dict(zip(keys, values))))
    return names


def _discover_names(modules: Iterable[str]) -> list[str]:
    """``module:function`` of the public module-level GTScript definitions of ``modules`` (a
    package with all its submodules)."""
    found: list[str] = []
    for pkg_name in modules:
        try:
            pkg = importlib.import_module(pkg_name)
        except Exception as exc:  # a module that does not import is reported, not fatal
            log.warning("cannot import %s to discover stencils: %s", pkg_name, exc)
            continue
        names = [pkg_name]
        if hasattr(pkg, "__path__"):
            names += [m.name for m in pkgutil.walk_packages(pkg.__path__, prefix=pkg_name + ".")]
        for mod_name in names:
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


def _import_definition(base: str) -> Callable[..., None]:
    mod_name, attr = base.split(":", 1)
    try:
        definition = getattr(importlib.import_module(mod_name), attr)
    except (ImportError, AttributeError) as exc:
        raise TuningError(f"stencil {base!r}: cannot import {attr!r} from {mod_name!r} ({exc})") from exc
    if not is_gtscript_definition(definition):
        raise TuningError(f"{base!r} is not a GTScript stencil definition (Field parameters)")
    return definition


def library_names() -> list[str]:
    from stencils.library import LIBRARY

    return list(LIBRARY)


def resolve(name: str) -> Any:
    """The target called ``name``: a library stencil, ``module:function[externals]`` of a GTScript
    definition (a :class:`TuningTarget`), or a stencil program (a ``ProgramTarget``: an example
    program name or ``module:attribute`` of a StencilProgram, see :mod:`mapping.tuning.programs`)."""
    from mapping.tuning.programs import load_program, program_target
    from stencils.library import LIBRARY

    if name in LIBRARY:
        return _library_target(name)
    program = load_program(name)
    if program is not None:
        return program_target(name, program)
    if ":" in name:
        base, direction, explicit = split_name(name)
        definition = _import_definition(base)
        return _definition_target(
            canonical_name(base, direction, explicit), definition, target_externals(direction, explicit)
        )
    from mapping.tuning.programs import EXAMPLE_PROGRAMS

    raise TuningError(
        f"unknown stencil {name!r}: use a library name ({', '.join(LIBRARY)}), "
        "'module:function' for a GTScript definition, a program "
        f"({', '.join(EXAMPLE_PROGRAMS)} or module:attribute of a StencilProgram); "
        "see 'stratoflow tune list'"
    )

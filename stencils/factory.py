"""Build GTScript stencils once per (definition, externals, backend) and call them safely.

:class:`StencilFactory` builds and caches :class:`Stencil` objects (checked calls with any
origin/domain); :meth:`StencilFactory.on_grid` gives a :class:`GridStencilFactory`, which
builds :class:`~stencils.launch.FrozenStencil` objects whose compute domain is named by
staggering and halo (:mod:`stencils.dims`) and which bind once to their arguments.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from stencils.build_lock import build_lock
from stencils.config import StencilConfig
from stencils.dims import GridIndexing
from stencils.errors import StencilError
from stencils.gt4py_internals import oir_pipeline_without
from stencils.launch import FrozenStencil

log = logging.getLogger(__name__)


def _freeze(externals: Mapping[str, Any] | None) -> tuple:
    if not externals:
        return ()
    return tuple(sorted((k, repr(v)) for k, v in externals.items()))


class Stencil:
    """A built GT4Py stencil that checks its arguments against the stencil's extents.

    Calls take the same keyword arguments as the GT4Py stencil object plus ``origin`` and
    ``domain``; a field whose halo is too small for the stencil's read extent, or a wrong
    dtype, raises a :class:`StencilError` naming the field before GT4Py sees it.  With
    ``validate=False`` (``STRATOFLOW_VALIDATE=0``) both these checks and GT4Py's own argument
    validation are skipped: faster calls, for production runs of code whose calls were tested.
    """

    def __init__(self, stencil_object: Any, name: str, build_seconds: float, validate: bool = True) -> None:
        self.stencil_object = stencil_object
        self.name = name
        self.build_seconds = build_seconds
        self.validate = validate

    @property
    def backend(self) -> str:
        return self.stencil_object.backend

    @property
    def field_names(self) -> list[str]:
        return [n for n, info in self.stencil_object.field_info.items() if info is not None]

    def extent(self, field: str) -> tuple[tuple[int, int], ...]:
        """((i_lo, i_hi), (j_lo, j_hi), (k_lo, k_hi)) cells read around each computed point."""
        info = self.stencil_object.field_info[field]
        return tuple(tuple(int(x) for x in pair) for pair in info.boundary)

    def check(self, origin: tuple[int, ...], domain: tuple[int, ...], fields: Mapping[str, Any]) -> None:
        for name, info in self.stencil_object.field_info.items():
            if info is None:
                continue  # declared but unused by the computation
            if name not in fields:
                raise StencilError(f"stencil {self.name!r}: field {name!r} is missing from the call")
            if getattr(info.access, "name", "") == "NONE":
                continue  # not accessed where the externals prune its uses: any shape will do
            array = fields[name]
            if not hasattr(array, "shape"):
                raise StencilError(
                    f"stencil {self.name!r}: field {name!r} must be an array or storage, "
                    f"got {type(array).__name__}"
                )
            if np.dtype(array.dtype) != np.dtype(info.dtype):
                raise StencilError(
                    f"stencil {self.name!r}: field {name!r} has dtype {array.dtype}, "
                    f"the stencil needs {np.dtype(info.dtype)}"
                )
            ndim = len(info.axes)
            if len(array.shape) < ndim:
                raise StencilError(
                    f"stencil {self.name!r}: field {name!r} has {len(array.shape)} dims, "
                    f"needs axes {''.join(info.axes)}"
                )
            for axis_pos, axis in enumerate(info.axes):
                d = "IJK".index(axis)
                lo, hi = info.boundary[d]
                o, n, size = origin[d], domain[d], array.shape[axis_pos]
                if o - lo < 0 or o + n + hi > size:
                    raise StencilError(
                        f"stencil {self.name!r}: field {name!r} is too small along {axis}: the "
                        f"stencil reads {lo} cells before and {hi} after the computed range "
                        f"[{o}, {o + n}) but the field has {size} cells; allocate a halo of at "
                        f"least {max(lo, hi)} (origin >= {lo})"
                    )

    def __call__(self, *, origin: tuple[int, ...], domain: tuple[int, ...], **kwargs: Any) -> None:
        if not self.validate:
            self.stencil_object(origin=tuple(origin), domain=tuple(domain), validate_args=False, **kwargs)
            return
        fields = {k: v for k, v in kwargs.items() if hasattr(v, "shape")}
        self.check(tuple(origin), tuple(domain), fields)
        self.stencil_object(origin=tuple(origin), domain=tuple(domain), **kwargs)


@dataclass(frozen=True)
class BuildRecord:
    """One distinct stencil a factory built, and how many times it was asked for it."""

    definition: Callable[..., None]
    externals: Mapping[str, Any]
    oir_skip: tuple[str, ...]
    requests: int


class StencilFactory:
    """Builds stencils for one :class:`StencilConfig` and owns the cache of built stencils.

    ``factory(definition, externals={...})`` returns a :class:`Stencil`; the same definition and
    externals are built once per factory (and once per machine thanks to GT4Py's disk cache).
    :meth:`builds` lists what was built (the stencils a model really runs, with their externals).
    """

    def __init__(self, config: StencilConfig | str | None = None) -> None:
        if config is None:
            config = StencilConfig.from_env()
        elif isinstance(config, str):
            config = StencilConfig.from_env(backend=config)
        self.config = config
        self._built: dict[tuple, Stencil] = {}
        self._requests: dict[tuple, list] = {}  # key -> [definition, externals, skip, count]

    @property
    def backend(self) -> str:
        return self.config.backend

    def __call__(
        self,
        definition: Callable[..., None],
        externals: Mapping[str, Any] | None = None,
        name: str | None = None,
        oir_skip: Sequence[str] = (),
    ) -> Stencil:
        """The stencil of ``definition`` built with ``externals``; ``oir_skip``: GT4Py OIR
        passes not to run for it (e.g. ``("OnTheFlyMerging",)``, see
        :func:`oir_pipeline_without`)."""
        skip = tuple(sorted(oir_skip))
        key = (definition.__module__, definition.__qualname__, id(definition), _freeze(externals),
               skip)  # fmt: skip
        stencil = self._built.get(key)
        if stencil is None:
            stencil = self._build(definition, externals, name or definition.__name__, skip)
            self._built[key] = stencil
        self._requests.setdefault(key, [definition, dict(externals or {}), skip, 0])[3] += 1
        return stencil

    def record_of(self, stencil: Stencil) -> BuildRecord:
        """The definition, externals and OIR skips ``stencil`` was built from by this factory."""
        for key, built in self._built.items():
            if built is stencil:
                d, e, s, n = self._requests[key]
                return BuildRecord(d, e, s, n)
        raise StencilError(f"stencil {stencil.name!r} was not built by this factory")

    def builds(self) -> list[BuildRecord]:
        """Every distinct (definition, externals, OIR skips) built so far, in build order."""
        return [BuildRecord(d, e, s, n) for d, e, s, n in self._requests.values()]

    def _build(
        self,
        definition: Callable[..., None],
        externals: Mapping[str, Any] | None,
        name: str,
        oir_skip: tuple[str, ...] = (),
    ) -> Stencil:
        from gt4py.cartesian import gtscript

        self.config.apply()
        options = {"oir_pipeline": oir_pipeline_without(oir_skip)} if oir_skip else {}
        # cache entries named after the definition, not after this module
        qualified = f"{definition.__module__}.{definition.__name__}"
        t0 = time.perf_counter()
        try:
            # one lock per definition and backend: each backend has its own cache folder,
            # so a numpy build never waits for a C++ compile of the same definition
            with build_lock(self.config.cache_dir, f"{qualified}@{self.config.backend}"):
                obj = gtscript.stencil(
                    backend=self.config.backend,
                    definition=definition,
                    externals=dict(externals or {}),
                    rebuild=self.config.rebuild,
                    name=qualified,
                    **options,
                )
        except Exception as exc:
            raise StencilError(
                f"building stencil {name!r} for backend {self.config.backend!r} failed: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        seconds = time.perf_counter() - t0
        log.debug("built %s on %s in %.2f s", name, self.config.backend, seconds)
        return Stencil(obj, name, seconds, validate=self.config.validate_args)

    def on_grid(self, indexing: GridIndexing) -> GridStencilFactory:
        """A factory for stencils on the subdomain ``indexing`` (sharing this one's builds)."""
        return GridStencilFactory(self, indexing)

    def warm(self, definitions: list[Callable[..., None]]) -> None:
        """Build ``definitions`` now (serially) so that later parallel runs only load them."""
        for definition in definitions:
            self(definition)


class GridStencilFactory:
    """Builds frozen stencils on one subdomain's index space; the builds are the wrapped
    :class:`StencilFactory`'s (a tuned factory's schedules apply)."""

    def __init__(self, factory: StencilFactory, indexing: GridIndexing) -> None:
        self.factory = factory
        self.indexing = indexing

    @property
    def backend(self) -> str:
        return self.factory.backend

    def from_dims(
        self,
        definition: Callable[..., None],
        dims: Sequence[str],
        halo: int | tuple[int, int] = 0,
        *,
        externals: Mapping[str, Any] | None = None,
        name: str | None = None,
        oir_skip: Sequence[str] = (),
    ) -> FrozenStencil:
        """``definition`` computing the points of staggering ``dims`` (e.g.
        ``(X_INTERFACE_DIM, Y_DIM, Z_DIM)``) plus ``halo`` halo cells on each side."""
        origin, domain = self.indexing.bounds(dims, halo)
        return self.from_origin_domain(definition, origin, domain, externals=externals,
                                       name=name, oir_skip=oir_skip)  # fmt: skip

    def from_origin_domain(
        self,
        definition: Callable[..., None],
        origin: tuple[int, int, int],
        domain: tuple[int, int, int],
        *,
        externals: Mapping[str, Any] | None = None,
        name: str | None = None,
        oir_skip: Sequence[str] = (),
    ) -> FrozenStencil:
        """``definition`` on an explicit ``origin``/``domain``."""
        stencil = self.factory(definition, externals=externals, name=name, oir_skip=oir_skip)
        return FrozenStencil(stencil, origin, domain)

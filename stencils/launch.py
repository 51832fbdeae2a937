"""Stencils with a fixed compute domain, and launches bound once to their arguments.

A model allocates every field a stencil touches once, and its origin, domain and scalar
parameters never change between steps; only the Python work of a call does (GT4Py
normalises origins, hashes the arguments and looks up its validation cache on every call,
~30-100 us, far more than a 54 x 54 x 1 compiled stencil computes).

* :class:`FrozenStencil` is a built stencil with its origin and domain fixed (made by
  :meth:`stencils.factory.GridStencilFactory.from_dims` or ``from_origin_domain``); calling it
  with the fields runs the checked path.
* :class:`BoundStencil` (``frozen.bind(**arguments)``) holds the arguments too: its first call
  is checked (the project's extent check and GT4Py's own validation), later calls go straight to
  the backend's ``run`` with the per-field origins computed once, or for the GridTools and DaCe
  CPU backends to the compiled extension with the arguments ``run`` passes it
  (:mod:`stencils.gt4py_internals`).  Numerics are unchanged: ``run`` is what GT4Py's
  ``__call__`` ends in.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from stencils import gt4py_internals

Launch = Callable[[], None]


class FrozenStencil:
    """``stencil`` with its compute domain fixed: ``frozen(**arguments)`` runs it there."""

    def __init__(self, stencil: Any, origin: tuple[int, ...], domain: tuple[int, ...]) -> None:
        self.stencil = stencil
        self.origin, self.domain = tuple(origin), tuple(domain)

    @property
    def name(self) -> str:
        return str(getattr(self.stencil, "name", "stencil"))

    def __call__(self, **arguments: Any) -> None:
        self.stencil(origin=self.origin, domain=self.domain, **arguments)

    def bind(self, **arguments: Any) -> BoundStencil:
        """This stencil bound to ``arguments`` (fields are held, not copied)."""
        return BoundStencil(self.stencil, self.origin, self.domain, **arguments)


class BoundStencil:
    """``BoundStencil(stencil, origin, domain, **arguments)()`` runs ``stencil`` on the bound
    arguments.  ``stencil`` is a :class:`stencils.factory.Stencil`; a wrapper without a
    ``stencil_object`` (e.g. a benchmark's counting stencil) is called normally each time."""

    def __init__(
        self,
        stencil: Any,
        origin: tuple[int, int, int],
        domain: tuple[int, int, int],
        **arguments: Any,
    ) -> None:
        self.stencil = stencil
        self.origin, self.domain = tuple(origin), tuple(domain)
        self.arguments = dict(arguments)
        self._run_kwargs: dict[str, Any] | None = None
        self._extension: Any = None
        self._extension_args: tuple = ()
        self._object = getattr(stencil, "stencil_object", None)

    @property
    def name(self) -> str:
        return str(getattr(self.stencil, "name", "stencil"))

    @property
    def compiled(self) -> bool:
        """Whether calls go straight to the compiled extension (after the first call)."""
        return self._extension is not None

    def __call__(self) -> None:
        if self._extension is not None:
            self._extension(*self._extension_args)
            return
        if self._run_kwargs is not None:
            self._object.run(**self._run_kwargs)
            return
        # first call (and every call of a wrapper): the checked path of the factory's Stencil
        self.stencil(origin=self.origin, domain=self.domain, **self.arguments)
        if self._object is not None:
            self._run_kwargs = gt4py_internals.run_arguments(
                self._object, self.origin, self.domain, self.arguments
            )
            recorded = gt4py_internals.compiled_launch(self._object, self._run_kwargs)
            if recorded is not None:
                self._extension, self._extension_args = recorded


def stencil_major(per_owner: Sequence[Sequence[Launch]]) -> list[Launch]:
    """Several owners' launch sequences (e.g. one phase of each rank of a process, each list in
    its own order, touching only that owner's fields) in stencil-major order: every owner's first
    launch, then every owner's second, ...  The same compiled stencil then runs for all owners
    in a row, its code still in the caches.  Bitwise the same as owner by owner, since no launch
    reads another owner's fields."""
    lengths = {len(calls) for calls in per_owner}
    if len(lengths) > 1:
        raise ValueError(f"stencil_major: the sequences differ in length {sorted(lengths)}")
    return [calls[i] for i in range(lengths.pop() if lengths else 0) for calls in per_owner]


def timed_launches(
    run: Callable[[], None], clock: Callable[[], float] | None = None
) -> list[tuple[BoundStencil, float]]:
    """The :class:`BoundStencil` launches that ``run()`` makes, in call order (repeats
    included), each with its duration inside ``run()`` (seconds by ``clock``, default
    ``time.perf_counter``): its fields as warm or cold as the code before it left them.  The
    launches run as usual; for profiling tools."""
    clock = clock or time.perf_counter
    launches: list[tuple[BoundStencil, float]] = []
    original = BoundStencil.__call__

    def recording(self: BoundStencil) -> None:
        start = clock()
        original(self)
        launches.append((self, clock() - start))

    BoundStencil.__call__ = recording  # type: ignore[method-assign]
    try:
        run()
    finally:
        BoundStencil.__call__ = original  # type: ignore[method-assign]
    return launches

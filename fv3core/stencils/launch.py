"""Stencil calls with their arguments bound once: the dynamics step's hot path.

Every field a dynamics stencil touches is a storage allocated once in ``__init__``, and its
origin, domain and scalar parameters never change between steps; only the Python work of a
call does (GT4Py normalises origins, hashes the arguments and looks up its validation cache on
every call, ~30-100 us, far more than a 54 x 54 x 1 compiled stencil computes).
:class:`BoundStencil` binds the arguments once, checks them once (the project's extent check
and GT4Py's own validation, on the first call), and afterwards calls the backend's ``run``
directly with the pre-computed per-field origins -- for the GridTools CPU backends even the
compiled extension itself (GridTools and DaCe CPU backends), with the arguments ``run``
passes it recorded once.  Numerics are
unchanged: ``run`` is what GT4Py's ``__call__`` ends in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any


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
        obj = getattr(stencil, "stencil_object", None)
        self._fast = obj is not None
        if self._fast:
            self._run = obj.run
            self._prepared = self._prepare(obj, self.origin, self.arguments)

    @staticmethod
    def _prepare(obj: Any, origin: tuple[int, ...], arguments: Mapping[str, Any]) -> dict:
        """The keyword arguments of ``StencilObject.run``: fields, per-field origins (the
        call origin restricted to the field's axes, as GT4Py's ``_normalize_origins``) and
        scalar parameters."""
        origins = {}
        for name, info in obj.field_info.items():
            if info is None:
                continue
            axes = ["IJK".index(a) for a in info.axes]
            origins[name] = tuple(origin[a] for a in axes) + (0,) * len(info.data_dims)
        fields = {name: arguments.get(name) for name in obj.field_info}
        params = {name: arguments.get(name) for name in obj.parameter_info}
        return {"_origin_": origins, **fields, **params}

    def __call__(self) -> None:
        if self._extension is not None:
            self._extension(*self._extension_args)
            return
        if self._run_kwargs is not None:
            self._run(**self._run_kwargs)
            return
        # first call (and every call of a wrapper): the checked path of the factory's Stencil
        self.stencil(origin=self.origin, domain=self.domain, **self.arguments)
        if self._fast:
            self._run_kwargs = {"_domain_": self.domain, "exec_info": None, **self._prepared}
            recorded = _record_extension_call(self.stencil.stencil_object, self._run_kwargs)
            if recorded is not None:
                self._extension, self._extension_args = recorded


def stencil_major(per_rank: Sequence[Sequence[Callable[[], None]]]) -> list[Callable[[], None]]:
    """One phase's calls of several ranks (each rank's list in its own order, touching only
    that rank's fields) in stencil-major order: every rank's first call, then every rank's
    second, ...  The same compiled stencil then runs for all ranks in a row, its code and
    the interpreter's path to it still in the caches (measured in
    docs/benchmarks/fv3core.md, session 7).  Bitwise the same as rank by rank, since no call
    reads another rank's fields."""
    lengths = {len(calls) for calls in per_rank}
    if len(lengths) > 1:
        raise ValueError(f"stencil_major: the ranks' phases differ in length {sorted(lengths)}")
    return [calls[i] for i in range(lengths.pop() if lengths else 0) for calls in per_rank]


def timed_launches(
    run: Callable[[], None], clock: Callable[[], float] | None = None
) -> list[tuple[BoundStencil, float]]:
    """The :class:`BoundStencil` launches that ``run()`` makes, in call order (repeats
    included), each with its duration inside ``run()`` (seconds by ``clock``, default
    ``time.perf_counter``): its fields as warm or cold as the code before it left them.  The
    launches run as usual; for profiling tools (e.g. timing each launch on its own too)."""
    import time

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


class _Recorder:
    """Stands in for a GridTools stencil's compiled module while its ``run`` is recorded."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def run_computation(self, *args: Any) -> None:
        self.calls.append(args)


def _record_extension_call(obj: Any, run_kwargs: dict[str, Any]) -> tuple[Any, tuple] | None:
    """For the GridTools and DaCe CPU backends: the compiled ``run_computation`` and the
    positional arguments ``obj.run(**run_kwargs)`` passes it (domain, then each field with its origin),
    recorded from one call of ``run`` with the module swapped for a recorder.  Calling the
    extension with them is what ``run`` does, minus building the same lists again (~2 us of
    ~7 us per launch at 54 x 54 x 1).  ``None`` where ``run`` is not that thin wrapper."""
    backend = str(getattr(obj, "backend", ""))
    if not (backend.startswith("gt:cpu") or backend == "dace:cpu"):
        return None
    run = type(obj).run
    module = run.__globals__.get("pyext_module")
    if module is None or not hasattr(module, "run_computation"):
        return None
    recorder = _Recorder()
    run.__globals__["pyext_module"] = recorder
    try:
        obj.run(**run_kwargs)
    finally:
        run.__globals__["pyext_module"] = module
    if len(recorder.calls) != 1:
        return None
    return module.run_computation, recorder.calls[0]

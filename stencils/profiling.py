"""Time every stencil call of a run, however the stencil is called (profiling a model step)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from stencils.factory import Stencil
from stencils.launch import BoundStencil, FrozenStencil


def stencil_call_times(
    run: Callable[[], None], clock: Callable[[], float] | None = None
) -> dict[str, tuple[int, float]]:
    """Per stencil name, (calls, seconds) of every stencil ``run()`` calls, however it is
    called: bound launches, frozen stencils and the factory's stencils (a call that goes
    through several of them is counted once, at the outermost).  The calls run as usual; for
    profiling a whole model step, including stencils a model calls without binding them."""
    clock = clock or time.perf_counter
    out: dict[str, list] = {}
    depth = [0]
    originals = {cls: cls.__call__ for cls in (BoundStencil, FrozenStencil, Stencil)}

    def timed(original: Callable[..., None]) -> Callable[..., None]:
        def call(self: Any, *args: Any, **kwargs: Any) -> None:
            if depth[0]:
                return original(self, *args, **kwargs)
            depth[0] += 1
            start = clock()
            try:
                return original(self, *args, **kwargs)
            finally:
                depth[0] -= 1
                entry = out.setdefault(str(self.name), [0, 0.0])
                entry[0] += 1
                entry[1] += clock() - start

        return call

    for cls, original in originals.items():
        cls.__call__ = timed(original)  # type: ignore[method-assign]
    try:
        run()
    finally:
        for cls, original in originals.items():
            cls.__call__ = original  # type: ignore[method-assign]
    return {name: (calls, seconds) for name, (calls, seconds) in out.items()}

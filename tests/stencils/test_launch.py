"""BoundStencil: stencil calls bound once, then run through the backend's ``run`` or (GridTools
CPU) the compiled extension with recorded arguments.

Reference: the same stencil called through GT4Py's own checked ``__call__`` on the same inputs;
results must be identical bit for bit (tolerance 0).  The stencil (:func:`corner_laplacian`) is
a del2-style update of a corner field with IJ coefficients, written here.
"""

from __future__ import annotations

import numpy as np
import pytest
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import PARALLEL, computation, interval

from stencils.factory import StencilFactory
from stencils.launch import BoundStencil
from stencils.storage import from_numpy, to_numpy

N, H = 14, 3

Field3 = gtscript.Field[np.float64]
FieldIJ = gtscript.Field[gtscript.IJ, np.float64]


def corner_laplacian(div: Field3, phib: Field3, a_x: FieldIJ, b0_x: FieldIJ, b1_x: FieldIJ,
                     a_y: FieldIJ, b0_y: FieldIJ, b1_y: FieldIJ, rarea_c: FieldIJ, nu4: float):
    """``phib`` += ``nu4`` times a weighted five-point Laplacian of ``div`` (a test stencil)."""
    with computation(PARALLEL), interval(...):
        phib = phib + nu4 * rarea_c * (
            a_x * div + b0_x * div[-1, 0, 0] + b1_x * div[1, 0, 0]
            + a_y * div + b0_y * div[0, -1, 0] + b1_y * div[0, 1, 0]
        )  # fmt: skip


def _inputs(backend: str, rng: np.random.Generator) -> dict:
    shape = (N + 2 * H, N + 2 * H)
    fields = {k: from_numpy(rng.uniform(0.5, 1.5, shape), backend)
              for k in ("a_x", "b0_x", "b1_x", "a_y", "b0_y", "b1_y", "rarea_c")}  # fmt: skip
    fields["div"] = from_numpy(rng.standard_normal(shape + (2,)), backend)
    fields["phib"] = from_numpy(rng.standard_normal(shape + (2,)), backend)
    return fields


@pytest.mark.parametrize(
    "backend", ["numpy", "gt:cpu_ifirst", pytest.param("dace:cpu", marks=pytest.mark.slow)]
)
def test_bound_calls_equal_checked_calls_bitwise(backend: str) -> None:
    """Three bound calls (the first checked, then ``run`` or the recorded compiled extension) equal
    three checked calls bit for bit, also after an input changes in place between calls (the
    arrays are bound, not copied); the compiled backends use the extension path (dace:cpu: slow, one
    more ~90 s build)."""
    stencil = StencilFactory(backend)(corner_laplacian)
    bounds = {"origin": (H, H, 0), "domain": (N + 1, N + 1, 2)}
    checked = _inputs(backend, np.random.default_rng(1))
    bound_inputs = _inputs(backend, np.random.default_rng(1))
    call = BoundStencil(stencil, nu4=0.7, **bounds, **bound_inputs)
    for step in range(3):
        stencil(nu4=0.7, **bounds, **checked)
        call()
        np.testing.assert_array_equal(to_numpy(bound_inputs["phib"]), to_numpy(checked["phib"]))
        for fields in (checked, bound_inputs):  # change an input in place
            div = np.asarray(fields["div"])
            div[...] = div * 0.5 + step
    assert call.compiled == (backend != "numpy")


def test_stencil_major_order_takes_each_position_of_every_rank_in_turn() -> None:
    """Reference: the order written out by hand for 3 ranks of 2 calls; ranks whose phases
    differ in length are refused."""
    from stencils.launch import stencil_major

    log: list[str] = []
    per_rank = [[lambda r=r, k=k: log.append(f"r{r}c{k}") for k in range(2)] for r in range(3)]
    for call in stencil_major(per_rank):
        call()
    assert log == ["r0c0", "r1c0", "r2c0", "r0c1", "r1c1", "r2c1"]
    assert stencil_major([]) == []
    with pytest.raises(ValueError, match=r"differ in length \[1, 2\]"):
        stencil_major([[print], [print, print]])


def test_stencil_call_times_counts_every_way_of_calling_once() -> None:
    """Reference: a clock that advances 1.0 per reading, and the calls made by hand: the
    factory's stencil once directly, a frozen stencil twice (each goes through the factory's
    stencil: counted once, at the outermost call) and a bound launch three times: 6 calls of
    one name, 1 s each; the classes' ``__call__`` are restored afterwards."""
    from stencils.launch import FrozenStencil
    from stencils.profiling import stencil_call_times

    stencil = StencilFactory("numpy")(corner_laplacian)
    bounds = {"origin": (H, H, 0), "domain": (N + 1, N + 1, 2)}
    fields = _inputs("numpy", np.random.default_rng(1))
    frozen = FrozenStencil(stencil, bounds["origin"], bounds["domain"])
    bound = frozen.bind(nu4=0.7, **fields)
    originals = (type(stencil).__call__, FrozenStencil.__call__, BoundStencil.__call__)
    ticks = iter(range(100))

    def run() -> None:
        stencil(nu4=0.7, **bounds, **fields)
        for _ in range(2):
            frozen(nu4=0.7, **fields)
        for _ in range(3):
            bound()

    times = stencil_call_times(run, clock=lambda: float(next(ticks)))
    assert times == {stencil.name: (6, 6.0)}
    assert (type(stencil).__call__, FrozenStencil.__call__, BoundStencil.__call__) == originals

# ruff: noqa: F841  (GTScript: assignments to field parameters are the stencils' outputs)
"""The bridge's FV3 constructs (horizontal regions with per-rank externals, if/else, FORWARD and
BACKWARD sweeps) against GT4Py's numpy backend, and the refusals of what still does not map."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import (
    BACKWARD,
    FORWARD,
    PARALLEL,
    I,
    J,
    computation,
    horizontal,
    interval,
    region,
)

from mapping.spatial import StencilFlowError
from mapping.spatial.analysis import analyse
from mapping.spatial.bridge import from_stencil_program
from mapping.spatial.hls import CSimulation, HLSEmitter
from mapping.spatial.reference import ReferenceExecutor
from mapping.spatial.simulator import StreamingSimulator
from stencils.program import StencilProgram

F = gtscript.Field[np.float64]


def edges(a: F, b: F, out: F):
    """Tile-edge treatment as FV3 writes it: lines, a band and a corner, bounds from externals."""
    from __externals__ import i_end, i_start, j_end, j_start

    with computation(PARALLEL), interval(...):
        out = a + b[0, 1, 0]
        with horizontal(region[i_start, :]):
            out = 2.0 * a[-1, 0, 0] - b
        with horizontal(region[:, j_end:]):
            out = out + a[0, -1, 0]
        with horizontal(region[i_start - 1 : i_start + 1, j_start - 1 : j_start + 1], region[i_end + 1, j_end]):
            out = 0.5 * (a[1, 0, 0] + a[0, 1, 0])


def smooth(t: F, out: F):
    with computation(PARALLEL), interval(...):
        out = 0.25 * (t[-1, 0, 0] + t[1, 0, 0] + t[0, -1, 0] + t[0, 1, 0])


def branches(a: F, b: F, out: F, out2: F, x: float):
    """if/elif/else on values, on a scalar, temporaries and fields assigned inside branches, a
    nested if, a temporary assigned in branches read at offsets."""
    with computation(PARALLEL), interval(...):
        t = a * b
        if a > 0.5:
            t = t - 1.0
        elif b < 0.25:
            t = -t
        else:
            s = a - b
            if s > 0.0:
                t = s
    with computation(PARALLEL), interval(...):
        if a > 0.5:
            out = t
        elif x > 0.0:
            out = t * x
        else:
            out = -t
    with computation(PARALLEL), interval(1, None):
        if x > 0.0:
            out2 = a + t[1, 0, 0] - t[0, 0, -1]
        else:
            out2 = a - t[0, 1, 0]


def cumulate(a: F, b: F, c: F):
    with computation(FORWARD):
        with interval(0, 1):
            c = a + b
        with interval(1, None):
            t = a * 0.5
            c = c[0, 0, -1] * 0.9 + t


def hydrostatic(a: F, zs: F, gz: F, d: F):
    """The shape of FV3's geopotential: a BACKWARD sum from the surface, then a PARALLEL use."""
    with computation(BACKWARD):
        with interval(-1, None):
            gz = zs + a
        with interval(0, -1):
            gz = gz[0, 0, 1] + a * (1.0 + a[0, 0, 1])
    with computation(PARALLEL), interval(0, -1):
        d = gz - gz[0, 0, 1] + a[1, 0, 0]


def _gt4py(sp: StencilProgram, inputs: dict[str, np.ndarray], h: int) -> dict[str, np.ndarray]:
    return sp.run(inputs, backend="numpy", halo=h)


def _check(prog, inputs, gt: dict[str, np.ndarray]) -> None:
    """Reference executor and the cycle-exact simulator both equal GT4Py bit for bit on the whole
    array; the simulator runs stall-free with the analysed buffers, every buffer is minimal."""
    ref = ReferenceExecutor(prog)(inputs)
    an = analyse(prog)
    sim = StreamingSimulator(an)(inputs)
    for o, want in gt.items():
        np.testing.assert_array_equal(ref[o], want)
        np.testing.assert_array_equal(sim.outputs[o], want)
    assert sim.cycles == an.model.cycles and sim.backpressure_cycles == 0
    for ch in an.channels:
        if ch.capacity > 1:
            try:
                shrunk = StreamingSimulator(an, {ch.name: ch.capacity - 1})(inputs)
            except StencilFlowError:
                continue  # deadlock
            assert shrunk.stalled, f"{ch.name} shrunk by one still runs stall-free"


def _edges_program(ext: dict) -> StencilProgram:
    sp = StencilProgram("edges", inputs=["a", "b"], outputs=["out"], temporaries=["t"])
    sp.add(edges, label="edge", externals=ext, a="a", b="b", out="t")
    sp.add(smooth, label="smooth", t="t", out="out")
    return sp


@pytest.mark.parametrize("rank", ["sw", "ne"])
def test_horizontal_regions_with_rank_externals_match_gt4py(rank):
    """Regions (lines, bands, a corner, two regions in one ``with``) with per-rank externals
    i_start/i_end/j_start/j_end become predicates on i/j with the calls' origins and extents as
    program constants; reference: GT4Py numpy backend on the whole array; tolerance: bitwise."""
    far = 10_000
    ext = ({"i_start": I[0] + 1, "i_end": I[-1] - far, "j_start": J[0] + 1, "j_end": J[-1] - far}
           if rank == "sw" else
           {"i_start": I[0] - far, "i_end": I[-1] - 1, "j_start": J[0] - far, "j_end": J[-1] - 1})
    h = 2
    shape = (7 + 2 * h, 6 + 2 * h, 3)
    sp = _edges_program(ext)
    prog = from_stencil_program(sp, shape, halo=h)
    assert prog.constants["edge__i0"] == h - 1 and prog.constants["edge__ni"] == 7 + 2
    rng = np.random.default_rng(5)
    inp = {"a": rng.random(shape), "b": rng.random(shape)}
    _check(prog, inp, _gt4py(sp, inp, h))


def test_if_else_on_values_and_scalars_matches_gt4py():
    """if/elif/else on field values and on a scalar, assignments to temporaries and fields in
    branches, a nested if, a branch-assigned temporary read at offsets, a partial interval;
    reference: GT4Py numpy backend on the whole array; tolerance: bitwise."""
    h = 1
    shape = (6 + 2 * h, 5 + 2 * h, 4)
    rng = np.random.default_rng(7)
    inp = {"a": rng.random(shape), "b": rng.random(shape)}
    for x in (0.75, -0.5):
        sp = StencilProgram("branches", inputs=["a", "b"], outputs=["out", "out2"])
        sp.add(branches, label="br", a="a", b="b", out="out", out2="out2", x=x)
        _check(from_stencil_program(sp, shape, halo=h), inp, _gt4py(sp, inp, h))


def test_forward_recurrence_matches_gt4py_and_is_a_recurrence_node():
    """A FORWARD sweep (k-1 of the field it writes, a temporary): one recurrence
    node reading itself at k-1; reference: GT4Py numpy backend; tolerance: bitwise."""
    shape = (4, 3, 6)
    sp = StencilProgram("cumulate", inputs=["a", "b"], outputs=["c"])
    sp.add(cumulate, label="cum", a="a", b="b", c="c")
    prog = from_stencil_program(sp, shape, halo=0)
    assert prog.stencils["c"].recurrence == -1
    rng = np.random.default_rng(3)
    inp = {"a": rng.random(shape), "b": rng.random(shape)}
    _check(prog, inp, _gt4py(sp, inp, 0))


def test_backward_recurrence_matches_gt4py_with_a_column_buffer():
    """A BACKWARD sweep from the surface (k+1 of the field it writes) and a PARALLEL reader: the
    recurrence node buffers its inputs' columns (look-ahead nk - 1 tokens more than the stencil's
    own window); reference: GT4Py numpy backend; tolerance: bitwise."""
    h = 1
    shape = (4 + 2 * h, 3 + 2 * h, 5)
    sp = StencilProgram("geopotential", inputs=["a", "zs"], outputs=["gz", "d"])
    sp.add(hydrostatic, label="gz", a="a", zs="zs", gz="gz", d="d")
    prog = from_stencil_program(sp, shape, halo=h)
    rec = [s for s in prog.stencils.values() if s.recurrence]
    assert [s.recurrence for s in rec] == [1]
    an = analyse(prog)
    assert an.stencils[rec[0].name].windows["a"].lookahead == 1 + (shape[2] - 1)
    rng = np.random.default_rng(4)
    inp = {"a": rng.random(shape), "zs": rng.random(shape)}
    _check(prog, inp, _gt4py(sp, inp, h))


def coupled(a: F, c: F, d: F):
    with computation(FORWARD):
        with interval(0, 1):
            c = a
            d = a
        with interval(1, None):
            c = d[0, 0, -1] + a
            d = c[0, 0, -1] * a


def against(a: F, c: F):
    with computation(FORWARD):
        with interval(0, -1):
            t = a
            c = t[0, 0, 1] + a
        with interval(-1, None):
            t = a
            c = t


def data_dims(a: gtscript.Field[(np.float64, (2,))], c: F):
    with computation(PARALLEL), interval(...):
        c = a[0, 0, 0][1]


def looping(a: F, c: F):
    with computation(PARALLEL), interval(...):
        t = a
        while t > 1.0:
            t = t * 0.5
        c = t


def variable_k(a: F, c: F, idx: gtscript.Field[np.int32]):
    with computation(PARALLEL), interval(...):
        c = a[0, 0, idx]


@pytest.mark.parametrize(
    ("definition", "construct"),
    [
        (coupled, "recurrence of d is coupled with c"),
        (against, "reads temporary t at k\\+1, against the FORWARD sweep"),
        (data_dims, "field a has data dimensions"),
        (looping, "While statement"),
        (variable_k, "variable k offset"),
    ],
)
def test_unsupported_constructs_are_refused_naming_call_and_construct(definition, construct):
    """What still has no stream form raises StencilFlowError naming the call, its stencil and the construct."""
    params = [p for p in ("a", "idx", "c", "d") if p in definition.__annotations__]
    sp = StencilProgram("refused", inputs=[p for p in params if p in ("a", "idx")],
                        outputs=[p for p in params if p in ("c", "d")])
    sp.add(definition, label="it", **{p: p for p in params})
    with pytest.raises(StencilFlowError, match=rf"call 'it' \(stencil {definition.__name__}\).*({construct})"):
        from_stencil_program(sp, (4, 4, 5), halo=0)


def test_regions_without_a_placement_are_refused():
    """Region bounds are relative to a call's origin: without a halo (placement) the bridge refuses them."""
    far = 10_000
    sp = _edges_program({"i_start": I[0] + 1, "i_end": I[-1] - far, "j_start": J[0] + 1, "j_end": J[-1] - far})
    with pytest.raises(StencilFlowError, match=r"call 'edge' \(stencil edges\).*horizontal\(region"):
        from_stencil_program(sp, (8, 8, 2))


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_recurrences_hls_csim_match_gt4py(tmp_path):
    """The FORWARD (level history) and BACKWARD (column buffer) recurrences in the emitted HLS
    C++, compiled with g++ and run (C simulation); reference: GT4Py numpy backend; tolerance:
    bitwise."""
    shape = (6, 5, 5)
    rng = np.random.default_rng(8)
    for name, definition, fields in (("cumulate", cumulate, ("a", "b", "c")),
                                     ("geopotential", hydrostatic, ("a", "zs", "gz", "d"))):
        ins = [f for f in fields if f in ("a", "b", "zs")]
        sp = StencilProgram(name, inputs=ins, outputs=[f for f in fields if f not in ins])
        sp.add(definition, label=name, **{f: f for f in fields})
        inp = {f: rng.random(shape) for f in ins}
        gt = _gt4py(sp, inp, 1)
        out = CSimulation(HLSEmitter(analyse(from_stencil_program(sp, shape, halo=1))), tmp_path / name)(inp)
        for o, want in gt.items():
            np.testing.assert_array_equal(out[o], want)

"""GTScript StencilPrograms mapped to StencilFlow DAGs, checked against GT4Py's own execution."""

from __future__ import annotations

import numpy as np
import pytest

from mapping.spatial.analysis import analyse
from mapping.spatial.bridge import from_stencil_program
from mapping.spatial.reference import ReferenceExecutor
from mapping.spatial.simulator import StreamingSimulator

stencils_program = pytest.importorskip("stencils.program")
library = pytest.importorskip("stencils.library")


def _bind(name: str, mapping: dict[str, str]) -> dict[str, str]:
    s = library.LIBRARY[name]
    return {p: mapping[p] for p in (*s.inputs, *s.outputs)}


def test_laplacian_then_hdiff_matches_gt4py_numpy_backend():
    """laplacian_2d -> hdiff as a StencilProgram: the bridged DAG (reference executor and the
    streaming simulator) equals GT4Py's numpy-backend run on the interior (halo 3) exactly."""
    sp = stencils_program.StencilProgram("lap_hdiff", inputs=["a", "coeff"], outputs=["out"], temporaries=["t"])
    sp.add(library.LIBRARY["laplacian_2d"].definition, label="lap",
           **_bind("laplacian_2d", {"in_field": "a", "out_field": "t"}))
    sp.add(library.LIBRARY["hdiff"].definition, label="hd",
           **_bind("hdiff", {"in_field": "t", "coeff": "coeff", "out_field": "out"}))
    h = 3
    shape = (8 + 2 * h, 7 + 2 * h, 3)
    prog = from_stencil_program(sp, shape)
    assert set(prog.stencils) == {"t", "hd__lap", "hd__flx", "hd__fly", "out"}
    rng = np.random.default_rng(1)
    inp = {"a": rng.random(shape), "coeff": 0.025 + 0.005 * rng.random(shape)}
    gt = sp.run(inp, backend="numpy", halo=h)["out"][h:-h, h:-h]
    ours = ReferenceExecutor(prog)(inp)["out"]
    np.testing.assert_array_equal(ours[h:-h, h:-h], gt)
    sim = StreamingSimulator(analyse(prog))(inp)
    np.testing.assert_array_equal(sim.outputs["out"], ours)
    assert analyse(prog).halo_width("out") == (3, 3, 0)


def test_partial_vertical_intervals_match_gt4py():
    """jacobi_3d -> laplacian_3d (both interval(1, -1), k offsets): the bridged DAG selects on k
    and equals GT4Py's numpy backend on the interior exactly, in the reference and the simulator."""
    sp = stencils_program.StencilProgram("j3l3", inputs=["a"], outputs=["out"], temporaries=["t"])
    sp.add(library.LIBRARY["jacobi_3d"].definition, label="jac", **_bind("jacobi_3d", {"in_field": "a", "out_field": "t"}))
    sp.add(library.LIBRARY["laplacian_3d"].definition, label="lap",
           **_bind("laplacian_3d", {"in_field": "t", "out_field": "out"}))
    h = 2
    shape = (5 + 2 * h, 4 + 2 * h, 6)
    prog = from_stencil_program(sp, shape)
    inp = {"a": np.random.default_rng(2).random(shape)}
    gt = sp.run(inp, backend="numpy", halo=h)["out"][h:-h, h:-h]
    ours = ReferenceExecutor(prog)(inp)["out"]
    np.testing.assert_array_equal(ours[h:-h, h:-h], gt)
    np.testing.assert_array_equal(StreamingSimulator(analyse(prog))(inp).outputs["out"], ours)


def test_tridiagonal_solver_maps_onto_recurrences():
    """vadv (a FORWARD elimination carrying two coefficients, then a BACKWARD substitution)
    becomes recurrence nodes; the simulation equals GT4Py's numpy backend bit for bit."""
    sp = stencils_program.StencilProgram("v", inputs=["phi", "w"], outputs=["out"])
    sp.add(library.LIBRARY["vadv"].definition, label="solve", dt_dz=0.1,
           **_bind("vadv", {"phi": "phi", "w": "w", "phi_new": "out"}))
    shape = (4, 4, 6)
    prog = from_stencil_program(sp, shape, halo=0)
    assert {n: s.recurrence for n, s in prog.stencils.items() if s.recurrence} == {
        "solve__cp": -1, "solve__dp": -1, "out": 1}
    rng = np.random.default_rng(0)
    inp = {"phi": rng.random(shape), "w": rng.random(shape)}
    gt = sp.run(inp, backend="numpy", halo=0)["out"]
    np.testing.assert_array_equal(StreamingSimulator(analyse(prog))(inp).outputs["out"], gt)

"""fv3core.stencils.a2b_ord4 (FV3 ``a2b_ord4``) against the transliteration
(:func:`tests.fv3core.transliteration.a2b_edge.a2b_ord4`) on the same inputs: FV3's TC2 ``delp`` of
each rank, perturbed with noise on every point, at C12 and C24 on all 6 tiles (one rank per
tile), C24 on 2x2 ranks per tile (all tiles) and on 3x3 (tiles 1 and 4: ranks touching 2, 1
and 0 tile edges).

Both compute the ``extrap_corner`` distances with the C library's functions, as GFDL's Fortran
does (NumPy's SIMD ``sin``/``cos``/``arcsin`` would move 6 of the 72 cube-vertex weights at C12
by an ulp); every corner value is bitwise equal."""

from __future__ import annotations

import numpy as np
import pytest

from fv3core.stencils.a2b_ord4 import (
    VERTEX_TERMS,
    AGridToBGrid,
    corner_extrapolation_weights,
    cube_vertices,
)
from stencils.storage import to_numpy
from tests.fv3core.fv3_stencil_reference import (
    CASE_IDS,
    CASES,
    RankCase,
    assert_equal_where_written,
    edges_touched,
    numpy_of,
    rank_case,
    rank_specs,
    run,
    shared_factory,
    tc2_initial,
)
from tests.fv3core.transliteration import a2b_edge


def _qin(case: RankCase, seed: int) -> np.ndarray:
    """FV3's TC2 delp (= g h) of the rank, perturbed by 1% noise on every point."""
    delp = np.asarray(tc2_initial(case.spec.resolution).for_rank(case.spec).delp)
    rng = np.random.default_rng(seed)
    return delp + 0.01 * np.abs(delp).max() * rng.standard_normal(delp.shape)


@pytest.mark.parametrize("resolution,layout,tiles", CASES, ids=CASE_IDS)
def test_a2b_ord4_equals_transliteration(resolution: int, layout: int, tiles: tuple) -> None:
    """qout on the compute corners bitwise equal to the transliteration's (nothing else of the
    output written), for every rank; the vertex values also within 2 ulp of the reference
    with NumPy's distances."""
    factory = shared_factory()
    touched = set()
    for spec in rank_specs(resolution, layout, tiles):
        case = rank_case(spec, factory)
        touched.add(edges_touched(spec))
        q = _qin(case, seed=spec.tile + 10 * spec.i0 + 100 * spec.j0)
        ref = a2b_edge.a2b_ord4(case.fa(q), case.g)
        qin, qout = case.storage(q), case.storage(np.zeros(case.shape("corner")))
        run(AGridToBGrid(case.factory, case.grid, spec).bind(qin, qout))
        out = numpy_of(qout)
        assert_equal_where_written(out, ref.data, f"qout {spec}")
        np.testing.assert_array_equal(numpy_of(qin), q)  # input untouched
    if layout == 3:
        assert touched == {0, 1, 2}


def test_a2b_ord4_replace_writes_the_input() -> None:
    """FV3's ``replace = .true.``: qin takes the corner values on is..ie+1, js..je+1 and keeps
    its other points (C24, 2x2 ranks of tile 1, 2 levels)."""
    factory = shared_factory()
    for spec in rank_specs(24, 2)[4:8]:
        case = rank_case(spec, factory, nz=2)
        q = _qin(case, seed=3)
        ref = case.fa(q)
        a2b_edge.a2b_ord4(ref, case.g, replace=True)
        qin = case.storage(np.stack([q, 2.0 * q], axis=2))
        run(AGridToBGrid(case.factory, case.grid, spec, replace=True).bind(qin))
        got = to_numpy(qin)
        assert_equal_where_written(got[:, :, 0], ref.data, f"qin {spec}")
        ref2 = case.fa(2.0 * q)
        a2b_edge.a2b_ord4(ref2, case.g, replace=True)
        assert_equal_where_written(got[:, :, 1], ref2.data, f"qin level 1 {spec}")


def test_bind_checks_replace() -> None:
    factory = shared_factory()
    case = rank_case(rank_specs(12, 1)[0], factory)
    q = case.storage(np.ones(case.shape("cell")))
    with pytest.raises(ValueError, match="needs a qout"):
        AGridToBGrid(case.factory, case.grid, case.spec).bind(q)
    with pytest.raises(ValueError, match="replace writes qin"):
        AGridToBGrid(case.factory, case.grid, case.spec, replace=True).bind(q, q)


def test_extrapolation_weights_are_fv3s_libm_distances() -> None:
    """The weights are FV3's x1 / (x2 - x1) of the C library's great-circle distances (the
    transliteration's ``great_circle_dist``), bit for bit, 72 of them at C12 and C24."""
    for resolution in (12, 24):
        total = 0
        for spec in rank_specs(resolution, 1):
            case = rank_case(spec, shared_factory())
            m = case.metric
            weights = corner_extrapolation_weights(case.grid)
            for name, (ci, cj) in cube_vertices(spec).items():
                p0 = np.array(m.grid[ci, cj])
                for w, ((ni, nj), (fi, fj)) in zip(weights, VERTEX_TERMS[name]):
                    x1 = a2b_edge.great_circle_dist(np.array(m.agrid[ci + ni, cj + nj]), p0)
                    x2 = a2b_edge.great_circle_dist(np.array(m.agrid[ci + fi, cj + fj]), p0)
                    total += 1
                    assert x1 / (x2 - x1) == w[ci, cj]
            nonzero = sum(int(np.count_nonzero(w)) for w in weights)
            assert nonzero == 12
        assert total == 72


@pytest.mark.slow
def test_a2b_ord4_compiled_backend_is_bitwise_numpys() -> None:
    """gt:cpu_ifirst (3 C++ stencils) at C12 on all 6 tiles: bitwise equal to the numpy
    backend and to the transliteration."""
    compiled, reference = shared_factory("gt:cpu_ifirst"), shared_factory()
    for spec in rank_specs(12, 1):
        outs = []
        for factory in (compiled, reference):
            case = rank_case(spec, factory)
            q = _qin(case, seed=spec.tile)
            qin, qout = case.storage(q), case.storage(np.zeros(case.shape("corner")))
            run(AGridToBGrid(case.factory, case.grid, spec).bind(qin, qout))
            outs.append(numpy_of(qout))
        np.testing.assert_array_equal(outs[0], outs[1])
        ref = a2b_edge.a2b_ord4(case.fa(q), case.g)
        assert_equal_where_written(outs[0], ref.data, f"gt:cpu_ifirst qout {spec}")

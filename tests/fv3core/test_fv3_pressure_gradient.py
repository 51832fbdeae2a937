"""fv3core.stencils.p_grad (FV3 ``geopk``, ``p_grad_c``, ``one_grad_p``, shallow
water) against the transliteration's functions (:mod:`tests.fv3core.transliteration.dyn_core`) on the
same inputs: FV3's TC2 state of each rank through the transliteration's ``c_sw``, perturbed on
every point, a random positive ``phis``; C12 and C24 on all 6 tiles, C24 on 2x2 ranks per tile
and on 3x3 (ranks touching 2, 1, 0 tile edges).  ``pk``, ``gz`` (both interfaces), ``uc``, ``vc``,
``u``, ``v`` over their whole arrays, bitwise on the numpy backend (whose ``exp``/``log`` are
NumPy's, as the transliteration's; ``one_grad_p``'s ``a2b_ord4`` reference with the C-library
great-circle distances, see tests/fv3core/test_a2b_ord4.py).

The C++ backends call the C library's ``exp``/``log``; NumPy's SIMD versions differ from those
in the last bit: :func:`test_numpy_exp_log_differ_from_the_c_library` counts it on the test's
``delp``, and the slow :func:`test_geopotential_compiled_backend` measures the effect on
gt:cpu_ifirst's ``pk`` and ``gz``."""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import pytest

from fv3core.stencils.geopk import Geopotential
from fv3core.stencils.p_grad import (
    CGridPressureGradient,
    DGridPressureGradient,
)
from stencils.storage import from_numpy, to_numpy
from tests.fv3core.fv3_stencil_reference import (
    CASE_IDS,
    CASES,
    RankCase,
    assert_equal_where_written,
    rank_case,
    rank_specs,
    run,
    shared_factory,
    tc2_cgrid_state,
)
from tests.fv3core.transliteration.dyn_core import geopk, geopk_hydrostatic, one_grad_p, p_grad_c
from tests.fv3core.transliteration.farray import R
from tests.numpy_simd import numpy_has_avx512f

DT = 600.0


@lru_cache(maxsize=64)
def _case(spec, backend: str = "numpy") -> tuple[RankCase, dict[str, np.ndarray]]:
    case = rank_case(spec, shared_factory(backend))
    state = tc2_cgrid_state(case, DT, seed=spec.tile + 3 * spec.i0 + 5 * spec.j0)
    rng = np.random.default_rng(spec.tile)
    state["phis"] = 1.0e3 * np.abs(rng.standard_normal(case.shape("cell")))
    return case, state


def _reference_geopk(case: RankCase, state: dict, cgrid: bool) -> tuple[list, list]:
    b, fa = case.g.bd, case.fa
    h = 1 if cgrid else 2
    pk = [fa(np.zeros(case.shape("cell"))) for _ in range(2)]
    gz = [fa(np.zeros(case.shape("cell"))) for _ in range(2)]
    geopk(fa(state["delp"]), fa(state["phis"]), fa(np.ones(case.shape("cell"))), pk, gz,
          R(b.is_ - h, b.ie + h), R(b.js - h, b.je + h))  # fmt: skip
    return pk, gz


def _ours_geopk(case: RankCase, state: dict, cgrid: bool) -> tuple[object, object]:
    pk = case.storage(np.zeros(case.shape("cell") + (2,)))
    gz = case.storage(np.zeros(case.shape("cell") + (2,)))
    launches = Geopotential(case.factory, cgrid=cgrid).bind(
        case.storage(state["delp"]), case.storage(np.ones(case.shape("cell"))),
        from_numpy(state["phis"], case.backend), pk, gz)  # fmt: skip
    assert len(launches) == 1
    run(launches)
    return pk, gz


def _assert_levels(ours: object, ref: list, name: str) -> None:
    got = to_numpy(ours)
    for k in range(2):
        assert_equal_where_written(got[:, :, k], ref[k].data, f"{name} level {k}")


@pytest.mark.parametrize("resolution,layout,tiles", CASES, ids=CASE_IDS)
def test_cgrid_geopotential_and_pressure_gradient(resolution: int, layout: int, tiles: tuple
                                                  ) -> None:  # fmt: skip
    """geopk on FV3's C-grid range (is-1..ie+1) from c_sw's delp, then p_grad_c over dt/2."""
    for spec in rank_specs(resolution, layout, tiles):
        case, state = _case(spec)
        pk_ref, gz_ref = _reference_geopk(case, state, cgrid=True)
        pk, gz = _ours_geopk(case, state, cgrid=True)
        _assert_levels(pk, pk_ref, f"pk {spec}")
        _assert_levels(gz, gz_ref, f"gz {spec}")
        uc_ref, vc_ref = case.fa(state["uc"]), case.fa(state["vc"])
        p_grad_c(0.5 * DT, pk_ref, gz_ref, uc_ref, vc_ref, case.g)
        uc, vc = case.storage(state["uc"]), case.storage(state["vc"])
        launches = CGridPressureGradient(case.factory, case.grid, 0.5 * DT).bind(uc, vc, pk, gz)
        assert len(launches) == 2
        run(launches)
        assert_equal_where_written(to_numpy(uc)[:, :, 0], uc_ref.data, f"uc {spec}")
        assert_equal_where_written(to_numpy(vc)[:, :, 0], vc_ref.data, f"vc {spec}")


@pytest.mark.parametrize("resolution,layout,tiles", CASES, ids=CASE_IDS)
def test_dgrid_geopotential_and_pressure_gradient(resolution: int, layout: int, tiles: tuple
                                                  ) -> None:  # fmt: skip
    """geopk on FV3's D-grid range (is-2..ie+2), then one_grad_p: pk, gz at the corners (in
    place) and the D-grid winds (entering as d_sw's u dx, v dy)."""
    for spec in rank_specs(resolution, layout, tiles):
        case, state = _case(spec)
        pk_ref, gz_ref = _reference_geopk(case, state, cgrid=False)
        pk, gz = _ours_geopk(case, state, cgrid=False)
        _assert_levels(pk, pk_ref, f"pk {spec}")
        _assert_levels(gz, gz_ref, f"gz {spec}")
        u_ref, v_ref = case.fa(state["u"]), case.fa(state["v"])
        one_grad_p(u_ref, v_ref, pk_ref, gz_ref, DT, case.g)
        u, v = case.storage(state["u"]), case.storage(state["v"])
        launches = DGridPressureGradient(case.factory, case.grid, spec, DT).bind(u, v, pk, gz)
        assert len(launches) == 9
        run(launches)
        _assert_levels(pk, pk_ref, f"one_grad_p pk {spec}")
        _assert_levels(gz, gz_ref, f"one_grad_p gz {spec}")
        assert_equal_where_written(to_numpy(u)[:, :, 0], u_ref.data, f"u {spec}")
        assert_equal_where_written(to_numpy(v)[:, :, 0], v_ref.data, f"v {spec}")


def test_geopotential_on_several_layers() -> None:
    """geopk's loops for npz = 3 (not a shallow-water configuration, the stencils' general form):
    pk top down from ptop, gz bottom up, against FV3's formulas evaluated level by level."""
    spec = rank_specs(12, 1)[2]
    case = rank_case(spec, shared_factory(), nz=3)
    rng = np.random.default_rng(9)
    shape = case.shape("cell")
    delp = 1.0e4 * (1.0 + rng.random(shape + (3,)))
    pt = 250.0 + 50.0 * rng.random(shape + (3,))
    phis = 1.0e3 * rng.random(shape)
    akap, ptop = 0.2857, 100.0
    pk, gz = case.storage(np.zeros(shape + (4,))), case.storage(np.zeros(shape + (4,)))
    run(Geopotential(case.factory, cgrid=False, akap=akap, ptop=ptop).bind(
        case.storage(delp), case.storage(pt), from_numpy(phis, "numpy"), pk, gz))  # fmt: skip
    s = np.s_[1:-1, 1:-1]
    p1d = np.full(shape, ptop)
    pk_ref = [np.full(shape, ptop**akap)]
    for k in range(3):
        p1d = p1d + delp[:, :, k]
        pk_ref.append(np.exp(akap * np.log(p1d)))
    gz_ref = [None, None, None, phis]
    for k in (2, 1, 0):
        gz_ref[k] = gz_ref[k + 1] + pt[:, :, k] * (pk_ref[k + 1] - pk_ref[k])
    for k in range(4):
        np.testing.assert_array_equal(to_numpy(pk)[s][:, :, k], pk_ref[k][s])
        np.testing.assert_array_equal(to_numpy(gz)[s][:, :, k], gz_ref[k][s])


def test_numpy_exp_log_differ_from_the_c_library() -> None:
    """NumPy's exp(log(delp)) (numpy backend, transliteration) against the C library's (the C++
    backends, gfortran) on the C24 tile-1 delp: equal within 1 ulp; with AVX512F NumPy runs its
    own kernels, which differ from the C library's at some points, without it NumPy calls the C
    library, bitwise equal everywhere."""
    _, state = _case(rank_specs(24, 1)[0])
    x = state["delp"].ravel()
    ours = np.exp(1.0 * np.log(x))
    libm = np.array([math.exp(1.0 * math.log(v)) for v in x])
    ulps = np.abs(ours - libm) / np.spacing(np.abs(libm))
    assert ulps.max() <= 1.0
    if numpy_has_avx512f():
        assert 0.0 < np.mean(ours != libm) < 0.5
    else:
        assert np.array_equal(ours, libm)


@pytest.mark.slow
def test_geopotential_compiled_backend() -> None:
    """gt:cpu_ifirst's geopk (C library exp/log) at C12, all tiles: pk within 1 ulp of the
    transliteration's (NumPy exp/log) at the points where they differ (measured: 59 of 1176),
    gz within 1e-15 relative (measured 2.4e-16); p_grad_c bitwise given the same pk and gz."""
    worst_pk, worst_gz, differing, total = 0.0, 0.0, 0, 0
    for spec in rank_specs(12, 1):
        case, state = _case(spec, "gt:cpu_ifirst")
        pk_ref, gz_ref = _reference_geopk(case, state, cgrid=True)
        pk, gz = _ours_geopk(case, state, cgrid=True)
        got_pk, got_gz = to_numpy(pk)[:, :, 1], to_numpy(gz)[:, :, 0]
        ok = np.isfinite(pk_ref[1].data) & (pk_ref[1].data != 0.0)
        d = np.abs(got_pk - pk_ref[1].data)[ok] / np.spacing(np.abs(pk_ref[1].data[ok]))
        differing, total = differing + int(np.count_nonzero(d)), total + d.size
        worst_pk = max(worst_pk, float(d.max()))
        worst_gz = max(worst_gz, float(np.max(np.abs(got_gz - gz_ref[0].data)[ok]
                                              / np.abs(gz_ref[0].data[ok]))))  # fmt: skip
        uc_ref, vc_ref = case.fa(state["uc"]), case.fa(state["vc"])
        pk_same = case.storage(np.stack([p.data for p in pk_ref], axis=2))
        gz_same = case.storage(np.stack([g.data for g in gz_ref], axis=2))
        p_grad_c(0.5 * DT, pk_ref, gz_ref, uc_ref, vc_ref, case.g)
        uc, vc = case.storage(state["uc"]), case.storage(state["vc"])
        run(CGridPressureGradient(case.factory, case.grid, 0.5 * DT).bind(uc, vc, pk_same, gz_same))
        assert_equal_where_written(to_numpy(uc)[:, :, 0], uc_ref.data, f"gt uc {spec}")
        assert_equal_where_written(to_numpy(vc)[:, :, 0], vc_ref.data, f"gt vc {spec}")
    print(
        f"gt:cpu_ifirst geopk: {differing} of {total} pk values differ, max {worst_pk} ulp; "
        f"gz max relative difference {worst_gz:.2e}"
    )
    assert worst_pk <= 1.0 and worst_gz <= 1e-15


def test_hydrostatic_geopotential_with_pressure_bitwise() -> None:
    """The 3-D core's geopk (``cp_air``, ``ptop`` > 0, kappa 2/7, 5 layers) with FV3's ``pe``,
    ``peln`` and ``pkz``, against the transliteration (tests.fv3core.transliteration.dyn_core
    .geopk_hydrostatic, FV3's loops level by level): pk and gz on the D-grid range, pe on
    is-1..ie+1, peln and pkz on the compute cells, bitwise on numpy; and pkz against its
    definition ``(pk(k+1) - pk(k)) / (kappa dlog p)`` evaluated independently to 1e-13 (differences of logs of
    nearby pressures lose a few digits)."""
    nz, akap, ptop, cp = 5, 287.05 / 1004.6, 219.4, 1004.6
    spec = rank_specs(12, 2)[3]
    case = rank_case(spec, shared_factory(), nz=nz)
    b, fa = case.g.bd, case.fa
    rng = np.random.default_rng(17)
    shape = case.shape("cell")
    delp = 1.0e4 * (1.0 + rng.random(shape + (nz,)))
    pt = (300.0 + 30.0 * rng.random(shape + (nz,))) / 1.0e5**akap
    phis = 1.0e3 * rng.random(shape)
    inter = [np.zeros(shape + (nz + 1,)) for _ in range(4)]
    pk, gz, pe, peln = (case.storage(a) for a in inter)
    pkz = case.storage(np.zeros(shape + (nz,)))
    launches = Geopotential(case.factory, cgrid=False, akap=akap, ptop=ptop, cp=cp).bind(
        case.storage(delp), case.storage(pt), from_numpy(phis, "numpy"), pk, gz, (pe, peln, pkz))
    assert len(launches) == 3
    run(launches)
    levels = [[fa(np.zeros(shape)) for _ in range(nz + 1)] for _ in range(4)]
    pk_r, gz_r, pe_r, peln_r = levels
    pkz_r = [fa(np.zeros(shape)) for _ in range(nz)]
    geopk_hydrostatic([fa(delp[:, :, k]) for k in range(nz)], fa(phis),
                      [fa(pt[:, :, k]) for k in range(nz)], pk_r, gz_r,
                      R(b.is_ - 2, b.ie + 2), R(b.js - 2, b.je + 2), ptop=ptop, akap=akap, cp=cp,
                      pressure=(pe_r, peln_r, pkz_r), bd=b)  # fmt: skip
    h = 3
    d_range = np.s_[h - 2 : h + spec.nx + 2, h - 2 : h + spec.ny + 2]
    halo1 = np.s_[h - 1 : h + spec.nx + 1, h - 1 : h + spec.ny + 1]
    compute = np.s_[h : h + spec.nx, h : h + spec.ny]
    for name, ours, ref, where, n in (("pk", pk, pk_r, d_range, nz + 1), ("gz", gz, gz_r, d_range, nz + 1),
                                      ("pe", pe, pe_r, halo1, nz + 1),
                                      ("peln", peln, peln_r, compute, nz + 1),
                                      ("pkz", pkz, pkz_r, compute, nz)):  # fmt: skip
        got = to_numpy(ours)
        for k in range(n):
            np.testing.assert_array_equal(got[where][:, :, k], ref[k].data[where], f"{name} level {k}")
    p = ptop + np.concatenate([np.zeros(shape + (1,)), np.cumsum(delp, axis=2)], axis=2)
    definition = np.diff(p**akap, axis=2) / (akap * np.diff(np.log(p), axis=2))
    np.testing.assert_allclose(to_numpy(pkz)[compute], definition[compute], rtol=1e-13, atol=0)

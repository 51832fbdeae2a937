"""fv3core.vertical.remapping: FV3's vertical remapping in GTScript.

References: (a) the NumPy transliteration of GFDL's Fortran (:mod:`tests.fv3core.transliteration.mapz`),
bit for bit on the numpy backend; (b) analytic properties of FV3's scheme (conservation, the
identity, a linear profile, monotonicity, fillz); (c) properties of Lagrangian_to_Eulerian
(dry mass, ps, an isothermal atmosphere, constant tracers).
"""

from __future__ import annotations

import functools

import gt4py.storage as gt_storage
import numpy as np
import pytest

from fv3core.errors import FV3ConfigError
from fv3core.vertical import remapping as rm
from stencils.dims import CELL_DIMS, GridIndexing, face_dims
from stencils.directions import X, Y
from stencils.factory import StencilFactory
from stencils.storage import from_numpy, to_numpy, zeros
from tests.fv3core.transliteration import mapz

NX, NY, NZ, H = 6, 5, 26, 3
PTOP, AKAP = 300.0, 2.0 / 7.0


def factory_for(backend: str):
    return StencilFactory(backend).on_grid(GridIndexing(NX, NY, NZ, H))


@pytest.fixture(scope="module")
def factory():
    return factory_for("numpy")


def columns(rng, shape, ps_range=(9.0e4, 1.02e5), lo=0.3, hi=1.7):
    """Random monotone interface pressures (Pa) on ``shape`` columns, top ``PTOP``: thicknesses
    between ``lo`` and ``hi`` times the mean."""
    ps = rng.uniform(*ps_range, shape)
    w = rng.uniform(lo, hi, (*shape, NZ))
    dp = w / w.sum(-1, keepdims=True) * (ps - PTOP)[..., None]
    pe = np.concatenate([np.full((*shape, 1), PTOP), PTOP + np.cumsum(dp, -1)], -1)
    pe[..., -1] = ps
    return pe


def target_columns(rng, pe1, lo=0.3, hi=1.7):
    """Other interfaces spanning the same columns as ``pe1`` (same top and bottom)."""
    ps = pe1[..., -1]
    w = rng.uniform(lo, hi, pe1[..., 1:].shape)
    dp = w / w.sum(-1, keepdims=True) * (ps - PTOP)[..., None]
    pe = np.concatenate([np.full((*ps.shape, 1), PTOP), PTOP + np.cumsum(dp, -1)], -1)
    pe[..., -1] = ps
    return pe


def storage(a, backend="numpy"):
    """``a`` (interior, ``(NX, NY, nk)``) in a storage with halo ``H``."""
    full = np.zeros((a.shape[0] + 2 * H, a.shape[1] + 2 * H, a.shape[2]))
    full[H:-H, H:-H] = a
    return from_numpy(full, backend, (H, H, 0))


def interior(s):
    return to_numpy(s)[H:-H, H:-H]


def run(launches):
    for launch in launches:
        launch()


@functools.cache
def mapper(factory, kord, iv, qmin):
    """One MapSingle per factory and configuration for the whole module (its scratch fields
    are rewritten by every run, so tests can share it)."""
    return rm.MapSingle(factory, kord, iv, qmin=qmin)


def bottom_value(q):
    """``iv = -2``'s bottom value (the surface's ``w``): a field of the columns' own scale."""
    return np.random.default_rng(99).uniform(-0.5, 0.5, q.shape[:2])


def remap(factory, kord, iv, q, pe1, pe2, qmin=None, backend="numpy"):
    m = mapper(factory, kord, iv, qmin)
    qf = storage(q, backend)
    qs = None
    if iv == -2:
        full = np.zeros((NX + 2 * H, NY + 2 * H))
        full[H:-H, H:-H] = bottom_value(q)
        qs = from_numpy(full, backend, (H, H))
    run(m.bind(qf, storage(pe1, backend), storage(pe2, backend), qs=qs))
    return interior(qf)


def reference(kord, iv, q, pe1, pe2, qmin=None):
    qs = bottom_value(q).reshape(-1) if iv == -2 else None
    flat = mapz.map1(pe1.reshape(-1, NZ + 1), q.reshape(-1, NZ), pe2.reshape(-1, NZ + 1), iv,
                     kord, qmin=qmin, qs=qs)  # fmt: skip
    return flat.reshape(q.shape)


def random_case(seed):
    rng = np.random.default_rng(seed)
    pe1 = columns(rng, (NX, NY))
    pe2 = target_columns(rng, pe1)
    q = rng.uniform(0.0, 1.0, (NX, NY, NZ))
    return q, pe1, pe2


# (a) the GTScript routines equal the transliteration ---------------------------------------

#: the default suite: every kord (iv = 1), every iv (kord 10), scalar_profile's qmin branches
DEFAULT_CASES = ([(k, 1, None) for k in rm.SUPPORTED_KORD]
                 + [(10, iv, None) for iv in (-2, -1, 0, 2)] + [(9, -2, None)]
                 + [(k, iv, 0.5) for k in (9, 10, 11) for iv in (0, 1)])  # fmt: skip
ALL_CASES = [(k, iv, qmin) for k in rm.SUPPORTED_KORD for iv in rm.SUPPORTED_IV
             for qmin in (None, 0.5)]  # fmt: skip


@pytest.mark.parametrize("kord, iv, qmin", DEFAULT_CASES)
def test_map_single_equals_transliteration(factory, kord, iv, qmin):
    """MapSingle (map1_ppm, or map_scalar with qmin) on random columns (26 layers, thicknesses
    0.3-1.7 times the mean, q uniform in [0, 1]: plenty of local extrema) == the transliterated
    Fortran, bit for bit (numpy backend: the same float operations in the same order)."""
    q, pe1, pe2 = random_case(kord * 10 + iv)
    got = remap(factory, kord, iv, q, pe1, pe2, qmin)
    np.testing.assert_array_equal(got, reference(kord, iv, q, pe1, pe2, qmin))


@pytest.mark.slow
@pytest.mark.parametrize("kord, iv, qmin", [c for c in ALL_CASES if c not in DEFAULT_CASES])
def test_map_single_equals_transliteration_all(factory, kord, iv, qmin):
    """Every supported (kord, iv) with and without qmin: as above."""
    q, pe1, pe2 = random_case(kord * 10 + iv)
    got = remap(factory, kord, iv, q, pe1, pe2, qmin)
    np.testing.assert_array_equal(got, reference(kord, iv, q, pe1, pe2, qmin))


def test_map1_q2_and_mapn_tracer_equal_transliteration(factory):
    """map1_q2 (divide by dp2) and mapn_tracer (its factored arithmetic, then fillz) == the
    transliteration, bit for bit; tracers with negative values so that fillz acts."""
    rng = np.random.default_rng(7)
    pe1 = columns(rng, (NX, NY))
    pe2 = target_columns(rng, pe1)
    dp2 = np.diff(pe2, axis=-1)
    tracers = [rng.uniform(-0.2, 1.0, (NX, NY, NZ)) for _ in range(3)]
    kords = [9, 10, 10]
    m = rm.MapNTracer(factory, kords, q_min=0.0, fill=True)
    qs = [storage(t) for t in tracers]
    run(m.bind(qs, storage(pe1), storage(pe2), storage(dp2)))
    ref = mapz.mapn_tracer(pe1.reshape(-1, NZ + 1), pe2.reshape(-1, NZ + 1),
                           [t.reshape(-1, NZ) for t in tracers], dp2.reshape(-1, NZ), kords)  # fmt: skip
    for s, r in zip(qs, ref):
        np.testing.assert_array_equal(interior(s), r.reshape(NX, NY, NZ))
    single = rm.MapSingle(factory, 10, 0, qmin=0.0, by_dp2=True)
    s = storage(tracers[0])
    run(single.bind(s, storage(pe1), storage(pe2), storage(dp2)))
    ref = mapz.map1(pe1.reshape(-1, NZ + 1), tracers[0].reshape(-1, NZ), pe2.reshape(-1, NZ + 1),
                    0, 10, qmin=0.0, dp2=dp2.reshape(-1, NZ))  # fmt: skip
    np.testing.assert_array_equal(interior(s), ref.reshape(NX, NY, NZ))


def fillz_case(seed):
    rng = np.random.default_rng(seed)
    dp = np.diff(columns(rng, (NX, NY)), axis=-1)
    q = rng.uniform(-0.5, 1.0, (NX, NY, NZ))
    q[0, 0] = -np.abs(q[0, 0])  # a column without mass: no non-local fix
    q[1, 0, 0] = -0.3  # a negative top layer
    q[1, 1, -1] = -0.4  # a negative bottom layer
    return q, dp


def test_fillz_equals_transliteration(factory):
    """FillZ == the transliterated fillz, bit for bit (random q in [-0.5, 1], a column with
    only negative values, negative top and bottom layers)."""
    q, dp = fillz_case(3)
    s = storage(q)
    run(rm.FillZ(factory).bind(s, storage(dp)))
    ref = mapz.fillz(q.reshape(-1, NZ), dp.reshape(-1, NZ)).reshape(q.shape)
    np.testing.assert_array_equal(interior(s), ref)


# (b) analytic properties -----------------------------------------------------------------------


@pytest.mark.parametrize("kord", rm.SUPPORTED_KORD)
def test_conserves_column_integral(factory, kord):
    """sum(q2 dp2) == sum(q1 dp1) to round-off (<= 1e-13 relative) for every kord: the
    remapping integrates one piecewise profile over new layers that tile the same column."""
    q, pe1, pe2 = random_case(kord * 10 + 1)
    got = remap(factory, kord, 1, q, pe1, pe2)
    m1 = (q * np.diff(pe1, axis=-1)).sum(-1)
    m2 = (got * np.diff(pe2, axis=-1)).sum(-1)
    assert np.max(np.abs(m2 / m1 - 1.0)) <= 1e-13


@pytest.mark.parametrize("kord", rm.SUPPORTED_KORD)
def test_same_levels_is_identity(factory, kord):
    """Remapping onto the source levels returns q to round-off (<= 1e-14 relative): each new
    layer is one old layer (pl = 0, pr = 1), whose profile mean is a4_1 by construction
    (a4_4 = 3 (2 a4_1 - a4_2 - a4_3)); exact only up to the rounding of that expression."""
    q, pe1, _ = random_case(kord * 10 + 1)
    got = remap(factory, kord, 1, q + 1.0, pe1, pe1)
    np.testing.assert_allclose(got, q + 1.0, rtol=1e-14, atol=0)


@pytest.mark.parametrize("kord", rm.SUPPORTED_KORD)
def test_linear_profile(factory, kord):
    """Layer means of q = a + b p remapped to other levels.  What FV3's scheme allows: its
    spline's interface values are exact for linear data (not for quadratic: its end
    conditions are FV3's, measured in the transliteration: 0.5 error on a quadratic with unit
    layers), and no limiter changes a monotone linear profile (no extremum; the edge values
    already lie between the neighbouring means and within Huynh's bounds; the parabola is a
    line, a4_4 = 0); so every kord gives the exact layer means of the new layers to round-off
    (<= 1e-13 relative)."""
    rng = np.random.default_rng(kord)
    pe1 = columns(rng, (NX, NY))
    pe2 = target_columns(rng, pe1)
    a, b = 250.0, 1.0e-4

    def means(pe):
        return a + b * 0.5 * (pe[..., 1:] + pe[..., :-1])

    got = remap(factory, kord, 1, means(pe1), pe1, pe2)
    np.testing.assert_allclose(got, means(pe2), rtol=1e-13, atol=0)


@pytest.mark.parametrize("kord", [14, 15])
def test_monotone_kord_no_new_extrema(factory, kord):
    """kord 14 (the standard PPM constraint in every interior layer) and 15 (cs_limiters
    iv = 1): the interior interface values are clipped to the neighbouring means and every
    sub-grid profile stays within its edge values, so a new layer lying within source layers
    2..km-1 has a mean within [min q, max q] of its column (no new extrema).  Not true next to
    the model top and surface: FV3 does not clip the outermost edge values (the spline's
    extrapolation), and a new layer inside the top or bottom source layer can exceed the range;
    the test shows that too."""
    q, pe1, pe2 = random_case(kord)
    got = remap(factory, kord, 1, q, pe1, pe2)
    inner = (pe2[..., :-1] >= pe1[..., 1:2]) & (pe2[..., 1:] <= pe1[..., -2:-1])
    lo, hi = q.min(-1, keepdims=True), q.max(-1, keepdims=True)
    assert inner.sum() > 0.8 * inner.size
    assert np.all(got[inner] >= np.broadcast_to(lo, got.shape)[inner])
    assert np.all(got[inner] <= np.broadcast_to(hi, got.shape)[inner])
    assert np.any((got < lo) | (got > hi))


def test_fillz_removes_negatives_and_conserves(factory):
    """fillz leaves no negative values where the column's mass is positive and conserves the
    column's sum(q dp) to round-off (<= 1e-13 relative); a column with negative total mass
    keeps it."""
    q, dp = fillz_case(5)
    s = storage(q)
    run(rm.FillZ(factory).bind(s, storage(dp)))
    got = interior(s)
    m0, m1 = (q * dp).sum(-1), (got * dp).sum(-1)
    positive = m0 > 0
    assert positive.sum() > 20
    assert np.all(got[positive] >= 0.0)
    np.testing.assert_allclose(m1[positive], m0[positive], rtol=1e-13)


def test_refusals(factory):
    """Unsupported kord/iv are refused naming the key."""
    with pytest.raises(FV3ConfigError, match="kord = 6"):
        rm.MapSingle(factory, 6, 1)
    with pytest.raises(FV3ConfigError, match="kord = 16"):
        rm.MapSingle(factory, 16, 1)
    with pytest.raises(FV3ConfigError, match="gam"):
        rm.MapSingle(factory, 9, -3)
    with pytest.raises(ValueError, match="qs"):
        rm.MapSingle(factory, 9, -2).bind(*(storage(np.zeros((NX, NY, n))) for n in (NZ, NZ + 1, NZ + 1)))
    ak, bk = eta_levels()
    with pytest.raises(FV3ConfigError, match="kord_tm = -5"):
        rm.LagrangianToEulerian(factory, ak, bk, kord_mt=9, kord_tm=-5, kord_tr=9, akap=AKAP)


# (c) Lagrangian_to_Eulerian --------------------------------------------------------------------


def eta_levels():
    """A hybrid coordinate: pure pressure above, sigma at the surface (``ak[0] = PTOP``,
    reference surface pressure 1e5 Pa; monotone for the ps of these tests)."""
    eta = np.linspace(0.0, 1.0, NZ + 1) ** 1.5
    bk = np.clip((eta - 0.2) / 0.8, 0.0, 1.0) ** 1.2
    ak = PTOP + eta * (1.0e5 - PTOP) - bk * 1.0e5
    ak[0], bk[0], ak[-1], bk[-1] = PTOP, 0.0, 0.0, 1.0
    return ak, bk


def l2e_state(seed, *, nq, isothermal=None, tracer_value=None):
    """A Lagrangian state on the halo-3 grid: random monotone pe everywhere (the halo too),
    pk, peln from it, pt = T / pkz with T random (or ``isothermal``), winds, tracers."""
    rng = np.random.default_rng(seed)
    idx = GridIndexing(NX, NY, NZ, H)
    shape = (NX + 2 * H, NY + 2 * H)
    pe = columns(rng, shape)
    pk, peln = np.exp(AKAP * np.log(pe)), np.log(pe)
    pkz = (pk[..., 1:] - pk[..., :-1]) / (AKAP * (peln[..., 1:] - peln[..., :-1]))
    temp = (np.full(pkz.shape, isothermal) if isothermal is not None
            else rng.uniform(200.0, 300.0, pkz.shape))  # fmt: skip
    u = rng.uniform(-30, 30, (NX + 2 * H, NY + 1 + 2 * H, NZ))
    v = rng.uniform(-30, 30, (NX + 1 + 2 * H, NY + 2 * H, NZ))
    tr = [(np.full(pkz.shape, tracer_value) if tracer_value is not None
           else rng.uniform(-0.1, 1.0, pkz.shape)) for _ in range(nq)]  # fmt: skip
    delp = np.diff(pe, axis=-1)
    return idx, {"pe": pe, "delp": delp, "pt": temp / pkz, "u": u, "v": v, "q": tr, "pk": pk,
                 "peln": peln, "T": temp}  # fmt: skip


def run_l2e(factory, state, *, kord_tm, nq, last_step, backend="numpy", kord_tr=9):
    ak, bk = eta_levels()
    l2e = rm.LagrangianToEulerian(factory, ak, bk, kord_mt=10, kord_tm=kord_tm, kord_tr=kord_tr,
                                  nq=nq, fill=True, akap=AKAP)  # fmt: skip
    idx = factory.indexing

    def st(a):
        return from_numpy(a, backend, (H, H, 0))

    s = {k: st(state[k]) for k in ("pe", "delp", "pt", "u", "v", "pk", "peln")}
    tr = [st(t) for t in state["q"]]
    ps = gt_storage.zeros((NX + 2 * H, NY + 2 * H), np.float64, backend=backend,
                          aligned_index=(H, H))  # fmt: skip
    pkz = zeros(idx.domain_of(CELL_DIMS), backend)
    l2e(s["pe"], s["delp"], s["pt"], s["u"], s["v"], tr, ps, s["pk"], s["peln"], pkz,
        last_step=last_step)  # fmt: skip
    out = {k: to_numpy(v) for k, v in s.items()}
    out["q"] = [to_numpy(t) for t in tr]
    out["ps"], out["pkz"] = to_numpy(ps), to_numpy(pkz)
    return out


def l2e_reference(state, *, kord_tm, nq, last_step, kord_tr=9):
    ak, bk = eta_levels()
    c = (slice(H, H + NX), slice(H, H + NY))
    return mapz.lagrangian_to_eulerian(
        state["pe"][H - 1 : H + NX + 1, H - 1 : H + NY + 1], state["delp"][c], state["pt"][c],
        state["u"][H : H + NX, H : H + NY + 1], state["v"][H : H + NX + 1, H : H + NY],
        [t[c] for t in state["q"]], state["pk"][c], state["peln"][c], ak, bk, akap=AKAP,
        kord_mt=10, kord_tm=kord_tm, kord_tr=[kord_tr] * nq, fill=True, last_step=last_step,
        ptop=PTOP)  # fmt: skip


def compare_l2e(out, ref, *, nq, rtol=0.0):
    c = (slice(H, H + NX), slice(H, H + NY))
    check = np.testing.assert_array_equal if rtol == 0.0 else (
        lambda a, b: np.testing.assert_allclose(a, b, rtol=rtol, atol=0))  # fmt: skip
    check(out["pe"][H - 1 : H + NX + 1, H - 1 : H + NY + 1], ref["pe"])
    for k in ("delp", "pt", "pk", "peln", "pkz"):
        check(out[k][c], ref[k])
    check(out["ps"][c], ref["ps"])
    check(out["u"][H : H + NX, H : H + NY + 1], ref["u"])
    check(out["v"][H : H + NX + 1, H : H + NY], ref["v"])
    for i in range(nq):
        check(out["q"][i][c], ref["q"][i])


@pytest.mark.parametrize("kord_tm, nq, last_step", [(-9, 2, False), (9, 6, True)])
def test_lagrangian_to_eulerian_equals_transliteration(factory, kord_tm, nq, last_step):
    """LagrangianToEulerian == the transliterated Lagrangian_to_Eulerian (hydrostatic, dry),
    bit for bit on the numpy backend: kord_tm < 0 (T_v in log p, map_scalar) with map1_q2 +
    fillz tracers, and kord_tm > 0 (pt in p, map1_ppm) with mapn_tracer (nq > 5)."""
    _, state = l2e_state(11, nq=nq)
    out = run_l2e(factory, state, kord_tm=kord_tm, nq=nq, last_step=last_step)
    ref = l2e_reference(state, kord_tm=kord_tm, nq=nq, last_step=last_step)
    compare_l2e(out, ref, nq=nq)


RDGAS, GRAV = 287.05, 9.80665
NONHYDROSTATIC = rm.NonHydrostaticRemap(kord_wz=9, rdgas=RDGAS, grav=GRAV, cp_air=RDGAS / AKAP)


def nonhydrostatic_state(state, seed):
    """``state`` with layer thicknesses from the gas law at the layer-mean pressure perturbed by
    up to 2 % (``delz < 0``, m), ``w`` up to 3 m/s and the surface's ``ws``."""
    rng = np.random.default_rng(seed)
    pm = state["delp"] / np.diff(state["peln"], axis=-1)
    delz = -state["delp"] / GRAV * RDGAS * state["pt"] * np.exp((AKAP - 1.0) * np.log(pm))
    return {**state, "delz": delz * rng.uniform(0.98, 1.02, delz.shape),
            "w": rng.uniform(-3.0, 3.0, delz.shape), "ws": rng.uniform(-0.2, 0.2, delz.shape[:2])}  # fmt: skip


@pytest.mark.parametrize("kord_tm, last_step", [(-9, False), (9, True)])
def test_nonhydrostatic_lagrangian_to_eulerian_equals_transliteration(factory, kord_tm, last_step):
    """The non-hydrostatic Lagrangian_to_Eulerian (``w`` with kord_wz 9 and the surface's ``ws``
    below, ``delz`` through the specific volume, the temperature and ``pkz`` from ``delz``)
    == the transliteration, bit for bit: every field of the hydrostatic comparison plus ``w`` and
    ``delz``."""
    ak, bk = eta_levels()
    _, state = l2e_state(13, nq=1)
    state = nonhydrostatic_state(state, 13)
    l2e = rm.LagrangianToEulerian(factory, ak, bk, kord_mt=10, kord_tm=kord_tm, kord_tr=9, nq=1, fill=True,
                                  akap=AKAP, nonhydrostatic=NONHYDROSTATIC)  # fmt: skip

    def st(a):
        return from_numpy(a, "numpy", (H, H, 0) if a.ndim == 3 else (H, H))

    s = {k: st(state[k]) for k in ("pe", "delp", "pt", "u", "v", "pk", "peln", "w", "delz", "ws")}
    tr = [st(t) for t in state["q"]]
    ps = st(np.zeros((NX + 2 * H, NY + 2 * H)))
    pkz = zeros(factory.indexing.domain_of(CELL_DIMS), "numpy")
    l2e(s["pe"], s["delp"], s["pt"], s["u"], s["v"], tr, ps, s["pk"], s["peln"], pkz, last_step=last_step,
        vertical=(s["w"], s["delz"], s["ws"]))  # fmt: skip
    out = {k: to_numpy(v) for k, v in s.items()}
    out["q"], out["ps"], out["pkz"] = [to_numpy(t) for t in tr], to_numpy(ps), to_numpy(pkz)
    c = (slice(H, H + NX), slice(H, H + NY))
    nh = {"w": state["w"][c], "delz": state["delz"][c], "ws": state["ws"][c], "kord_wz": 9,
          "rrg": NONHYDROSTATIC.rrg, "k1k": NONHYDROSTATIC.k1k}  # fmt: skip
    ref = mapz.lagrangian_to_eulerian(
        state["pe"][H - 1 : H + NX + 1, H - 1 : H + NY + 1], state["delp"][c], state["pt"][c],
        state["u"][H : H + NX, H : H + NY + 1], state["v"][H : H + NX + 1, H : H + NY],
        [t[c] for t in state["q"]], state["pk"][c], state["peln"][c], ak, bk, akap=AKAP,
        kord_mt=10, kord_tm=kord_tm, kord_tr=[9], fill=True, last_step=last_step, ptop=PTOP,
        nonhydrostatic=nh)  # fmt: skip
    compare_l2e(out, ref, nq=1)
    for k in ("w", "delz"):
        np.testing.assert_array_equal(out[k][c], ref[k], err_msg=k)
    assert np.all(out["delz"][c] < 0.0)


@pytest.mark.parametrize("kord_tm", [-9, 10])
def test_lagrangian_to_eulerian_mass_and_ps(factory, kord_tm):
    """Dry mass: the new delp sum to the old column's (ps - ptop) to round-off, ps = the old
    bottom pe exactly, the new pe are ak + bk ps, pk = pe**akap and peln = log(pe) of them."""
    _, state = l2e_state(12, nq=1)
    out = run_l2e(factory, state, kord_tm=kord_tm, nq=1, last_step=False)
    c = (slice(H, H + NX), slice(H, H + NY))
    old = state["delp"][c].sum(-1)
    np.testing.assert_allclose(out["delp"][c].sum(-1), old, rtol=1e-14)
    np.testing.assert_array_equal(out["ps"][c], state["pe"][c][..., -1])
    ak, bk = eta_levels()
    pe = out["pe"][c]
    np.testing.assert_allclose(pe, ak + bk * out["ps"][c][..., None], rtol=1e-15)
    np.testing.assert_allclose(out["pk"][c], np.exp(AKAP * np.log(pe)), rtol=1e-15)
    np.testing.assert_allclose(out["peln"][c], np.log(pe), rtol=1e-15)


@pytest.mark.parametrize("last_step", [False, True])
def test_lagrangian_to_eulerian_isothermal_and_constant_tracers(factory, last_step):
    """kord_tm < 0 (FV3's path for temperature): an isothermal atmosphere (T = 250 K) stays
    isothermal, T = pt pkz (not last step) or pt itself (last step) == 250 K to round-off;
    constant tracers stay constant (fillz has nothing to do)."""
    _, state = l2e_state(13, nq=2, isothermal=250.0, tracer_value=3.0e-3)
    out = run_l2e(factory, state, kord_tm=-9, nq=2, last_step=last_step)
    c = (slice(H, H + NX), slice(H, H + NY))
    temp = out["pt"][c] if last_step else out["pt"][c] * out["pkz"][c]
    np.testing.assert_allclose(temp, 250.0, rtol=1e-13)
    for t in out["q"]:
        np.testing.assert_allclose(t[c], 3.0e-3, rtol=1e-13)


# compiled backend ------------------------------------------------------------------------------


@pytest.mark.slow
def test_compiled_backend_equals_transliteration():
    """gt:cpu_ifirst: MapSingle (kord 10, iv 1, map_scalar) and FillZ bit for bit;
    LagrangianToEulerian (kord_tm -9, two tracers) within 1e-14 relative: its exp/log are the
    C library's, which differ from NumPy's in the last bit for some arguments (pn2, pk2 and
    everything remapped in log p follow them).  Measured: delp, peln, u, v, tracers bit for
    bit; pk 17 of 780 values by 2e-16, pkz and pt 32 values by up to 8.4e-15 relative (pkz
    divides the difference of neighbouring pk)."""
    backend = "gt:cpu_ifirst"
    f = factory_for(backend)
    q, pe1, pe2 = random_case(101)
    got = remap(f, 10, 1, q, pe1, pe2, qmin=0.5, backend=backend)
    np.testing.assert_array_equal(got, reference(10, 1, q, pe1, pe2, qmin=0.5))
    qf, dp = fillz_case(3)
    s = storage(qf, backend)
    run(rm.FillZ(f).bind(s, storage(dp, backend)))
    ref = mapz.fillz(qf.reshape(-1, NZ), dp.reshape(-1, NZ)).reshape(qf.shape)
    np.testing.assert_array_equal(interior(s), ref)
    _, state = l2e_state(11, nq=2)
    out = run_l2e(f, state, kord_tm=-9, nq=2, last_step=False, backend=backend)
    ref = l2e_reference(state, kord_tm=-9, nq=2, last_step=False)
    compare_l2e(out, ref, nq=2, rtol=1e-14)


def test_face_dims_are_the_wind_points():
    """The staggering the winds are remapped on (documented for the caller)."""
    assert face_dims(Y)[1] == "y_interface" and face_dims(X)[0] == "x_interface"

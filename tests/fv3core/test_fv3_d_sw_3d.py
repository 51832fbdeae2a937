"""The 3-D core's ``d_sw`` (FV3 built without ``SW_DYNAMICS``): DGridShallowWaterLagrangianDynamics with
``sw_dynamics=False`` transports ``pt`` with ``hord_tm`` and the ``delp`` fluxes and accumulates
FV3's ``mfx``, ``mfy``, ``cx``, ``cy``; against the NumPy transliteration of FV3's ``d_sw``
(tests.fv3core.transliteration.sw_core.d_sw with ``pt``, FV3's statements in FV3's order), bit for
bit, with fv3core's GTScript divergence damping on both sides of the comparison's d_sw (the
transliteration's own damping in the transliterated d_sw).  Inputs: FV3's TC2 state after one
c_sw step with every wind and delp perturbed (tests/fv3core/test_fv3_d_sw.py) and a random
positive ``pt`` field, all six tiles at C12."""

from __future__ import annotations

import numpy as np
import pytest

from fv3core.errors import FV3ConfigError
from fv3core.grid.storages import GridStorages
from fv3core.stencils.d_sw import DGridShallowWaterLagrangianDynamics
from fv3core.stencils.divergence_damping import DivergenceDamping
from stencils.dims import GridIndexing
from stencils.factory import StencilFactory
from stencils.storage import from_numpy, to_numpy
from tests.fv3core.test_fv3_d_sw import DT, FIELDS, NORD2, dsw_inputs, perturbed
from tests.fv3core.transliteration import sw_core
from tests.fv3core.transliteration.farray import FArray, R

HORD_DP, HORD_TM = 8, 10


@pytest.fixture(scope="module")
def cases():
    return perturbed(dsw_inputs(12, 1), seed=5)


def test_d_sw_3d_pt_and_flux_capacitor_bitwise(cases) -> None:
    """delp, pt, u, v after d_sw and mfx, mfy, cx, cy (random previous contents plus this
    step's fx, fy, crx, cry over FV3's ranges) equal the transliteration's bit for bit."""
    factory = StencilFactory("numpy")
    rng = np.random.default_rng(3)
    for case in cases.values():
        spec = case.metric.spec
        h, nx, ny = spec.n_halo, spec.nx, spec.ny
        grid = GridStorages(case.metric, "numpy")
        gf = factory.on_grid(GridIndexing(nx, ny, 1, h))
        damping = DivergenceDamping(gf, grid, spec, NORD2.nord, NORD2.dddmp, NORD2.d2_bg,
                                       NORD2.d4_bg, DT)  # fmt: skip
        dsw = DGridShallowWaterLagrangianDynamics(gf, grid, spec, DT, HORD_DP, 8, 8, damping,
                                   sw_dynamics=False, hord_tm=HORD_TM)  # fmt: skip
        pt = 12.0 + rng.standard_normal(case.arrays["delp"].shape)
        shapes = {"mfx": case.arrays["v"].shape, "mfy": case.arrays["u"].shape,
                  "cx": case.arrays["v"].shape, "cy": case.arrays["u"].shape}  # fmt: skip
        acc0 = {n: rng.standard_normal(s) for n, s in shapes.items()}
        st = {n: from_numpy(case.arrays[n][:, :, None].copy(), "numpy") for n in FIELDS}
        st_pt = from_numpy(pt[:, :, None].copy(), "numpy")
        st_acc = {n: from_numpy(a[:, :, None].copy(), "numpy") for n, a in acc0.items()}
        for launch in dsw.bind(*(st[n] for n in FIELDS), pt=st_pt,
                               accumulators=tuple(st_acc[n] for n in ("mfx", "mfy", "cx", "cy"))):
            launch()
        f = case.farrays()
        pt_ref = FArray(pt.copy(), f["delp"].lo)
        res = sw_core.d_sw(f["delp"], f["u"], f["v"], f["uc"], f["vc"], f["ua"], f["va"],
                           f["divgd"], DT, HORD_DP, 8, 8, NORD2.nord, NORD2.dddmp, NORD2.d2_bg,
                           NORD2.d4_bg, case.grid, pt=pt_ref, hord_tm=HORD_TM)  # fmt: skip
        compute = np.s_[h : h + nx, h : h + ny]
        for name, ours, ref in (("delp", st["delp"], f["delp"].data), ("u", st["u"], f["u"].data),
                                ("v", st["v"], f["v"].data)):  # fmt: skip
            np.testing.assert_array_equal(to_numpy(ours)[:, :, 0], ref, err_msg=name)
        np.testing.assert_array_equal(to_numpy(st_pt)[compute][:, :, 0], pt_ref.data[compute])
        assert np.abs(pt_ref.data[compute] - pt[compute]).max() > 1e-3  # pt was transported
        x_faces, y_faces = np.s_[h : h + nx + 1, h : h + ny], np.s_[h : h + nx, h : h + ny + 1]
        cx_range, cy_range = np.s_[h : h + nx + 1, :], np.s_[:, h : h + ny + 1]
        b = case.grid.bd
        xi, yj = R(b.is_, b.ie + 1), R(b.js, b.je + 1)
        xc, yc = R(b.is_, b.ie), R(b.js, b.je)
        expected = {"mfx": (x_faces, res.fx[xi, yc]), "mfy": (y_faces, res.fy[xc, yj]),
                    "cx": (cx_range, res.crx[xi, R(b.jsd, b.jed)]),
                    "cy": (cy_range, res.cry[R(b.isd, b.ied), yj])}  # fmt: skip
        for name, (where, increment) in expected.items():
            want = acc0[name].copy()
            want[where] = want[where] + increment
            np.testing.assert_array_equal(to_numpy(st_acc[name])[:, :, 0], want, err_msg=name)


def test_d_sw_3d_refuses_vorticity_damping(cases) -> None:
    """do_vort_damp in the 3-D core needs deln_flux's mass-weighted form for pt: refused by
    name."""
    case = next(iter(cases.values()))
    spec = case.metric.spec
    gf = StencilFactory("numpy").on_grid(GridIndexing(spec.nx, spec.ny, 1, spec.n_halo))
    grid = GridStorages(case.metric, "numpy")
    with pytest.raises(FV3ConfigError, match="do_vort_damp"):
        DGridShallowWaterLagrangianDynamics(gf, grid, spec, DT, 8, 8, 8, None, nord_v=2, damp_v=0.06,
                             sw_dynamics=False)  # fmt: skip


@pytest.mark.parametrize(("nord_w", "damp_w", "prevent"), [(0, 0.0, False), (2, 0.06, False), (0, 0.12, True)])
def test_d_sw_nonhydrostatic_w_bitwise(cases, nord_w: int, damp_w: float, prevent: bool) -> None:
    """FV3's ``.not. hydrostatic`` d_sw terms (DGridVerticalWind): ``w`` (transported as ``w
    delp`` with ``hord_vt`` and the mass fluxes, its ``del6_vt_flux`` damping of order 2 or del-2
    in the sponge, FV3's ``prevent_diss_cooling`` or not) and ``heat_source``, ``diss_est``
    (``do_diss_est``), with ``delp``, ``pt``, ``u``, ``v``: bitwise the transliteration's on the
    six tiles of C12; undamped, the heating is 0."""
    from fv3core.stencils.d_sw_vertical import DGridVerticalWind

    factory = StencilFactory("numpy")
    rng = np.random.default_rng(8)
    kgb = 0.15
    for case in cases.values():
        spec = case.metric.spec
        h, nx, ny = spec.n_halo, spec.nx, spec.ny
        grid = GridStorages(case.metric, "numpy")
        gf = factory.on_grid(GridIndexing(nx, ny, 1, h))
        damping = DivergenceDamping(gf, grid, spec, NORD2.nord, NORD2.dddmp, NORD2.d2_bg, NORD2.d4_bg, DT)
        vertical = DGridVerticalWind(gf, grid, spec, DT, 8, nord_w=nord_w, damp_w=damp_w, kgb=kgb,
                                     prevent_diss_cooling=prevent, do_diss_est=True)  # fmt: skip
        dsw = DGridShallowWaterLagrangianDynamics(gf, grid, spec, DT, HORD_DP, 8, 8, damping, sw_dynamics=False,
                                                  hord_tm=HORD_TM, vertical_wind=vertical)  # fmt: skip
        pt = 12.0 + rng.standard_normal(case.arrays["delp"].shape)
        w = 2.0 * rng.standard_normal(case.arrays["delp"].shape)
        st = {n: from_numpy(case.arrays[n][:, :, None].copy(), "numpy") for n in FIELDS}
        st_pt, st_w = (from_numpy(a[:, :, None].copy(), "numpy") for a in (pt, w))
        st_heat, st_diss = (from_numpy(np.full(pt.shape + (1,), 7.0), "numpy") for _ in range(2))
        for launch in dsw.bind(*(st[n] for n in FIELDS), pt=st_pt, vertical=(st_w, st_heat, st_diss)):
            launch()
        f = case.farrays()
        lo = f["delp"].lo
        pt_ref, w_ref = FArray(pt.copy(), lo), FArray(w.copy(), lo)
        res = sw_core.d_sw(f["delp"], f["u"], f["v"], f["uc"], f["vc"], f["ua"], f["va"], f["divgd"], DT, HORD_DP,
                           8, 8, NORD2.nord, NORD2.dddmp, NORD2.d2_bg, NORD2.d4_bg, case.grid, pt=pt_ref,
                           hord_tm=HORD_TM, vertical=sw_core.VerticalWind(w_ref, nord_w, damp_w, kgb, prevent, True))  # fmt: skip
        compute = np.s_[h : h + nx, h : h + ny]
        for name, ours, ref in (("delp", st["delp"], f["delp"].data), ("u", st["u"], f["u"].data),
                                ("v", st["v"], f["v"].data), ("w", st_w, w_ref.data)):  # fmt: skip
            np.testing.assert_array_equal(to_numpy(ours)[:, :, 0], ref, err_msg=name)
        np.testing.assert_array_equal(to_numpy(st_pt)[compute][:, :, 0], pt_ref.data[compute])
        b = case.grid.bd
        cells = R(b.is_, b.ie), R(b.js, b.je)
        for name, ours, ref in (("heat_source", st_heat, res.heat_source), ("diss_est", st_diss, res.diss_est)):
            np.testing.assert_array_equal(to_numpy(ours)[compute][:, :, 0], ref[cells], err_msg=name)
        heat = to_numpy(st_heat)[compute]
        assert (np.abs(heat).max() > 0.0) == (damp_w > 0.0)
        assert np.abs(w_ref.data[compute] - w[compute]).max() > 1e-3

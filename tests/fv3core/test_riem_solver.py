"""fv3core.stencils.riem_solver: FV3's ``Riem_Solver3`` (with ``imp_diff_w``) and
``Riem_Solver_c`` against their NumPy transliterations of ``nh_core.F90`` / ``nh_utils.F90``
(:mod:`tests.fv3core.transliteration.nh_utils`), bit for bit on the numpy backend, for each
solver ``a_imp`` selects and FV3's output options (``last_call``, ``fp_out``, ``use_logp``)."""

from __future__ import annotations

import numpy as np
import pytest

from fv3core.stencils.riem_solver import ImplicitWDiffusion, RiemannSolver3, RiemannSolverC
from stencils.dims import GridIndexing
from stencils.factory import StencilFactory
from stencils.storage import from_numpy, to_numpy
from tests.fv3core.transliteration import nh_utils

NX, NY, NZ, H = 4, 3, 16, 1
RDGAS, GRAV, AKAP = 287.05, 9.80665, 2.0 / 7.0
PTOP, DT, P_FAC = 300.0, 120.0, 0.05


def state(rng: np.random.Generator, ni: int, nj: int) -> dict[str, np.ndarray]:
    """``ni x nj`` columns: pressure thicknesses, a virtual potential temperature, interface
    heights from the gas law at the hydrostatic layer mean, perturbed by up to 3 % (m), ``w`` up
    to 3 m/s, ``ws`` up to 0.1 m/s, the surface height ``zs`` up to 500 m."""
    weights = rng.uniform(0.5, 1.5, (ni, nj, NZ)) * np.linspace(0.3, 1.0, NZ)
    ps = rng.uniform(9.5e4, 1.02e5, (ni, nj))
    delp = weights / weights.sum(-1, keepdims=True) * (ps - PTOP)[..., None]
    pe = PTOP + np.concatenate([np.zeros((ni, nj, 1)), np.cumsum(delp, -1)], -1)
    pm = delp / np.diff(np.log(pe), axis=-1)
    pt = (230.0 + 60.0 * pm / 1e5) / np.exp(AKAP * np.log(pm))
    delz = -delp / GRAV * RDGAS * pt * np.exp((AKAP - 1.0) * np.log(pm)) * rng.uniform(0.97, 1.03, delp.shape)
    zs = rng.uniform(0.0, 500.0, (ni, nj))
    zh = zs[..., None] - np.concatenate([np.cumsum(delz[..., ::-1], -1)[..., ::-1], np.zeros((ni, nj, 1))], -1)
    return {"delp": delp, "pt": pt, "zh": zh, "zs": zs, "w": rng.uniform(-3.0, 3.0, delp.shape),
            "ws": rng.uniform(-0.1, 0.1, (ni, nj))}  # fmt: skip


def storage(a: np.ndarray, backend: str = "numpy", halo: int = 0) -> object:
    """``a`` (the columns of ``halo`` cells around the compute domain) in an ``H``-halo field."""
    pad = H - halo
    full = np.zeros((a.shape[0] + 2 * pad, a.shape[1] + 2 * pad) + a.shape[2:])
    full[pad:pad + a.shape[0], pad:pad + a.shape[1]] = a
    if a.ndim == 3 and a.shape[2] == NZ:
        full = np.concatenate([full, np.zeros(full.shape[:2] + (1,))], -1)
    return from_numpy(full, backend, (H, H, 0) if a.ndim == 3 else (H, H))


def columns(field: object, halo: int = 0, nk: int = NZ + 1) -> np.ndarray:
    pad = H - halo
    a = to_numpy(field)
    return a[pad:a.shape[0] - pad, pad:a.shape[1] - pad, :nk]


def factory() -> object:
    return StencilFactory("numpy").on_grid(GridIndexing(NX, NY, NZ, H))


OPTIONS = [
    pytest.param(1.0, 0.0, False, False, False, id="SIM1"),
    pytest.param(0.75, 0.0, True, True, False, id="SIM-last-fp_out"),
    pytest.param(-0.75, 0.075, True, False, True, id="SIM3-imp_diff_w-logp"),
    pytest.param(-1.0, 0.0, False, True, True, id="SIM3p0-fp_out-logp"),
]


@pytest.mark.parametrize(("a_imp", "d2bg_zq", "last_call", "fp_out", "use_logp"), OPTIONS)
def test_riem_solver3_equals_fv3s(a_imp: float, d2bg_zq: float, last_call: bool, fp_out: bool,
                                  use_logp: bool) -> None:  # fmt: skip
    """``Riem_Solver3`` bitwise: ``w``, ``delz``, ``zh``, ``ppe``, ``pk3`` and (last call) FV3's
    ``pe``, ``peln``, ``pk``."""
    s = state(np.random.default_rng(17), NX, NY)
    solver = RiemannSolver3(factory(), dt=DT, a_imp=a_imp, akap=AKAP, ptop=PTOP, rgas=RDGAS, grav=GRAV,
                            p_fac=P_FAC, d2bg_zq=d2bg_zq, use_logp=use_logp, fp_out=fp_out,
                            last_call=last_call)  # fmt: skip
    interfaces = np.zeros((NX, NY, NZ + 1))
    f = {n: storage(s[n]) for n in ("w", "pt", "delp", "zh", "zs", "ws")}
    f["delz"] = storage(np.zeros((NX, NY, NZ)))
    out = {n: storage(interfaces) for n in ("ppe", "pk3", "pe", "peln", "pk")}
    for launch in solver.bind(f["w"], f["delz"], f["pt"], f["delp"], f["zh"], f["zs"], f["ws"], out["ppe"],
                              out["pk3"], out["pe"], out["peln"], out["pk"]):  # fmt: skip
        launch()
    ref = {n: np.array(s[n]) for n in ("w", "zh")}
    ref.update(delz=np.zeros((NX, NY, NZ)), **{n: np.zeros((NX, NY, NZ + 1)) for n in out})
    nh_utils.riem_solver3(DT, AKAP, PTOP, s["zs"], ref["w"], ref["delz"], s["pt"], s["delp"], ref["zh"], ref["pe"],
                          ref["peln"], ref["ppe"], ref["pk3"], ref["pk"], s["ws"], P_FAC, a_imp, use_logp,
                          last_call, fp_out, d2bg_zq, RDGAS, GRAV)  # fmt: skip
    ours = {n: columns(f[n], nk=NZ) for n in ("w", "delz")}
    ours.update({n: columns(f[n]) for n in ("zh",)}, **{n: columns(v) for n, v in out.items()})
    for name, value in ref.items():
        np.testing.assert_array_equal(ours[name], value, err_msg=name)
    assert np.abs(ours["w"] - s["w"]).max() > 1e-3


@pytest.mark.parametrize("a_imp", [1.0, 0.6, -0.2])
def test_riem_solver_c_equals_fv3s(a_imp: float) -> None:
    """``Riem_Solver_c`` bitwise on ``is-1..ie+1, js-1..je+1`` (``a_imp`` 1 and 0.6: SIM1,
    -0.2: SIM3p0): the full pressure ``pef`` and the geopotential ``gz``; ``w`` unchanged."""
    s = state(np.random.default_rng(23), NX + 2, NY + 2)
    hs = s["zs"] * GRAV
    solver = RiemannSolverC(factory(), dt=DT / 2, a_imp=a_imp, akap=AKAP, ptop=PTOP, rgas=RDGAS, grav=GRAV,
                            p_fac=P_FAC)  # fmt: skip
    f = {n: storage(s[n], halo=1) for n in ("w", "pt", "delp", "zh", "ws")}
    f["hs"], f["pef"] = storage(hs, halo=1), storage(np.zeros((NX + 2, NY + 2, NZ + 1)), halo=1)
    for launch in solver.bind(f["w"], f["pt"], f["delp"], f["zh"], f["hs"], f["ws"], f["pef"]):
        launch()
    gz, pef = np.array(s["zh"]), np.zeros((NX + 2, NY + 2, NZ + 1))
    nh_utils.riem_solver_c(DT / 2, AKAP, PTOP, hs, s["w"].copy(), s["pt"], s["delp"], gz, pef, s["ws"], P_FAC,
                           a_imp, RDGAS, GRAV)  # fmt: skip
    np.testing.assert_array_equal(columns(f["pef"], 1), pef)
    np.testing.assert_array_equal(columns(f["zh"], 1), gz)
    np.testing.assert_array_equal(columns(f["w"], 1, NZ), s["w"])
    assert np.abs(pef[..., 1:] - (PTOP + np.cumsum(s["delp"], -1))).max() > 1.0  # non-hydrostatic


def test_imp_diff_w_equals_fv3s_and_keeps_a_uniform_w() -> None:
    """``imp_diff_w`` bitwise; and (analytic) a uniform ``w`` equal to ``ws`` is a fixed point
    of the diffusion (to 1e-12 m/s)."""
    s = state(np.random.default_rng(29), NX, NY)
    delz = np.diff(s["zh"], axis=-1)  # FV3: zh(k+1) - zh(k) < 0
    w = storage(s["w"])
    ImplicitWDiffusion(factory(), 0.075).bind(w, storage(delz), storage(s["ws"]))()
    ref = np.array(s["w"])
    for j in range(NY):
        col_w = np.concatenate([np.zeros((NX, 1)), ref[:, j], np.zeros((NX, 1))], 1)
        col_dz = np.concatenate([np.zeros((NX, 1)), delz[:, j], np.zeros((NX, 1))], 1)
        nh_utils.imp_diff_w(NZ, 0.075, col_dz, s["ws"][:, j], col_w)
        ref[:, j] = col_w[:, 1:NZ + 1]
    np.testing.assert_array_equal(columns(w, nk=NZ), ref)
    uniform = storage(np.repeat(s["ws"][..., None], NZ, -1))
    ImplicitWDiffusion(factory(), 0.075).bind(uniform, storage(delz), storage(s["ws"]))()
    np.testing.assert_allclose(columns(uniform, nk=NZ), np.repeat(s["ws"][..., None], NZ, -1), atol=1e-12)

"""fv3core.stencils.sim_solver: FV3's semi-implicit vertical solvers (SIM1, SIM, SIM3, SIM3p0).

References: (a) the NumPy transliteration of GFDL's ``nh_utils.F90``
(:mod:`tests.fv3core.transliteration.nh_utils`), bit for bit on the numpy backend; (b) SIM1's two
tridiagonal systems (the cubic edge profile and the ``w`` system) assembled as dense matrices
from their equations and solved with ``numpy.linalg.solve`` (relative 1e-10: another order of
operations); (c) an analytic state: a column at rest whose layer thicknesses satisfy the gas law
at the hydrostatic layer-mean pressure stays at rest (``w`` below 1e-9 m/s, ``delz`` to 1e-12).
"""

from __future__ import annotations

import numpy as np
import pytest

from fv3core.errors import FV3ConfigError
from fv3core.stencils.sim_solver import SemiImplicitSolver, SolverChoice, rayleigh_w_factors
from stencils.dims import GridIndexing
from stencils.factory import StencilFactory
from stencils.storage import from_numpy, to_numpy
from tests.fv3core.transliteration import nh_utils

NX, NY, NZ, H = 5, 4, 20, 1
RDGAS, GRAV, AKAP = 287.05, 9.80665, 2.0 / 7.0
PTOP, DT, P_FAC = 300.0, 150.0, 0.05


def column_state(rng: np.random.Generator, at_rest: bool = False,
                 arithmetic_mean: bool = False) -> dict[str, np.ndarray]:  # fmt: skip
    """``NX x NY`` columns of ``NZ`` layers: FV3-like pressure thicknesses, a temperature profile
    with a horizontal wave, the virtual potential temperature ``pt`` (K / Pa**kappa), the
    hydrostatic layer mean ``pm`` (FV3's ``pm2 = delp / dlog(pe)``), thicknesses from the gas law
    at ``pm`` (or, ``arithmetic_mean``, at the mean of the layer's interface pressures; perturbed
    by up to 2 % unless ``at_rest``), ``w`` up to 2 m/s, ``ws`` up to 0.2 m/s."""
    w = rng.uniform(0.5, 1.5, (NX, NY, NZ)) * np.linspace(0.3, 1.0, NZ)
    ps = rng.uniform(9.5e4, 1.02e5, (NX, NY))
    delp = w / w.sum(-1, keepdims=True) * (ps - PTOP)[..., None]
    pe = PTOP + np.concatenate([np.zeros((NX, NY, 1)), np.cumsum(delp, -1)], -1)
    pm = delp / np.diff(np.log(pe), axis=-1)
    temp = 220.0 + 70.0 * (pm / 1e5) + 5.0 * np.sin(np.arange(NX))[:, None, None]
    pt = temp / np.exp(AKAP * np.log(pm))
    dm = delp / GRAV
    p_gas = 0.5 * (pe[..., :-1] + pe[..., 1:]) if arithmetic_mean else pm
    delz = -dm * RDGAS * pt * np.exp((AKAP - 1.0) * np.log(p_gas))
    state = {"dm": dm, "pm": pm, "pt": pt, "pem": pe, "delz": delz, "ws": np.zeros((NX, NY)),
             "w": np.zeros((NX, NY, NZ))}  # fmt: skip
    if not at_rest:
        state["delz"] = delz * rng.uniform(0.98, 1.02, delz.shape)
        state["w"] = rng.uniform(-2.0, 2.0, (NX, NY, NZ))
        state["ws"] = rng.uniform(-0.2, 0.2, (NX, NY))
    return state


def storages(state: dict[str, np.ndarray], backend: str = "numpy") -> dict[str, object]:
    out = {}
    for name, a in state.items():
        full = np.zeros((NX + 2 * H, NY + 2 * H) + a.shape[2:])
        full[H:-H, H:-H] = a
        if name == "ws":
            out[name] = from_numpy(full, backend, (H, H))
        else:
            full = np.concatenate([full, np.zeros(full.shape[:2] + (NZ + 1 - a.shape[2],))], -1)
            out[name] = from_numpy(full, backend, (H, H, 0))
    return out


def run_ours(state: dict[str, np.ndarray], a_imp: float, backend: str = "numpy",
             rff: np.ndarray | None = None) -> dict[str, np.ndarray]:  # fmt: skip
    factory = StencilFactory(backend).on_grid(GridIndexing(NX, NY, NZ, H))
    choice = SolverChoice.from_a_imp(a_imp)
    solver = SemiImplicitSolver(factory, choice, halo=0, dt=DT, rgas=RDGAS, akap=AKAP, grav=GRAV,
                                p_fac=P_FAC, rff=rff)  # fmt: skip
    s = storages({**state, "pe": np.zeros((NX, NY, NZ + 1))}, backend)
    k_field = from_numpy(np.append(rff if rff is not None else np.ones(NZ), 1.0), backend, (0,))
    solver.bind(s["w"], s["delz"], s["pe"], s["dm"], s["pm"], s["pt"], s["pem"], s["ws"], k_field)()
    return {n: to_numpy(s[n])[H:-H, H:-H, :nk] for n, nk in (("w", NZ), ("delz", NZ), ("pe", NZ + 1))}


def run_transliteration(state: dict[str, np.ndarray], a_imp: float,
                        damping: nh_utils.Damping | None = None) -> dict[str, np.ndarray]:  # fmt: skip
    """The Fortran solver on each ``j`` row (FV3's 1-based level arrays)."""
    out = {"w": np.zeros((NX, NY, NZ)), "delz": np.zeros((NX, NY, NZ)), "pe": np.zeros((NX, NY, NZ + 1))}
    gama = 1.0 / (1.0 - AKAP)
    for j in range(NY):
        col = {}
        for name in ("dm", "pm", "pt", "w", "delz", "pem"):
            a = state[name][:, j]
            col[name] = np.concatenate([np.zeros((NX, 1)), a, np.zeros((NX, NZ + 2 - 1 - a.shape[1]))], 1)
        gm2, cp2 = np.full_like(col["dm"], gama), np.full_like(col["dm"], AKAP)
        pe2 = nh_utils._solve(a_imp, DT, NZ, RDGAS, gama, AKAP, gm2, cp2, col["dm"], col["pm"], col["pem"],
                              col["w"], col["delz"], col["pt"], state["ws"][:, j], P_FAC, GRAV, damping,
                              cgrid=False)  # fmt: skip
        out["w"][:, j], out["delz"][:, j] = col["w"][:, 1:NZ + 1], col["delz"][:, 1:NZ + 1]
        out["pe"][:, j] = pe2[:, 1:NZ + 2]
    return out


SOLVERS = {"SIM1": 1.0, "SIM": 0.75, "SIM3": -0.75, "SIM3p0": -1.0}


@pytest.mark.parametrize("name", SOLVERS)
def test_each_solver_equals_fv3s_bit_for_bit(name: str) -> None:
    """Each solver ``a_imp`` selects equals its transliteration of ``nh_utils.F90``, bitwise:
    ``w``, ``delz`` and the interfaces' pressure perturbation."""
    assert SolverChoice.from_a_imp(SOLVERS[name]).name == name
    state = column_state(np.random.default_rng(7))
    ours = run_ours(state, SOLVERS[name])
    ref = run_transliteration(state, SOLVERS[name])
    for field in ("w", "delz", "pe"):
        np.testing.assert_array_equal(ours[field], ref[field], err_msg=f"{name} {field}")
    assert np.abs(ours["w"] - state["w"]).max() > 1e-3  # the solve changed w


def test_rayleigh_damping_of_w_equals_fv3s() -> None:
    """SIM1 with FV3's fast Rayleigh damping of ``w`` (``fast_tau_w_sec``, ``rf_cutoff``): the
    factors equal the transliteration's set-up and the damped solve equals it bitwise."""
    state = column_state(np.random.default_rng(3))
    pfull = state["pm"][0, 0]
    rff = rayleigh_w_factors(DT, 600.0, 3.0e4, PTOP, pfull)
    ref_rff, k_rf = nh_utils.rayleigh_w_factors(DT, 600.0, 3.0e4, PTOP, pfull)
    np.testing.assert_array_equal(rff, ref_rff[1:NZ + 1])
    assert 0 < k_rf < NZ and np.all(rff[:k_rf] < 1.0) and np.all(rff[k_rf:] == 1.0)
    ours = run_ours(state, 1.0, rff=rff)
    ref = run_transliteration(state, 1.0, nh_utils.Damping(ref_rff, k_rf))
    for field in ("w", "delz", "pe"):
        np.testing.assert_array_equal(ours[field], ref[field], err_msg=field)


def _tridiagonal(sub: np.ndarray, diag: np.ndarray, sup: np.ndarray) -> np.ndarray:
    return np.diag(diag) + np.diag(sub[1:], -1) + np.diag(sup[:-1], 1)


def test_sim1_solves_its_tridiagonal_systems() -> None:
    """SIM1 against dense solves of its two systems, assembled from their equations: the cubic
    edge profile ``pp[k] + bb[k] pp[k+1] + g[k] pp[k+2] = 3 (p[k] + g[k] p[k+1])`` (``g`` the
    ratio of layer masses, ``bb = 2 (1 + g)``, ``pp`` 0 at the top, ``bb = 2`` and ``3 p`` in
    the bottom layer), then the implicit ``w`` system ``a[k] w[k-1] + (dm[k] - a[k] - a[k+1]) w[k]
    + a[k+1] w[k+1] = dm[k] w0[k] + dt (pp[k+1] - pp[k])`` with ``a`` FV3's ``aa`` on the interior
    interfaces and the surface's ``w`` entering the bottom row. Relative 1e-10."""
    state = column_state(np.random.default_rng(11))
    ours = run_ours(state, 1.0)
    gama = 1.0 / (1.0 - AKAP)
    for i, j in ((0, 0), (2, 3), (4, 1)):
        dm, dz, pt, pm, pem, w0 = (state[n][i, j] for n in ("dm", "delz", "pt", "pm", "pem", "w"))
        p = (-dm / dz * RDGAS * pt) ** gama - pm
        g = dm[:-1] / dm[1:]
        bb = np.append(2.0 * (1.0 + g), 2.0)
        dd = np.append(3.0 * (p[:-1] + g * p[1:]), 3.0 * p[-1])
        pp = np.append(0.0, np.linalg.solve(_tridiagonal(np.ones(NZ), bb, np.append(g, 0.0)), dd))
        t1g = 2.0 * DT * DT
        a = np.zeros(NZ + 1)
        a[1:-1] = t1g * gama / (dz[:-1] + dz[1:]) * pem[1:-1]
        bottom = t1g * gama / dz[-1] * pem[-1]
        diag = dm - a[:-1] - a[1:]
        diag[-1] -= bottom
        rhs = dm * w0 + DT * np.diff(pp)
        rhs[-1] -= bottom * state["ws"][i, j]
        w = np.linalg.solve(_tridiagonal(a[:-1], diag, a[1:]), rhs)
        np.testing.assert_allclose(ours["w"][i, j], w, rtol=1e-10, atol=1e-12)
        pe = np.append(0.0, np.cumsum(dm * (w - w0) / DT))
        np.testing.assert_allclose(ours["pe"][i, j], pe, rtol=1e-9, atol=1e-6)


@pytest.mark.parametrize("name", SOLVERS)
def test_a_column_at_rest_stays_at_rest(name: str) -> None:
    """Analytic: no motion and thicknesses from the gas law at the pressure each solver takes
    for a layer's mean in hydrostatic balance (SIM1/SIM: FV3's ``pm``, ``delp / dlog(pe)``;
    SIM3/SIM3p0, whose cubic profile of the full pressure is exact for pressure linear in mass:
    the mean of the interface pressures): the pressure perturbation vanishes and the column stays
    at rest, ``w`` < 1e-9 m/s and ``delz`` to relative 1e-12."""
    full = SolverChoice.from_a_imp(SOLVERS[name]).full_pressure
    state = column_state(np.random.default_rng(5), at_rest=True, arithmetic_mean=full)
    ours = run_ours(state, SOLVERS[name])
    assert np.abs(ours["w"]).max() < 1e-9
    np.testing.assert_allclose(ours["delz"], state["delz"], rtol=1e-12)


def test_a_imp_selects_fv3s_solver_and_refuses_rim_2d() -> None:
    """FV3's dispatch on ``a_imp`` (``Riem_Solver3``, ``Riem_Solver_c``); RIM_2D is refused by name."""
    assert [SolverChoice.from_a_imp(a).name for a in (1.0, 0.9, -0.6, -1.0)] == ["SIM1", "SIM", "SIM3", "SIM3p0"]
    assert SolverChoice.from_a_imp(0.9, cgrid=True).name == "SIM1"
    assert SolverChoice.from_a_imp(-0.3, cgrid=True).name == "SIM3p0"
    with pytest.raises(FV3ConfigError, match="RIM_2D"):
        SolverChoice.from_a_imp(0.4)

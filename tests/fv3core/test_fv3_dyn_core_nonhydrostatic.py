"""FV3's non-hydrostatic 3-D ``dyn_core`` in GTScript (fv3core.dycore.dyn_core_nonhydrostatic
.NonHydrostaticDynCore) against the NumPy transliteration of FV3's loops
(tests.fv3core.transliteration.dyn_core_nonhydrostatic.NonHydrostaticCore: c_sw with w,
update_dz_c, Riem_Solver_c, p_grad_c on the full pressure, d_sw with the w terms and the sponge's
damping of w, update_dz_d, Riem_Solver3, pe_halo, pk3_halo/pln_halo, nh_p_grad/split_p_grad and
FV3's halo updates), fed the same state, bit for bit over the points FV3 computes.

State: the hydrostatic dyn_core test's (C12, 6 ranks, 6 layers; tests/fv3core/test_fv3_dyn_core.py)
with FV3's non-hydrostatic start, ``delz = -rdgas / grav T dlog(p)`` of the hydrostatic column,
and a smooth vertical velocity of up to 0.5 m/s so that w's transport and solve act from the
first step; two dyn_core calls (the second without ``init_step``).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from fv3core.dycore.dyn_core_nonhydrostatic import NonHydrostaticDynCore
from fv3core.dycore.options import LayerDamping, NonHydrostaticOptions, layer_damping
from fv3core.errors import FV3ConfigError
from fv3core.grid.decomposition import decompose
from fv3core.grid.metric_terms import CubedSphere
from stencils.factory import StencilFactory
from tests.fv3core.test_fv3_dyn_core import (
    AKAP,
    CP_AIR,
    MDT,
    NPZ,
    OMEGA,
    OPTIONS,
    RADIUS,
    RDGAS,
    RESOLUTION,
    _levels,
    _states,
)
from tests.fv3core.transliteration.dyn_core_nonhydrostatic import (
    NonHydrostaticCore,
    NonHydrostaticTileFields,
)
from tests.fv3core.transliteration.setup import grid_from_metric

GRAV = 9.80665


def _nonhydrostatic_states(cube: CubedSphere, ranks) -> dict[int, dict[str, np.ndarray]]:
    ak, bk, _ = _levels(NPZ)
    out = _states(cube, ranks)
    for r in ranks:
        s, m = out[r.rank], cube.metric_terms(r.spec)
        lon, lat = m.agrid[..., 0], m.agrid[..., 1]
        pe = np.concatenate([np.full(s["delp"].shape[:2] + (1,), ak[0]),
                             ak[0] + np.cumsum(s["delp"], axis=2)], axis=2)  # fmt: skip
        pk = pe**AKAP
        pkz = np.diff(pk, axis=2) / (AKAP * np.diff(np.log(pe), axis=2))
        temperature = s["pt"] * pkz
        s["delz"] = -RDGAS / GRAV * temperature * np.diff(np.log(pe), axis=2)
        profile = np.sin(np.linspace(0.2, 2.8, NPZ))[None, None, :]
        s["w"] = 0.5 * (np.cos(lat) * np.sin(3.0 * lon))[:, :, None] * profile
    return out


def test_sponge_damps_w_only_non_hydrostatic() -> None:
    """FV3's dyn_core k-loop: the sponge layers (1, and 2 when d2_bg_k2 > 0.01) damp w with
    del2 and d2_divg (nord_w = 0, damp_w = d2_divg); below them w is undamped without
    do_vort_damp; the hydrostatic grouping is unchanged."""
    assert layer_damping(OPTIONS, 6, nonhydrostatic=True) == [
        LayerDamping(0, 1, 0, 0.15, 0.15), LayerDamping(1, 2, 0, 0.02, 0.02), LayerDamping(2, 6, 1, 0.0, 0.0)]
    assert layer_damping(OPTIONS, 6) == [LayerDamping(0, 1, 0, 0.15), LayerDamping(1, 2, 0, 0.02),
                                         LayerDamping(2, 6, 1, 0.0)]  # fmt: skip


def test_options_refuse_what_is_not_ported() -> None:
    """RIM_2D (0 <= a_imp <= 0.5 on the D grid), d_con heating: refused by name."""
    with pytest.raises(FV3ConfigError, match="RIM_2D"):
        NonHydrostaticOptions(a_imp=0.3)
    with pytest.raises(FV3ConfigError, match="d_con"):
        NonHydrostaticOptions(d_con=1.0)


def _compare(options, nonhydrostatic: NonHydrostaticOptions) -> None:
    cube = CubedSphere.build(RESOLUTION, radius=RADIUS, omega=OMEGA)
    decomposition = decompose(RESOLUTION, 1)
    ranks = decomposition.ranks
    states = _nonhydrostatic_states(cube, ranks)
    metrics = {r.rank: cube.metric_terms(r.spec) for r in ranks}
    ak, bk, _ = _levels(NPZ)
    thermo = {"akap": AKAP, "rdgas": RDGAS, "grav": GRAV}
    ours = NonHydrostaticDynCore(StencilFactory("numpy"), metrics, states, options, nonhydrostatic, MDT,
                                 decomposition.communicator, ak=ak, bk=bk, **thermo)  # fmt: skip
    grids = {r: grid_from_metric(m) for r, m in metrics.items()}
    fields = {}
    for r, g in grids.items():
        f = fields[r] = NonHydrostaticTileFields.allocate(g, NPZ)
        for name in ("delp", "pt", "u", "v", "w", "delz"):
            getattr(f, name).data[...] = states[r][name]
        f.phis.data[...] = states[r]["phis"]
    reference = NonHydrostaticCore(grids, fields, options, nonhydrostatic, MDT, ak=ak, bk=bk, cp_air=CP_AIR,
                                   communicator=decompose(RESOLUTION, 1).communicator, **thermo)  # fmt: skip
    for init_step in (True, False):
        ours.step(init_step)
        reference.step(init_step)
    h, n = 3, RESOLUTION
    ranges = {"delp": (0, 0), "pt": (0, 0), "u": (0, 1), "v": (1, 0), "w": (0, 0), "delz": (0, 0),
              "pe": (-1, -1), "peln": (0, 0), "pk": (0, 0), "mfx": (1, 0), "mfy": (0, 1), "zh": (0, 0),
              "pk3": (-2, -2)}  # fmt: skip
    for r, d in ours.ranks.items():
        got = d.arrays()
        got.update({name: np.asarray(getattr(d, name)) for name in ("mfx", "mfy", "cx", "cy", "zh", "pk3")})
        for name, (di, dj) in ranges.items():
            if di < 0:  # pe: is-1..ie+1; pk3: is-2..ie+2
                where = np.s_[h + di : h + n - di, h + dj : h + n - dj]
            else:
                where = np.s_[h : h + n + di, h : h + n + dj]
            want = getattr(fields[r], name).data
            np.testing.assert_array_equal(got[name][where], want[where], err_msg=f"rank {r} {name}")
        np.testing.assert_array_equal(got["cx"][h : h + n + 1, :], fields[r].cx.data[h : h + n + 1, :])
        np.testing.assert_array_equal(got["cy"][:, h : h + n + 1], fields[r].cy.data[:, h : h + n + 1])
        inner = np.s_[h : h + n, h : h + n]
        assert np.abs(got["w"] - states[r]["w"])[inner].max() > 1e-3  # w moved
        assert np.abs(got["delz"] - states[r]["delz"])[inner].max() > 1e-3


def test_dyn_core_equals_transliteration() -> None:
    """FV3's default solver (a_imp = 0.75: SIM on the D grid, SIM1 on the C grid), p_fac 0.05:
    two dyn_core calls on C12 with 6 layers, delp, pt, u, v, w, delz, zh, pe, peln, pk, pk3 and
    the flux capacitor bitwise the transliteration's."""
    _compare(OPTIONS, NonHydrostaticOptions())


@pytest.mark.slow
@pytest.mark.parametrize("nh", [
    NonHydrostaticOptions(a_imp=1.0, use_logp=True, fast_tau_w_sec=0.2, rf_cutoff=8.0e4),
    NonHydrostaticOptions(a_imp=-1.0, d2bg_zq=0.02),
], ids=["sim1-logp-rayleigh-split", "sim3p0-diffusion"])
def test_dyn_core_solvers_equal_transliteration(nh: NonHydrostaticOptions) -> None:
    """The other solvers and options (SIM1 with use_logp, the fast Rayleigh damping of w and
    split_p_grad's beta = 0.3; SIM3p0 with the implicit diffusion of w), bitwise as above."""
    _compare(replace(OPTIONS, beta=0.3) if nh.use_logp else OPTIONS, nh)

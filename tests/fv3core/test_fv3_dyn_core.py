"""FV3's hydrostatic 3-D ``dyn_core`` in GTScript (fv3core.dycore.dyn_core.HydrostaticDynCore)
against the NumPy transliteration of FV3's loops (tests.fv3core.transliteration.dyn_core_hydrostatic
.HydrostaticCore: c_sw, geopk, p_grad_c, d_sw per layer with the sponge's damping, one_grad_p,
FV3's halo updates), fed the same state, bit for bit on every prognostic field and on FV3's
pe, peln, pk, pkz and flux capacitor over the points FV3 computes.

State (C12, 6 ranks; 6 layers of FV3's hybrid levels at ps = 1000 hPa plus a smooth surface
pressure wave): FV3's TC2 D-grid winds scaled per layer, a temperature decreasing upward with
a smooth horizontal wave, pt = T / pkz as ``fv_dynamics`` hands it to ``dyn_core``, and a
smooth surface geopotential; two ``dyn_core`` calls (the second without ``init_step``), with
and without ``beta``.  The sponge layers (``n_sponge = 1``: del2 damping in the top two
layers with ``d2_bg_k1``, ``d2_bg_k2``) are separate GTScript builds on views of their layers.
"""

from __future__ import annotations

import numpy as np
import pytest

from fv3core.dycore.dyn_core import HydrostaticDynCore
from fv3core.dycore.options import DynCoreOptions, LayerDamping, layer_damping
from fv3core.grid.decomposition import decompose
from fv3core.grid.metric_terms import CubedSphere
from fv3core.testcases.shallow_water import init_case
from fv3core.vertical.eta import set_eta
from stencils.factory import StencilFactory
from tests.fv3core.transliteration.dyn_core_hydrostatic import (
    HydrostaticCore,
    HydrostaticTileFields,
)
from tests.fv3core.transliteration.setup import grid_from_metric

RADIUS, OMEGA = 6.3712e6, 7.2921e-5
RDGAS, CP_AIR = 287.05, 1004.6
AKAP = RDGAS / CP_AIR
NPZ, RESOLUTION = 6, 12
MDT = 900.0  # a remapping step: dt_atmos 1800 s, k_split 2


def _levels(npz: int) -> tuple[np.ndarray, np.ndarray, float]:
    """``npz`` layers of FV3's 26-level table's lower part (ak, bk at the interfaces), its top
    interface made a pure pressure level (``bk = 0``, ``ak`` its pressure at 1000 hPa), as
    FV3's model top is."""
    levels = set_eta(26)
    ak = np.array(levels.ak[-(npz + 1):], dtype=np.float64)
    bk = np.array(levels.bk[-(npz + 1):], dtype=np.float64)
    ak[0], bk[0] = ak[0] + bk[0] * 1.0e5, 0.0
    return ak, bk, float(ak[0])


def _states(cube: CubedSphere, ranks) -> dict[int, dict[str, np.ndarray]]:
    ak, bk, ptop = _levels(NPZ)
    tc2 = init_case(cube, 2)
    out = {}
    for r in ranks:
        s, m = tc2.for_rank(r.spec), cube.metric_terms(r.spec)
        lon, lat = m.agrid[..., 0], m.agrid[..., 1]
        ps = 1.0e5 + 800.0 * np.cos(lat) * np.sin(2.0 * lon)
        pe = ak[None, None, :] + bk[None, None, :] * ps[:, :, None]
        delp = np.diff(pe, axis=2)
        pk = pe**AKAP
        pkz = np.diff(pk, axis=2) / (AKAP * np.diff(np.log(pe), axis=2))
        height = np.linspace(1.0, 0.0, NPZ)[None, None, :]
        temperature = 290.0 - 60.0 * height + 5.0 * (np.sin(lat) * np.cos(lon))[:, :, None]
        scale = (0.5 + height)  # stronger winds aloft
        out[r.rank] = {"delp": delp, "pt": temperature / pkz,
                       "u": s.u[:, :, None] * scale, "v": s.v[:, :, None] * scale,
                       "phis": 200.0 * (1.0 + np.cos(lat) * np.cos(lon))}  # fmt: skip
    return out


OPTIONS = DynCoreOptions(n_split=2, nord=1, dddmp=0.1, d2_bg=0.0, d4_bg=0.12, hord_mt=10,
                         hord_vt=10, hord_tm=10, hord_dp=10, n_sponge=1, d2_bg_k1=0.15,
                         d2_bg_k2=0.02, is_ideal_case=True)  # fmt: skip


def test_layer_damping_is_fv3s_sponge() -> None:
    """FV3's dyn_core k-loop: del2 (nord_k = 0) with max(d2_bg, d2_bg_k1) on top
    (is_ideal_case), max(d2_bg, d2_bg_k2) in layer 2 (d2_bg_k2 > 0.01), nord below; the third
    layer only when d2_bg_k2 > 0.05; n_sponge = 0 resets d2_bg_k1 = 4 to 0.20 (fv_control);
    one layer: nord and d2_bg."""
    assert layer_damping(OPTIONS, 6) == [LayerDamping(0, 1, 0, 0.15), LayerDamping(1, 2, 0, 0.02),
                                         LayerDamping(2, 6, 1, 0.0)]  # fmt: skip
    strong = DynCoreOptions(n_split=1, nord=2, d2_bg_k1=0.2, d2_bg_k2=0.1)
    assert layer_damping(strong, 4) == [LayerDamping(0, 1, 0, 0.2), LayerDamping(1, 2, 0, 0.1),
                                        LayerDamping(2, 3, 0, 0.1 * 0.2), LayerDamping(3, 4, 2, 0.0)]  # fmt: skip
    reset = DynCoreOptions(n_split=1, nord=1, n_sponge=0)
    assert layer_damping(reset, 3)[0] == LayerDamping(0, 1, 0, 0.20)
    assert layer_damping(DynCoreOptions(n_split=1, nord=3, d2_bg=0.3), 1) == [
        LayerDamping(0, 1, 3, 0.3)]
    assert layer_damping(DynCoreOptions(n_split=1, nord=1, n_sponge=-1, d2_bg=0.3), 2) == [
        LayerDamping(0, 2, 1, 0.3)]


@pytest.mark.slow  # ~30 s each; the whole step's test (test_fv3_hydrostatic.py) covers dyn_core
@pytest.mark.parametrize("beta", [0.0, 0.3], ids=["beta0", "beta0.3"])
def test_dyn_core_equals_transliteration(beta: float) -> None:
    """Two dyn_core calls on C12 with 6 layers: delp, pt, u, v, pe, peln, pk, pkz, mfx, mfy,
    cx, cy bitwise the transliteration's over FV3's ranges."""
    from dataclasses import replace

    options = replace(OPTIONS, beta=beta)
    cube = CubedSphere.build(RESOLUTION, radius=RADIUS, omega=OMEGA)
    decomposition = decompose(RESOLUTION, 1)
    ranks = decomposition.ranks
    states = _states(cube, ranks)
    metrics = {r.rank: cube.metric_terms(r.spec) for r in ranks}
    ak, bk, ptop = _levels(NPZ)
    thermo = {"akap": AKAP, "cp_air": CP_AIR, "ptop": ptop}
    ours = HydrostaticDynCore(StencilFactory("numpy"), metrics, states, options, MDT,
                                 decomposition.communicator, **thermo)  # fmt: skip
    grids = {r: grid_from_metric(m) for r, m in metrics.items()}
    fields = {}
    for r, g in grids.items():
        f = fields[r] = HydrostaticTileFields.allocate(g, NPZ)
        for name in ("delp", "pt", "u", "v"):
            getattr(f, name).data[...] = states[r][name]
        f.phis.data[...] = states[r]["phis"]
    reference = HydrostaticCore(grids, fields, options, MDT, communicator=decompose(
        RESOLUTION, 1).communicator, **thermo)  # fmt: skip
    for init_step in (True, False):
        ours.step(init_step)
        reference.step(init_step)
    h, n = 3, RESOLUTION
    ranges = {"delp": (0, 0), "pt": (0, 0), "u": (0, 1), "v": (1, 0), "pe": (-1, -1),
              "peln": (0, 0), "pk": (0, 0), "pkz": (0, 0), "mfx": (1, 0), "mfy": (0, 1)}  # fmt: skip
    for r, d in ours.ranks.items():
        got = d.arrays()
        got.update({name: np.asarray(getattr(d, name)) for name in ("mfx", "mfy", "cx", "cy")})
        for name, (di, dj) in ranges.items():
            if di < 0:  # pe: is-1..ie+1, js-1..je+1
                where = np.s_[h - 1 : h + n + 1, h - 1 : h + n + 1]
            else:
                where = np.s_[h : h + n + di, h : h + n + dj]
            want = getattr(fields[r], name).data
            np.testing.assert_array_equal(got[name][where], want[where], err_msg=f"rank {r} {name}")
        np.testing.assert_array_equal(got["cx"][h : h + n + 1, :], fields[r].cx.data[h : h + n + 1, :])
        np.testing.assert_array_equal(got["cy"][:, h : h + n + 1], fields[r].cy.data[:, h : h + n + 1])
        # the state moved: pt and the winds changed by more than round-off
        assert np.abs(got["pt"] - states[r]["pt"])[h : h + n, h : h + n].max() > 1e-6

"""fv3core.stencils.update_dz_d.UpdateDzD: FV3's ``update_dz_d`` (with ``edge_profile``,
``fv_tp_2d`` and ``del6_vt_flux``) against its NumPy transliteration of ``nh_utils.F90``
(:func:`tests.fv3core.transliteration.nh_utils.update_dz_d`, on the transliterated ``fv_tp_2d``
and ``del6_vt_flux``), bit for bit on the numpy backend, on the six tiles of C12 with damped
(del-2, del-6) and undamped interfaces; ``edge_profile`` alone (analytic): it reproduces a
profile linear in the reference pressure exactly at the interior interfaces (relative 1e-12)."""

from __future__ import annotations

import numpy as np
import pytest

from fv3core.grid.metric_terms import CubedSphere
from fv3core.grid.storages import GridStorages
from fv3core.grid.subdomain import SubdomainSpec
from fv3core.stencils.update_dz_d import UpdateDzD, interface_damping
from stencils.factory import StencilFactory
from stencils.storage import from_numpy
from tests.fv3core.transliteration import nh_utils
from tests.fv3core.transliteration.setup import grid_from_metric

N, H, NZ, HORD_TM, RDT = 12, 3, 5, 8, 1.0 / 150.0
DP0 = np.array([600.0, 2500.0, 9000.0, 25000.0, 40000.0])
NORD_V = [0, 0, 2, 2, 2]
DAMP_VT = [0.12, 0.0, 0.05, 0.05, 0.05]


@pytest.fixture(scope="module")
def cube() -> CubedSphere:
    return CubedSphere.build(N, radius=6.3712e6, omega=7.2921e-5)


def inputs(spec: SubdomainSpec, area: float, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Heights 0..~14 km with random variations, ``zs`` up to 300 m, Courant numbers up to 0.3
    of both signs and swept areas up to 0.3 times the mean cell area."""
    ni, nj = spec.nx + 2 * H, spec.ny + 2 * H
    thick = rng.uniform(0.8, 1.2, (ni, nj, NZ)) * np.array([4000.0, 3500.0, 3000.0, 2500.0, 1500.0])
    zs = rng.uniform(0.0, 300.0, (ni, nj))
    zh = zs[..., None] + np.concatenate([np.cumsum(thick[..., ::-1], -1)[..., ::-1], np.zeros((ni, nj, 1))], -1)
    crx = rng.uniform(-0.3, 0.3, (ni + 1, nj, NZ))
    cry = rng.uniform(-0.3, 0.3, (ni, nj + 1, NZ))
    return {"zh": zh, "zs": zs, "crx": crx, "cry": cry, "xfx": crx * area * rng.uniform(0.5, 1.0, crx.shape),
            "yfx": cry * area * rng.uniform(0.5, 1.0, cry.shape)}  # fmt: skip


def ours(cube, spec, s):
    grid = GridStorages(cube.metric_terms(spec), "numpy")
    routine = UpdateDzD(StencilFactory("numpy"), grid, spec, NZ, dp0=DP0, hord_tm=HORD_TM, nord_v=NORD_V,
                        damp_vt=DAMP_VT, rdt=RDT)  # fmt: skip
    f = {k: from_numpy(v.copy(), "numpy", (H, H, 0) if v.ndim == 3 else (H, H)) for k, v in s.items()}
    f["ws"] = from_numpy(np.zeros_like(s["zs"]), "numpy", (H, H))
    for name in ("crx", "cry", "xfx", "yfx"):  # the layer storages have the interface level too
        a = s[name]
        f[name] = from_numpy(np.concatenate([a, np.zeros(a.shape[:2] + (1,))], -1), "numpy", (H, H, 0))
    for launch in routine.bind(f["zh"], f["crx"], f["cry"], f["xfx"], f["yfx"], f["zs"], f["ws"]):
        launch()
    return np.asarray(f["zh"]), np.asarray(f["ws"])


def test_interface_damping_runs() -> None:
    """FV3's per-layer damping on the interfaces: the bottom takes the lowest layer's, runs of
    equal settings are one, undamped ones (``damp_vt <= 1e-5``) have no order."""
    assert interface_damping(NORD_V, DAMP_VT) == [(0, 1, 0, 0.12), (1, 2, 0, 0.0), (2, 6, 2, 0.05)]
    assert interface_damping([2, 1], [1e-6, 0.0]) == [(0, 3, 0, 0.0)]


def test_update_dz_d_equals_fv3s(cube) -> None:
    """Bitwise on each tile: ``zh`` (every point, the corner halos ``fv_tp_2d`` fills included)
    and ``ws`` on the compute columns."""
    for tile in range(6):
        spec = SubdomainSpec(N, tile, 0, N, 0, N)
        g = grid_from_metric(cube.metric_terms(spec))
        s = inputs(spec, float(np.mean(g.area.data)), np.random.default_rng(tile))
        zh, ws = ours(cube, spec, s)
        ref_zh, ref_ws = s["zh"].copy(), np.zeros_like(s["zs"])
        nh_utils.update_dz_d(NORD_V, DAMP_VT, HORD_TM, NZ, g, DP0, s["zs"], ref_zh, s["crx"], s["cry"], s["xfx"],
                             s["yfx"], ref_ws, RDT)  # fmt: skip
        np.testing.assert_array_equal(zh, ref_zh, err_msg=f"zh tile {tile}")
        inner = (slice(H, H + N), slice(H, H + N))
        np.testing.assert_array_equal(ws[inner], ref_ws[inner], err_msg=f"ws tile {tile}")
        assert np.abs(zh - s["zh"])[inner].max() > 1.0


def test_edge_profile_is_exact_for_a_linear_profile() -> None:
    """A layer field linear in the reference pressure: its layer means are the values at the
    layer midpoints, and the cubic profile gives the linear values at the interior interfaces."""
    pe = np.concatenate([[0.0], np.cumsum(DP0)])
    q = 3.0 + 2e-4 * 0.5 * (pe[:-1] + pe[1:])
    qe, _ = nh_utils.edge_profile(q[None, :], q[None, :], DP0)
    np.testing.assert_allclose(qe[0, 1:-1], 3.0 + 2e-4 * pe[1:-1], rtol=1e-12)

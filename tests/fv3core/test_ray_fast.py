"""fv3core.stencils.ray_fast.FastRayleighFriction: FV3's ``Ray_fast`` against its transliteration
of ``dyn_core.F90`` (:func:`tests.fv3core.transliteration.dyn_core.ray_fast`), bit for bit on the
numpy backend, hydrostatic and not; and, analytic: each column's momentum ``sum_k dp_k u_k`` is
conserved (relative 1e-13), the layers below ``rf_cutoff`` are untouched, and the top layers' wind
is damped."""

from __future__ import annotations

import numpy as np
import pytest

from fv3core.errors import FV3ConfigError
from fv3core.stencils.ray_fast import FastRayleighFriction
from fv3core.vertical.eta import set_eta
from stencils.dims import GridIndexing
from stencils.factory import StencilFactory
from stencils.storage import from_numpy
from tests.fv3core.transliteration.dyn_core import ray_fast
from tests.fv3core.transliteration.grid import Bounds

NX, NY, NZ, H = 5, 4, 26, 3
DT, TAU, RF_CUTOFF = 225.0, 3.0, 750.0e2


def levels():
    eta = set_eta(NZ)
    ak, bk = np.asarray(eta.ak), np.asarray(eta.bk)
    pe = ak + bk * 1.0e5
    dp = np.diff(pe)
    pfull = dp / np.log(pe[1:] / pe[:-1])
    return pfull, dp, int(eta.ks), float(eta.ptop)


def winds(rng):
    return {"u": rng.uniform(-40.0, 40.0, (NX + 2 * H, NY + 2 * H + 1, NZ)),
            "v": rng.uniform(-40.0, 40.0, (NX + 2 * H + 1, NY + 2 * H, NZ)),
            "w": rng.uniform(-2.0, 2.0, (NX + 2 * H, NY + 2 * H, NZ))}  # fmt: skip


def ours(s, hydrostatic: bool):
    pfull, dp, ks, ptop = levels()
    factory = StencilFactory("numpy").on_grid(GridIndexing(NX, NY, NZ, H))
    f = {k: from_numpy(v.copy(), "numpy", (H, H, 0)) for k, v in s.items()}
    routine = FastRayleighFriction(factory, dt=DT, tau=TAU, rf_cutoff=RF_CUTOFF, ptop=ptop, pfull=pfull, dp=dp,
                                   ks=ks, hydrostatic=hydrostatic)  # fmt: skip
    for launch in routine.bind(f["u"], f["v"], f["w"]):
        launch()
    return routine, {k: np.asarray(v) for k, v in f.items()}


@pytest.mark.parametrize("hydrostatic", [False, True])
def test_ray_fast_equals_fv3s(hydrostatic: bool) -> None:
    """Bitwise: ``u``, ``v`` and ``w`` (damped only non-hydrostatic), every point."""
    s = winds(np.random.default_rng(int(hydrostatic)))
    _, got = ours(s, hydrostatic)
    pfull, dp, ks, ptop = levels()
    ref = {k: v.copy() for k, v in s.items()}
    ray_fast(DT, NZ, pfull, TAU, ref["u"], ref["v"], ref["w"], ks, dp, ptop, hydrostatic, RF_CUTOFF,
             Bounds(1, NX, 1, NY, H))  # fmt: skip
    for name in ("u", "v", "w"):
        np.testing.assert_array_equal(got[name], ref[name], err_msg=name)
    assert hydrostatic == np.array_equal(got["w"], s["w"])


def test_column_momentum_is_conserved() -> None:
    """Analytic: the damping's momentum goes back to the column's top layers."""
    s = winds(np.random.default_rng(5))
    routine, got = ours(s, False)
    _, dp, _, _ = levels()
    assert 0 < routine.k_rf <= routine.kmax < NZ
    inner = (slice(H, H + NX), slice(H, H + NY + 1))
    before, after = (np.einsum("ijk,k->ij", a[inner], dp) for a in (s["u"], got["u"]))
    np.testing.assert_allclose(after, before, rtol=1e-13, atol=1e-9 * np.abs(before).max())
    np.testing.assert_array_equal(got["u"][..., routine.kmax:], s["u"][..., routine.kmax:])
    top = got["u"][inner][..., 0] - got["u"][inner][..., 0].mean()
    assert np.abs(top).mean() < np.abs(s["u"][inner][..., 0] - s["u"][inner][..., 0].mean()).mean()


def test_bad_settings_are_refused() -> None:
    pfull, dp, ks, ptop = levels()
    factory = StencilFactory("numpy").on_grid(GridIndexing(NX, NY, NZ, H))
    with pytest.raises(FV3ConfigError, match="tau"):
        FastRayleighFriction(factory, dt=DT, tau=0.0, rf_cutoff=RF_CUTOFF, ptop=ptop, pfull=pfull, dp=dp, ks=ks,
                             hydrostatic=False)  # fmt: skip
    with pytest.raises(FV3ConfigError, match="rf_cutoff"):
        FastRayleighFriction(factory, dt=DT, tau=TAU, rf_cutoff=1.0, ptop=ptop, pfull=pfull, dp=dp, ks=ks,
                             hydrostatic=False)  # fmt: skip

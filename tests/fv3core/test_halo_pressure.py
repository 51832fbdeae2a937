"""fv3core.stencils.halo_pressure.HaloPressure: FV3's ``pe_halo``, ``pk3_halo`` and ``pln_halo``
against their transliteration of ``dyn_core.F90``
(:func:`tests.fv3core.transliteration.dyn_core.halo_pressures`), bit for bit on the numpy
backend: the ring's values, and every other point untouched."""

from __future__ import annotations

import numpy as np
import pytest

from fv3core.errors import FV3ConfigError
from fv3core.stencils.halo_pressure import ROUTINES, HaloPressure
from stencils.dims import GridIndexing
from stencils.factory import StencilFactory
from stencils.storage import from_numpy
from tests.fv3core.transliteration.dyn_core import halo_pressures
from tests.fv3core.transliteration.grid import Bounds

NX, NY, NZ, H = 6, 5, 5, 3
PTOP, AKAP = 300.0, 2.0 / 7.0


@pytest.mark.parametrize("routine", sorted(ROUTINES))
def test_halo_pressure_equals_fv3s(routine: str) -> None:
    """The ring FV3 writes (1 cell wide for ``pe``, 2 for ``pk3``), bitwise; the rest unchanged."""
    rng = np.random.default_rng(len(routine))
    delp = rng.uniform(500.0, 2.0e4, (NX + 2 * H, NY + 2 * H, NZ))
    q = rng.uniform(-1.0, 1.0, (NX + 2 * H, NY + 2 * H, NZ + 1))
    factory = StencilFactory("numpy").on_grid(GridIndexing(NX, NY, NZ, H))
    pad = np.zeros(delp.shape[:2] + (1,))
    d, got = from_numpy(np.concatenate([delp, pad], -1), "numpy", (H, H, 0)), from_numpy(q.copy(), "numpy", (H, H, 0))
    HaloPressure(factory, routine, ptop=PTOP, akap=AKAP).bind(d, got)()
    ref = q.copy()
    halo_pressures(routine, Bounds(1, NX, 1, NY, H), NZ, PTOP, AKAP, ref, delp)
    np.testing.assert_array_equal(np.asarray(got), ref)
    ring = 1 if routine == "pe_halo" else 2
    changed = np.any(ref != q, axis=-1)
    assert changed.sum() == (NX + 2 * ring) * (NY + 2 * ring) - NX * NY


def test_unknown_routine_is_refused() -> None:
    factory = StencilFactory("numpy").on_grid(GridIndexing(NX, NY, NZ, H))
    with pytest.raises(FV3ConfigError, match="pk_halo"):
        HaloPressure(factory, "pk_halo", ptop=PTOP)

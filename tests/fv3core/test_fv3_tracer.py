"""FV3's tracer transport: ``fv_tp_2d``'s mass-flux form (``tp_core.F90``, ``mfx=``/``mfy=``)
and ``tracer_2d_1L`` (``fv_tracer2d.F90``).

References, per test (each docstring names its own):

* the NumPy transliteration (``fv3core.transliteration.tp_core.fv_tp_2d`` with ``mfx``/``mfy``,
  ``fv3core.transliteration.tracer_2d.tracer_2d_1L``), bit for bit, for the GTScript classes;
* properties with an analytic expectation.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from fv3core.grid.fv3_storages import FV3GridStorages
from fv3core.stencils.transport import FiniteVolumeTransport
from fv3core.transliteration.farray import FArray, R
from fv3core.transliteration.tp_core import fv_tp_2d
from stencils.dims import GridIndexing
from stencils.factory import StencilFactory
from stencils.storage import from_numpy
from tests.fv3core.test_fv3_tp_core import TransportCase, transport_cases


@pytest.fixture(scope="module")
def factory() -> StencilFactory:
    return StencilFactory("numpy")


@pytest.fixture(scope="module")
def c12() -> list[TransportCase]:
    return transport_cases(12, 1, seed=5)


def _mass_fluxes(case: TransportCase, rng: np.random.Generator) -> tuple[FArray, FArray]:
    """Mass-flux-like fluxes on the compute faces (FV3's ``mfx(is:ie+1, js:je)``, ``mfy(is:ie,
    js:je+1)``): the swept areas times a random pressure thickness, so not proportional to them."""
    b = case.g.bd
    Ii, Jn, In, Jj = R(b.is_, b.ie + 1), R(b.js, b.je), R(b.is_, b.ie), R(b.js, b.je + 1)
    mfx = FArray(case.xfx[Ii, Jn] * rng.uniform(500.0, 1500.0, (Ii.size, Jn.size)), (b.is_, b.js))
    mfy = FArray(case.yfx[In, Jj] * rng.uniform(500.0, 1500.0, (In.size, Jj.size)), (b.is_, b.js))
    return mfx, mfy


@pytest.mark.parametrize("hord", [8, 10, 5])
def test_mass_flux_transport_equals_fv_tp_2d(factory, c12, hord: int) -> None:
    """``FiniteVolumeTransport.bind(..., mass_fluxes=(mfx, mfy))`` equals the transliterated
    ``fv_tp_2d(..., mfx=mfx, mfy=mfy)`` (FV3's pt/tracer form) bit for bit on all six tiles at
    C12 (``fx``, ``fy``, the corner-filled q), for TC2's ``delp`` and a field of both signs; the
    mass fluxes are not proportional to the swept areas, so the average's weight is checked."""
    rng = np.random.default_rng(11)
    for case in c12:
        g, spec = case.g, case.metric.spec
        h, nx, ny = spec.n_halo, spec.nx, spec.ny
        grid = FV3GridStorages(case.metric, factory.backend)
        transport = FiniteVolumeTransport(factory.on_grid(GridIndexing(nx, ny, 1, h)), grid, spec,
                                          hord)  # fmt: skip
        xs, ys = (nx + 2 * h + 1, ny + 2 * h), (nx + 2 * h, ny + 2 * h + 1)
        xi, yj = slice(h, h + nx + 1), slice(h, h + ny + 1)
        xc, yc = slice(h, h + nx), slice(h, h + ny)

        def face(a: FArray, shape: tuple[int, int], at: tuple[slice, slice]) -> Any:
            out = np.zeros(shape)
            out[at] = a.data
            return from_numpy(out[:, :, None], factory.backend)

        crx, xfx = (face(a, xs, (xi, slice(None))) for a in (case.crx, case.xfx))
        cry, yfx = (face(a, ys, (slice(None), yj)) for a in (case.cry, case.yfx))
        mfx_ref, mfy_ref = _mass_fluxes(case, rng)
        mfx, mfy = face(mfx_ref, xs, (xi, yc)), face(mfy_ref, ys, (xc, yj))
        for k, q_np in enumerate(case.fields[1::2]):
            q_ref = FArray(q_np.copy(), (g.bd.isd, g.bd.jsd))
            fx_ref, fy_ref = fv_tp_2d(q_ref, case.crx, case.cry, hord, case.xfx, case.yfx,
                                      case.ra_x, case.ra_y, g, mfx=mfx_ref, mfy=mfy_ref)  # fmt: skip
            q = from_numpy(q_np[:, :, None].copy(), factory.backend)
            fx = from_numpy(np.zeros(xs + (1,)), factory.backend)
            fy = from_numpy(np.zeros(ys + (1,)), factory.backend)
            transport.bind(q, crx, cry, xfx, yfx, fx, fy, mass_fluxes=(mfx, mfy))()
            msg = f"hord {hord}, field {k}, tile {spec.tile}"
            np.testing.assert_array_equal(np.asarray(fx)[xi, yc, 0], fx_ref.data, msg)
            np.testing.assert_array_equal(np.asarray(fy)[xc, yj, 0], fy_ref.data, msg)
            np.testing.assert_array_equal(np.asarray(q)[:, :, 0], q_ref.data, msg)
            # and the form without mass fluxes is not what came out (the weights matter)
            fx_area, _ = fv_tp_2d(FArray(q_np.copy(), (g.bd.isd, g.bd.jsd)), case.crx, case.cry,
                                  hord, case.xfx, case.yfx, case.ra_x, case.ra_y, g)  # fmt: skip
            assert not np.array_equal(fx_area.data, fx_ref.data)

"""WindCornerFlux (FV3's ``xtp_u``/``ytp_v`` in GTScript, written once for both directions)
against references, bit for bit on FV3's output range ``flux(is:ie+1, js:je+1)``:

* ``iord = 8, 10``: the NumPy transliteration (tests.fv3core.transliteration.sw_core
  ``xtp_u``/``ytp_v``);
* ``iord = 5, 6``: :func:`fortran_xtp_u`, FV3's ``iord < 8`` branch of ``xtp_u`` loop by loop
  (``ytp_v`` on transposed views: FV3 writes it as the mirror image of ``xtp_u``), which the
  transliteration's iord 5, 6 equal too.

Inputs: FV3's TC2 D-grid winds with their halos, perturbed so that they take both signs, and
Courant numbers (lengths) of both signs; all six tiles at C12 and C24 on 2x2 ranks per tile.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from fv3core.errors import FV3ConfigError
from fv3core.grid.storages import GridStorages
from fv3core.stencils.xtp_u import C1, C2, C3, P1, P2, WindCornerFlux
from stencils.dims import GridIndexing
from stencils.directions import X, Y
from stencils.factory import StencilFactory
from stencils.storage import from_numpy
from tests.fv3core.transliteration import sw_core
from tests.fv3core.transliteration.dyn_core import SWNamelist
from tests.fv3core.transliteration.farray import FArray
from tests.fv3core.transliteration.setup import TransliteratedRun
from tests.fv3core.transliteration.tp_core import transpose


def fortran_xtp_u(c: FArray, u: FArray, dx: FArray, rdx: FArray, is_: int, ie: int, js: int,
                  je: int, npx: int, npy: int, iord: int) -> FArray:  # fmt: skip
    """FV3 ``xtp_u`` for ``iord`` 5 or 6 (cubed sphere), statement by statement, one row and one
    point at a time: ``flux(is:ie+1, js:je+1)``."""
    is3, ie3 = max(3, is_ - 1), min(npx - 3, ie + 1)
    flux = FArray.full((is_, js), (ie + 1, je + 1))
    for j in range(js, je + 2):
        al, bl, br = {}, {}, {}
        for i in range(is3, ie3 + 2):
            al[i] = P1 * (u[i - 1, j] + u[i, j]) + P2 * (u[i - 2, j] + u[i + 1, j])
        for i in range(is3, ie3 + 1):
            bl[i] = al[i] - u[i, j]
            br[i] = al[i + 1] - u[i, j]
        if is_ == 1:
            xt = C3 * u[1, j] + C2 * u[2, j] + C1 * u[3, j]
            br[1] = xt - u[1, j]
            bl[2] = xt - u[2, j]
            br[2] = al[3] - u[2, j]
            if j == 1 or j == npy:
                bl[0] = br[0] = bl[1] = br[1] = 0.0
            else:
                bl[0] = C1 * u[-2, j] + C2 * u[-1, j] + C3 * u[0, j] - u[0, j]
                xt = 0.5 * (((2.0 * dx[0, j] + dx[-1, j]) * (u[0, j]) - dx[0, j] * u[-1, j])
                            / (dx[0, j] + dx[-1, j])
                            + ((2.0 * dx[1, j] + dx[2, j]) * (u[1, j]) - dx[1, j] * u[2, j])
                            / (dx[1, j] + dx[2, j]))  # fmt: skip
                br[0] = xt - u[0, j]
                bl[1] = xt - u[1, j]
        if ie + 1 == npx:
            n = npx
            bl[n - 2] = al[n - 2] - u[n - 2, j]
            xt = C1 * u[n - 3, j] + C2 * u[n - 2, j] + C3 * u[n - 1, j]
            br[n - 2] = xt - u[n - 2, j]
            bl[n - 1] = xt - u[n - 1, j]
            if j == 1 or j == npy:
                bl[n - 1] = br[n - 1] = bl[n] = br[n] = 0.0
            else:
                xt = 0.5 * (((2.0 * dx[n - 1, j] + dx[n - 2, j]) * u[n - 1, j]
                             - dx[n - 1, j] * u[n - 2, j]) / (dx[n - 1, j] + dx[n - 2, j])
                            + ((2.0 * dx[n, j] + dx[n + 1, j]) * u[n, j] - dx[n, j] * u[n + 1, j])
                            / (dx[n, j] + dx[n + 1, j]))  # fmt: skip
                br[n - 1] = xt - u[n - 1, j]
                bl[n] = xt - u[n, j]
                br[n] = C3 * u[n, j] + C2 * u[n + 1, j] + C1 * u[n + 2, j] - u[n, j]
        b0, smt5 = {}, {}
        for i in range(is_ - 1, ie + 2):
            b0[i] = bl[i] + br[i]
        if iord == 5:
            for i in range(is_ - 1, ie + 2):
                smt5[i] = bl[i] * br[i] < 0.0
        else:
            for i in range(is_ - 1, ie + 2):
                smt5[i] = 3.0 * abs(b0[i]) < abs(bl[i] - br[i])
            if is_ == 1:
                smt5[0] = bl[0] * br[0] < 0.0
                smt5[1] = bl[1] * br[1] < 0.0
            if ie + 1 == npx:
                smt5[npx - 1] = bl[npx - 1] * br[npx - 1] < 0.0
                smt5[npx] = bl[npx] * br[npx] < 0.0
        for i in range(is_, ie + 2):
            if c[i, j] > 0.0:
                cfl = c[i, j] * rdx[i - 1, j]
                fx0 = (1.0 - cfl) * (br[i - 1] - cfl * b0[i - 1])
                f = u[i - 1, j]
            else:
                cfl = c[i, j] * rdx[i, j]
                fx0 = (1.0 + cfl) * (bl[i] + cfl * b0[i])
                f = u[i, j]
            if smt5[i - 1] or smt5[i]:
                f = f + fx0
            flux[i, j] = f
    return flux


def fortran_reference(direction, c: FArray, wind: FArray, g: Any, iord: int) -> FArray:
    """FV3's ``xtp_u`` (x) or ``ytp_v`` (y, on transposed views) of ``iord`` 5, 6."""
    b = g.bd
    if direction is X:
        return fortran_xtp_u(c, wind, g.dx, g.rdx, b.is_, b.ie, b.js, b.je, g.npx, g.npy, iord)
    flux = fortran_xtp_u(transpose(c), transpose(wind), transpose(g.dy), transpose(g.rdy), b.js,
                         b.je, b.is_, b.ie, g.npy, g.npx, iord)  # fmt: skip
    return transpose(flux)


def transliteration_reference(direction, c: FArray, wind: FArray, g: Any, iord: int) -> FArray:
    if direction is X:
        return sw_core.xtp_u(c, wind, iord, g)
    return sw_core.ytp_v(c, wind, iord, g)


def winds_and_courant(resolution: int, layout: int, seed: int) -> list[tuple[Any, Any, dict]]:
    """Per rank: the transliteration grid, the metric terms and perturbed u, v (with FV3's
    D-grid halo update) and corner Courant numbers ``cx``, ``cy`` (lengths, both signs)."""
    run = TransliteratedRun(resolution, 2, SWNamelist(n_split=2, dt_atmos=1200.0), layout=layout,
                            alpha=0.3)  # fmt: skip
    run.core._dwinds.update()
    rng = np.random.default_rng(seed)
    out = []
    for r, g in run.core.grids.items():
        f = run.core.fields[r]
        b = g.bd
        arrays = {}
        for name in ("u", "v"):
            a = getattr(f, name)
            arrays[name] = FArray(a.data + np.abs(a.data).max() * rng.standard_normal(a.data.shape),
                                  a.lo)  # fmt: skip
        corner = (b.ied - b.isd + 2, b.jed - b.jsd + 2)
        for name, length in (("cx", g.dx), ("cy", g.dy)):
            scale = np.zeros(corner)
            scale[: length.data.shape[0], : length.data.shape[1]] = length.data
            arrays[name] = FArray(rng.uniform(-0.9, 0.9, corner) * np.nan_to_num(scale),
                                  (b.isd, b.jsd))  # fmt: skip
        out.append((g, run.metrics[r], arrays))
    return out


@pytest.fixture(scope="module")
def factory() -> StencilFactory:
    return StencilFactory("numpy")


@pytest.fixture(scope="module")
def c12() -> list[tuple[Any, Any, dict]]:
    return winds_and_courant(12, 1, seed=5)


def _check(factory: StencilFactory, cases: list, iord: int, reference: Any) -> int:
    points = 0
    for g, metric, arrays in cases:
        spec, b = metric.spec, g.bd
        grid = GridStorages(metric, factory.backend)
        gf = factory.on_grid(GridIndexing(spec.nx, spec.ny, 1, spec.n_halo))
        h = spec.n_halo
        for direction, wind, c in ((X, "u", "cx"), (Y, "v", "cy")):
            xtp = WindCornerFlux(gf, grid, spec, direction, iord)
            cs = from_numpy(arrays[c].data[:, :, None].copy(), factory.backend)
            ws = from_numpy(arrays[wind].data[:, :, None].copy(), factory.backend)
            flux = from_numpy(np.zeros(cs.shape), factory.backend)
            xtp.bind(cs, ws, flux)()
            ref = reference(direction, arrays[c], arrays[wind], g, iord)
            got = np.asarray(flux)[h : h + spec.nx + 1, h : h + spec.ny + 1, 0]
            assert ref.lo == (b.is_, b.js) and ref.data.shape == got.shape
            np.testing.assert_array_equal(got, ref.data, err_msg=f"{direction.name} iord {iord}")
            points += got.size
    return points


def test_iord8_equals_transliteration_c12(factory, c12) -> None:
    """iord 8 (TC2's hord_mt) on all six tiles at C12: xtp_u and ytp_v bit for bit."""
    assert _check(factory, c12, 8, transliteration_reference) == 6 * 2 * 13 * 13


# the whole run on 2x2 ranks per tile is checked in the default suite (test_fv3_driver.py);
# this per-routine check needs its own builds for every edge arrangement (~4 min cold)
@pytest.mark.slow
def test_iord8_equals_transliteration_c24_layout_2x2(factory) -> None:
    """iord 8 on C24 with 2x2 ranks per tile (each rank touches two tile edges, in all four
    arrangements): bit for bit."""
    cases = winds_and_courant(24, 2, seed=7)
    assert _check(factory, cases, 8, transliteration_reference) == 24 * 2 * 13 * 13


@pytest.mark.parametrize("iord", [5, 6])
def test_iord5_6_equal_fortran_loops_c12(factory, c12, iord) -> None:
    """iord 5 and 6 (fourth-order profile, smt5/smt6 switches, FV3's edge values, zero
    perturbations on the tile-edge lines) equal FV3's loops bit for bit on all six tiles."""
    _check(factory, c12, iord, fortran_reference)


def test_iord10_equals_transliteration_c12(factory, c12) -> None:
    """iord 10 (FV3's default hord_mt: Lin's modification of Huynh's constraint with xtp_u's own
    2-delta-x test, iord 8's tile-edge values) on all six tiles at C12: bit for bit."""
    assert _check(factory, c12, 10, transliteration_reference) == 6 * 2 * 13 * 13


@pytest.mark.slow
def test_iord10_equals_transliteration_c24_layout_2x2(factory) -> None:
    """iord 10 on C24 with 2x2 ranks per tile: bit for bit."""
    cases = winds_and_courant(24, 2, seed=8)
    assert _check(factory, cases, 10, transliteration_reference) == 24 * 2 * 13 * 13


@pytest.mark.parametrize("iord", [5, 6])
def test_transliteration_iord5_6_equals_fortran_loops_c12(c12, iord) -> None:
    """The vectorised transliteration's iord 5 and 6 equal FV3's loops bit for bit on all six
    tiles (so the transliterated d_sw runs FV3's hord_mt 5 and 6)."""
    for g, _, arrays in c12:
        for direction, wind, c in ((X, "u", "cx"), (Y, "v", "cy")):
            got = transliteration_reference(direction, arrays[c], arrays[wind], g, iord)
            ref = fortran_reference(direction, arrays[c], arrays[wind], g, iord)
            np.testing.assert_array_equal(got.data, ref.data)


def test_edge_lines_have_no_perturbation(factory, c12) -> None:
    """On FV3's tile-edge lines across the direction (xtp_u: j = 1, npy) the two cells next to
    each tile edge have zero perturbations: there the face value at the tile-edge corner is the
    upwind cell's wind itself."""
    g, metric, arrays = c12[0]
    spec, h = metric.spec, metric.spec.n_halo
    grid = GridStorages(metric, factory.backend)
    gf = factory.on_grid(GridIndexing(spec.nx, spec.ny, 1, h))
    cs = from_numpy(arrays["cx"].data[:, :, None].copy(), factory.backend)
    ws = from_numpy(arrays["u"].data[:, :, None].copy(), factory.backend)
    flux = from_numpy(np.zeros(cs.shape), factory.backend)
    WindCornerFlux(gf, grid, spec, X, 8).bind(cs, ws, flux)()
    u, c, f = arrays["u"].data, arrays["cx"].data, np.asarray(flux)[:, :, 0]
    for j in (h, h + spec.ny):  # FV3's j = 1 and j = npy
        i = h  # the west tile-edge corner, between u(0, j) and u(1, j)
        assert f[i, j] == (u[i - 1, j] if c[i, j] > 0.0 else u[i, j])


def test_refuses_unknown_iord(factory, c12) -> None:
    g, metric, _ = c12[0]
    spec = metric.spec
    grid = GridStorages(metric, factory.backend)
    gf = factory.on_grid(GridIndexing(spec.nx, spec.ny, 1, spec.n_halo))
    with pytest.raises(FV3ConfigError, match="iord=9"):
        WindCornerFlux(gf, grid, spec, X, 9)


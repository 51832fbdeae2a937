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


# --- tracer_2d_1L ----------------------------------------------------------------------------

#: levels of the flux capacitor and their scale of TC1's accumulated fluxes (level k's Courant
#: numbers and mass fluxes are ``LEVEL_SCALES[k]`` times those of TC1's large step)
LEVEL_SCALES = (1.0, 0.3, 1.4, 0.6, 1.2, 0.2, 0.9, 1.5, 0.4, 1.0, 0.7, 1.1)
#: TC1's large step: at C12 the solid-body wind crosses ~1.2 cells (Courant numbers to ~1.6 at
#: the top level scale, so one to three subcycles)
DT_ATMOS, N_SPLIT = 30000.0, 4
BACKGROUND = 2.0e4  # Pa added to TC1's cosine-bell delp, so that every cell has mass


class FluxCapacitor:
    """FV3's tracer-transport inputs from the transliterated TC1 (the cosine bell plus a
    background in ``delp``, the solid-body C-grid winds at ``alpha``) on 6 ranks at C12:
    ``N_SPLIT`` acoustic steps of ``d_sw``'s advection of ``delp`` accumulate ``cx``, ``cy``
    (Courant numbers) and ``mfx``, ``mfy`` (``fv_tp_2d`` fluxes of ``delp``) as ``d_sw`` does,
    with the halo update of ``delp`` between; the shared tile-edge faces are then made equal on
    both sides (a C-grid vector halo update with ``sync_edges``), and the Courant numbers' halos
    filled from the neighbours.  ``dp1`` is ``delp`` before the step; per level the fluxes are
    scaled by :data:`LEVEL_SCALES`.  Arrays are full-halo NumPy arrays (cells (ni, nj, npz),
    x-faces (ni + 1, nj, npz), y-faces (ni, nj + 1, npz))."""

    def __init__(self, resolution: int = 12, alpha: float = 0.7) -> None:
        from fv3core.transliteration.dyn_core import SWNamelist
        from fv3core.transliteration.setup import TransliteratedRun
        from fv3core.transliteration.sw_advection import d_sw_advection
        from mapping.cluster import ScalarHalo, VectorHalo

        run = TransliteratedRun(resolution, 1, SWNamelist(n_split=N_SPLIT, dt_atmos=DT_ATMOS),
                                alpha=alpha)  # fmt: skip
        self.grids, self.metrics = run.core.grids, run.metrics
        self.communicator = comm = run.decomposition.communicator
        ranks = sorted(self.grids)
        h = next(iter(self.grids.values())).bd.ng
        fields = run.core.fields
        for f in fields.values():
            f.delp.data[...] += BACKGROUND
        npz = len(LEVEL_SCALES)
        shape = {r: fields[r].delp.data.shape for r in ranks}
        acc = {r: {n: np.zeros((shape[r][0] + (n in "xu"), shape[r][1] + (n in "yv")))
                   for n in ("x", "y", "u", "v")} for r in ranks}  # fmt: skip
        self.dp1_2d = {r: fields[r].delp.data.copy() for r in ranks}
        delp_halo = comm.halo_updater({r: [ScalarHalo(fields[r].delp.data, h)] for r in ranks},
                                      packing="slicing")  # fmt: skip
        for _ in range(N_SPLIT):
            for r in ranks:
                g, f, a = self.grids[r], fields[r], acc[r]
                b = g.bd
                out = d_sw_advection(f.delp, f.uc, f.vc, DT_ATMOS / N_SPLIT, 8, g)
                # cx(is:ie+1, jsd:jed), mfx(is:ie+1, js:je), cy(isd:ied, js:je+1), mfy(is:ie, js:je+1)
                a["x"][h : h + b.ie - b.is_ + 2, :] += out.crx.data
                a["y"][:, h : h + b.je - b.js + 2] += out.cry.data
                a["u"][h : h + b.ie - b.is_ + 2, h : h + b.je - b.js + 1] += out.fx.data
                a["v"][h : h + b.ie - b.is_ + 1, h : h + b.je - b.js + 2] += out.fy.data
            delp_halo.update()
        comm.halo_updater({r: [VectorHalo(acc[r]["u"], acc[r]["v"], h, grid="C", sync_edges=True),
                               VectorHalo(acc[r]["x"], acc[r]["y"], h, grid="C", sync_edges=True)]
                           for r in ranks}, packing="slicing").update()  # fmt: skip
        s = np.asarray(LEVEL_SCALES)
        self.cx = {r: acc[r]["x"][:, :, None] * s for r in ranks}
        self.cy = {r: acc[r]["y"][:, :, None] * s for r in ranks}
        self.mfx = {r: acc[r]["u"][:, :, None] * s for r in ranks}
        self.mfy = {r: acc[r]["v"][:, :, None] * s for r in ranks}
        self.dp1 = {r: np.repeat(self.dp1_2d[r][:, :, None], npz, axis=2) for r in ranks}
        self.h, self.npz, self.ranks = h, npz, ranks

    def tracers(self, kind: str) -> dict[int, list[np.ndarray]]:
        """Two tracers per rank (cells with halo, all levels): ``"bell"`` the initial cosine
        bell (0 outside it, 1 at its top) and a field of the cell's latitude; ``"one"`` 1 and 1."""
        out = {}
        h = self.h
        top = max(float((d[h:-h, h:-h] - BACKGROUND).max()) for d in self.dp1_2d.values())
        for r in self.ranks:
            d = self.dp1_2d[r]
            bell = np.where(d < 1e29, (d - BACKGROUND) / top, 0.0)  # FV3's real_big: unused corners
            lat = np.asarray(self.metrics[r].agrid[..., 1], dtype=np.float64)
            lat = lat[: bell.shape[0], : bell.shape[1]]
            fields = [bell, np.sin(lat)] if kind == "bell" else [np.ones_like(bell)] * 2
            out[r] = [np.repeat(f[:, :, None], self.npz, axis=2).copy() for f in fields]
        return out


@pytest.fixture(scope="module")
def capacitor() -> FluxCapacitor:
    return FluxCapacitor()


def run_transliteration(cap: FluxCapacitor, q: dict[int, list[np.ndarray]], hord: int) -> tuple:
    """The transliterated ``tracer_2d_1L`` on copies of the capacitor's inputs: (q, dp1, nsplt)."""
    from fv3core.transliteration.tracer_2d import Tracer2D1L

    h = cap.h
    qs, dp1, mfx, mfy, cx, cy = {}, {}, {}, {}, {}, {}
    for r in cap.ranks:
        b = cap.grids[r].bd
        nx, ny = b.ie - b.is_ + 1, b.je - b.js + 1
        qs[r] = [FArray(a.copy(), (b.isd, b.jsd)) for a in q[r]]
        dp1[r] = FArray(cap.dp1[r].copy(), (b.isd, b.jsd))
        mfx[r] = FArray(cap.mfx[r][h : h + nx + 1, h : h + ny].copy(), (b.is_, b.js))
        mfy[r] = FArray(cap.mfy[r][h : h + nx, h : h + ny + 1].copy(), (b.is_, b.js))
        cx[r] = FArray(cap.cx[r][h : h + nx + 1, :].copy(), (b.is_, b.jsd))
        cy[r] = FArray(cap.cy[r][:, h : h + ny + 1].copy(), (b.isd, b.js))
    nsplt = Tracer2D1L(cap.grids, cap.communicator, hord)(qs, dp1, mfx, mfy, cx, cy)
    return ({r: [a.data for a in qs[r]] for r in cap.ranks},
            {r: dp1[r].data for r in cap.ranks}, nsplt)  # fmt: skip


def run_gtscript(cap: FluxCapacitor, q: dict[int, list[np.ndarray]], hord: int,
                 backend: str = "numpy") -> tuple:  # fmt: skip
    """``FV3MultiRankTracerTransport`` on copies of the capacitor's inputs: (q, dp1, nsplt)."""
    from fv3core.stencils.fv3_tracer_2d import FV3MultiRankTracerTransport, TracerFields

    grids, fields = {}, {}
    for r in cap.ranks:
        grids[r] = FV3GridStorages(cap.metrics[r], backend)
        fields[r] = TracerFields(
            q=[from_numpy(a.copy(), backend) for a in q[r]],
            dp1=from_numpy(cap.dp1[r].copy(), backend),
            mfx=from_numpy(cap.mfx[r].copy(), backend), mfy=from_numpy(cap.mfy[r].copy(), backend),
            cx=from_numpy(cap.cx[r].copy(), backend), cy=from_numpy(cap.cy[r].copy(), backend))  # fmt: skip
    transport = FV3MultiRankTracerTransport(StencilFactory(backend), grids, fields,
                                            cap.communicator, hord)  # fmt: skip
    nsplt = transport()
    return ({r: [np.asarray(a) for a in fields[r].q] for r in cap.ranks},
            {r: np.asarray(fields[r].dp1) for r in cap.ranks}, list(nsplt))  # fmt: skip


def _interior(cap: FluxCapacitor, a: np.ndarray) -> np.ndarray:
    h = cap.h
    return a[h:-h, h:-h]


def test_capacitor_subcycles(capacitor) -> None:
    """The inputs exercise FV3's subcycling: one, two and three subcycles among the levels."""
    _, _, nsplt = run_transliteration(capacitor, capacitor.tracers("one"), 8)
    assert set(nsplt) == {1, 2, 3}, nsplt


@pytest.mark.parametrize("hord", [8, 10])
def test_tracer_transport_equals_transliteration(capacitor, hord: int) -> None:
    """``FV3MultiRankTracerTransport`` (GTScript, numpy backend, 6 ranks at C12, 12 levels with
    one to three subcycles) equals the transliterated ``tracer_2d_1L`` (FV3's loops, level by
    level) bit for bit: both tracers and ``dp1`` on the compute domain, and ``nsplt``."""
    q = capacitor.tracers("bell")
    q_ref, dp1_ref, n_ref = run_transliteration(capacitor, q, hord)
    q_got, dp1_got, n_got = run_gtscript(capacitor, q, hord)
    assert n_got == n_ref
    for r in capacitor.ranks:
        for iq in range(2):
            np.testing.assert_array_equal(_interior(capacitor, q_got[r][iq]),
                                          _interior(capacitor, q_ref[r][iq]), f"rank {r} q{iq}")  # fmt: skip
        np.testing.assert_array_equal(_interior(capacitor, dp1_got[r]),
                                      _interior(capacitor, dp1_ref[r]), f"rank {r} dp1")  # fmt: skip

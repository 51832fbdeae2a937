"""FV3's tracer transport: ``fv_tp_2d``'s mass-flux form (``tp_core.F90``, ``mfx=``/``mfy=``)
and ``tracer_2d_1L`` (``fv_tracer2d.F90``).

References, per test (each docstring names its own):

* the NumPy transliteration (``tests.fv3core.transliteration.tp_core.fv_tp_2d`` with ``mfx``/``mfy``,
  ``tests.fv3core.transliteration.tracer_2d.tracer_2d_1L``), bit for bit, for the GTScript classes;
* properties with an analytic expectation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pytest

from fv3core.errors import FV3ConfigError
from fv3core.grid.storages import GridStorages
from fv3core.stencils.fv_tp_2d import FiniteVolumeTransport
from fv3core.stencils.tracer_2d import (
    MultiRankTracerAdvection,
    TracerAdvection,
    TracerFields,
    courant_cutoff,
)
from mapping.cluster import ScalarHalo, VectorHalo
from stencils.dims import GridIndexing
from stencils.factory import StencilFactory
from stencils.storage import from_numpy
from tests.fv3core.test_fv3_tp_core import TransportCase, transport_cases
from tests.fv3core.transliteration.dyn_core import SWNamelist
from tests.fv3core.transliteration.farray import FArray, R
from tests.fv3core.transliteration.setup import TransliteratedRun
from tests.fv3core.transliteration.sw_advection import d_sw_advection
from tests.fv3core.transliteration.tp_core import fv_tp_2d
from tests.fv3core.transliteration.tracer_2d import Tracer2D, Tracer2D1L


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
        grid = GridStorages(case.metric, factory.backend)
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

    def tracers(self) -> dict[int, list[np.ndarray]]:
        """Three tracers per rank (cells with halo, every level): the initial cosine bell (0
        outside it, 1 at its top), sin(latitude) of the cell centre, and 1."""
        out = {}
        h = self.h
        top = max(float((d[h:-h, h:-h] - BACKGROUND).max()) for d in self.dp1_2d.values())
        for r in self.ranks:
            d = self.dp1_2d[r]
            bell = np.where(d < 1e29, (d - BACKGROUND) / top, 0.0)  # FV3's real_big: unused corners
            lat = np.asarray(self.metrics[r].agrid[..., 1], dtype=np.float64)
            lat = lat[: bell.shape[0], : bell.shape[1]]
            fields = [bell, np.sin(lat), np.ones_like(bell)]
            out[r] = [np.repeat(f[:, :, None], self.npz, axis=2).copy() for f in fields]
        return out


@pytest.fixture(scope="module")
def capacitor() -> FluxCapacitor:
    return FluxCapacitor()


@dataclass
class Outcome:
    """One run's results (full-halo NumPy arrays per rank): the tracers, ``dp1`` as it leaves,
    the scaled mass fluxes, and ``nsplt`` per level."""

    q: dict[int, list[np.ndarray]]
    dp1: dict[int, np.ndarray]
    mfx: dict[int, np.ndarray]
    mfy: dict[int, np.ndarray]
    nsplt: list[int]


def run_transliteration(cap: FluxCapacitor, q: dict[int, list[np.ndarray]], hord: int, *,
                        ranks: Sequence[int] | None = None, tracer_2d: bool = False) -> Outcome:  # fmt: skip
    """The transliterated ``tracer_2d_1L`` (``tracer_2d``: ``tracer_2d``) on copies of the
    capacitor's inputs; ``ranks``: one rank alone, without communication
    (``Tracer2D1L(communicator=None)``)."""
    h = cap.h
    ranks = list(ranks or cap.ranks)
    qs, dp1, mfx, mfy, cx, cy = {}, {}, {}, {}, {}, {}
    for r in ranks:
        b = cap.grids[r].bd
        nx, ny = b.ie - b.is_ + 1, b.je - b.js + 1
        qs[r] = [FArray(a.copy(), (b.isd, b.jsd)) for a in q[r]]
        dp1[r] = FArray(cap.dp1[r].copy(), (b.isd, b.jsd))
        mfx[r] = FArray(cap.mfx[r][h : h + nx + 1, h : h + ny].copy(), (b.is_, b.js))
        mfy[r] = FArray(cap.mfy[r][h : h + nx, h : h + ny + 1].copy(), (b.is_, b.js))
        cx[r] = FArray(cap.cx[r][h : h + nx + 1, :].copy(), (b.is_, b.jsd))
        cy[r] = FArray(cap.cy[r][:, h : h + ny + 1].copy(), (b.isd, b.js))
    communicator = cap.communicator if len(ranks) == len(cap.ranks) else None
    transport = (Tracer2D if tracer_2d else Tracer2D1L)({r: cap.grids[r] for r in ranks},
                                                        communicator, hord)  # fmt: skip
    nsplt = transport(qs, dp1, mfx, mfy, cx, cy)

    def full(a: FArray, like: np.ndarray, at: tuple[slice, slice]) -> np.ndarray:
        out = np.zeros_like(like)
        out[at] = a.data
        return out

    sx = {r: (slice(h, h + mfx[r].data.shape[0]), slice(h, h + mfx[r].data.shape[1])) for r in ranks}
    sy = {r: (slice(h, h + mfy[r].data.shape[0]), slice(h, h + mfy[r].data.shape[1])) for r in ranks}
    return Outcome({r: [a.data for a in qs[r]] for r in ranks}, {r: dp1[r].data for r in ranks},
                   {r: full(mfx[r], cap.mfx[r], sx[r]) for r in ranks},
                   {r: full(mfy[r], cap.mfy[r], sy[r]) for r in ranks}, nsplt)  # fmt: skip


def _storages(cap: FluxCapacitor, q: dict[int, list[np.ndarray]], r: int,
              backend: str) -> TracerFields:  # fmt: skip
    return TracerFields(
        q=[from_numpy(a.copy(), backend) for a in q[r]], dp1=from_numpy(cap.dp1[r].copy(), backend),
        mfx=from_numpy(cap.mfx[r].copy(), backend), mfy=from_numpy(cap.mfy[r].copy(), backend),
        cx=from_numpy(cap.cx[r].copy(), backend), cy=from_numpy(cap.cy[r].copy(), backend))  # fmt: skip


def _outcome(fields: dict[int, TracerFields], nsplt: Sequence[int]) -> Outcome:
    return Outcome({r: [np.asarray(a) for a in f.q] for r, f in fields.items()},
                   {r: np.asarray(f.dp1) for r, f in fields.items()},
                   {r: np.asarray(f.mfx) for r, f in fields.items()},
                   {r: np.asarray(f.mfy) for r, f in fields.items()}, list(nsplt))  # fmt: skip


def run_gtscript(cap: FluxCapacitor, q: dict[int, list[np.ndarray]], hord: int,
                 backend: str = "numpy") -> Outcome:  # fmt: skip
    """``MultiRankTracerAdvection`` on copies of the capacitor's inputs."""
    grids = {r: GridStorages(cap.metrics[r], backend) for r in cap.ranks}
    fields = {r: _storages(cap, q, r, backend) for r in cap.ranks}
    transport = MultiRankTracerAdvection(StencilFactory(backend), grids, fields,
                                            cap.communicator, hord)  # fmt: skip
    return _outcome(fields, transport())


@pytest.fixture(scope="module")
def tracers(capacitor) -> dict[int, list[np.ndarray]]:
    return capacitor.tracers()


@pytest.fixture(scope="module")
def reference_8(capacitor, tracers) -> Outcome:
    return run_transliteration(capacitor, tracers, 8)


@pytest.fixture(scope="module")
def gtscript_8(capacitor, tracers) -> Outcome:
    return run_gtscript(capacitor, tracers, 8)


def assert_same(cap: FluxCapacitor, got: Outcome, ref: Outcome) -> None:
    """Bit for bit on the compute domain: every tracer, ``dp1``, the scaled mass fluxes (the
    compute faces) and ``nsplt``."""
    h = cap.h
    assert got.nsplt == ref.nsplt
    for r in ref.q:
        nx = cap.metrics[r].spec.nx
        c = (slice(h, h + nx), slice(h, h + nx))
        for iq, (a, b) in enumerate(zip(got.q[r], ref.q[r])):
            np.testing.assert_array_equal(a[c], b[c], f"rank {r} tracer {iq}")
        np.testing.assert_array_equal(got.dp1[r][c], ref.dp1[r][c], f"rank {r} dp1")
        for n in ("mfx", "mfy"):
            x = (slice(h, h + nx + (n == "mfx")), slice(h, h + nx + (n == "mfy")))
            np.testing.assert_array_equal(getattr(got, n)[r][x], getattr(ref, n)[r][x], n)


def test_capacitor_subcycles(capacitor, reference_8) -> None:
    """The inputs exercise FV3's subcycling: one, two and three subcycles among the levels
    (level 1, FV3's ``k < npz/6``, without the grid-angle term of ``cmax``)."""
    assert set(reference_8.nsplt) == {1, 2, 3}, reference_8.nsplt
    assert courant_cutoff(capacitor.npz) == 1


@pytest.mark.parametrize("hord", [8, pytest.param(10, marks=pytest.mark.slow)])
def test_tracer_transport_equals_transliteration(capacitor, tracers, reference_8, gtscript_8,
                                                 hord: int) -> None:  # fmt: skip
    """``MultiRankTracerAdvection`` (GTScript, numpy backend, 6 ranks at C12, 12 levels with
    one to three subcycles, three tracers) equals the transliterated ``tracer_2d_1L`` (FV3's
    loops, level by level, its halo updates and ``mp_reduce_max``) bit for bit: the tracers,
    ``dp1`` and the scaled mass fluxes on the compute domain, and ``nsplt``."""
    if hord == 8:
        assert_same(capacitor, gtscript_8, reference_8)
    else:
        assert_same(capacitor, run_gtscript(capacitor, tracers, hord),
                    run_transliteration(capacitor, tracers, hord))  # fmt: skip


def test_one_rank_phases_equal_transliteration(capacitor, tracers) -> None:
    """One rank alone (tile 0, its halos as given): ``TracerAdvection``'s bound phases run by
    hand (``prepare``, ``courant_max``, ``split``, ``first``, ``set_subcycle`` + ``subcycle``, no
    communication) equal the transliteration's one-rank ``tracer_2d_1L`` (``communicator=None``:
    this rank's ``cmax``, no halo updates) bit for bit, one to three subcycles per level."""
    r, backend = 0, "numpy"
    spec = capacitor.metrics[r].spec
    f = _storages(capacitor, tracers, r, backend)
    factory = StencilFactory(backend).on_grid(GridIndexing(spec.nx, spec.ny, capacitor.npz,
                                                           spec.n_halo))  # fmt: skip
    grid = GridStorages(capacitor.metrics[r], backend)
    bound = TracerAdvection(factory, grid, spec, 8, len(f.q)).bind(f)
    for launch in bound.prepare:
        launch()
    nsplt = bound.split(bound.courant_max())
    for launch in bound.first:
        launch()
    for it in range(1, int(nsplt.max()) + 1):
        bound.set_subcycle(it)
        for launch in bound.subcycle:
            launch()
    ref = run_transliteration(capacitor, tracers, 8, ranks=[r])
    assert max(ref.nsplt) > 1
    assert_same(capacitor, _outcome({r: f}, nsplt), ref)


def _cube_sums(cap: FluxCapacitor, out: Outcome, q0: dict[int, list[np.ndarray]]) -> tuple:
    """Per tracer and level over the cube: the tracer mass before ``sum(q0 dp1 area)``, after
    ``sum(q dp2 area)`` (``dp2`` of the last subcycle from the leaving ``dp1`` and the scaled
    mass fluxes), and ``sum(|q0| dp1 area)``."""
    h = cap.h
    nq = len(q0[cap.ranks[0]])
    before, after, size = (np.zeros((nq, cap.npz)) for _ in range(3))
    for r in cap.ranks:
        m = cap.metrics[r]
        n = m.spec.nx
        c = (slice(h, h + n), slice(h, h + n))
        area = np.asarray(m.area)[c][:, :, None]
        rarea = np.asarray(m.rarea)[c][:, :, None]
        mfx, mfy = out.mfx[r], out.mfy[r]
        dp2 = out.dp1[r][c] + (mfx[h : h + n, h : h + n] - mfx[h + 1 : h + n + 1, h : h + n]
                               + mfy[h : h + n, h : h + n] - mfy[h : h + n, h + 1 : h + n + 1]) * rarea  # fmt: skip
        dp1 = cap.dp1[r][c]
        for iq in range(nq):
            before[iq] += (q0[r][iq][c] * dp1 * area).sum(axis=(0, 1))
            after[iq] += (out.q[r][iq][c] * dp2 * area).sum(axis=(0, 1))
            size[iq] += (np.abs(q0[r][iq][c]) * dp1 * area).sum(axis=(0, 1))
    return before, after, size


def test_constant_tracer_stays_one(gtscript_8) -> None:
    """q = 1 stays exactly 1 on every cell of the cube and every level (reference: the exact
    solution; dp2 is FV3's dp1 + mass-flux divergence, and hord 8's face values of a constant
    are exactly that constant, at the tile edges too, where FV3 clips the edge value between
    its neighbours), through one to three subcycles with halo updates between."""
    for r, q in gtscript_8.q.items():
        h = 3
        np.testing.assert_array_equal(q[2][h:-h, h:-h], 1.0, f"rank {r}")


def test_tracer_mass_is_conserved(capacitor, tracers, gtscript_8) -> None:
    """Tracer mass ``sum(q dp area)`` over the cube per level (reference: its initial value):
    unchanged to 1e-15 of ``sum(|q| dp area)`` for all three tracers (measured <= 5e-16: the flux
    form telescopes, the mass fluxes being equal on both sides of every rank and tile edge)."""
    before, after, size = _cube_sums(capacitor, gtscript_8, tracers)
    assert np.abs(after - before).max() <= 1e-15 * size.max(), (after - before) / size


def test_hord8_makes_no_new_extrema(capacitor, tracers, gtscript_8) -> None:
    """hord_tr = 8 (Lin 2004's monotone PPM; FV3's limiter ``hord 10`` is not strictly monotone,
    see tests/fv3core/test_fv3_tp_core.py): the cosine bell (0 outside it, 1 at its top) and
    sin(latitude) stay within their initial minimum and maximum over the cube, to 1e-15
    (reference: the initial bounds), through a divergent flow and up to three subcycles."""
    h = capacitor.h
    for iq in range(2):
        lo = min(float(q[iq][h:-h, h:-h].min()) for q in tracers.values())
        hi = max(float(q[iq][h:-h, h:-h].max()) for q in tracers.values())
        got = [q[iq][h:-h, h:-h] for q in gtscript_8.q.values()]
        assert min(float(g.min()) for g in got) >= lo - 1e-15
        assert max(float(g.max()) for g in got) <= hi + 1e-15
    # the bell moved: the top value is no longer reached
    assert max(float(q[0][h:-h, h:-h].max()) for q in gtscript_8.q.values()) < 0.999


def test_refusals(capacitor) -> None:
    spec = capacitor.metrics[0].spec
    factory = StencilFactory("numpy").on_grid(GridIndexing(spec.nx, spec.ny, 1, spec.n_halo))
    grid = GridStorages(capacitor.metrics[0], "numpy")
    with pytest.raises(FV3ConfigError, match="hord_tr=7"):
        TracerAdvection(factory, grid, spec, 7, 1)
    transport = TracerAdvection(factory, grid, spec, 8, 2)
    f = _storages(capacitor, {0: [capacitor.dp1[0][:, :, :1]]}, 0, "numpy")
    with pytest.raises(FV3ConfigError, match="nq=2 tracers was passed 1"):
        transport.bind(f)


@pytest.mark.slow
def test_tracer_transport_gt_cpu_ifirst_equals_transliteration(capacitor, tracers,
                                                               reference_8) -> None:  # fmt: skip
    """The compiled backend gt:cpu_ifirst: ``MultiRankTracerAdvection`` (hord 8) equals the
    transliterated ``tracer_2d_1L`` bit for bit on the 6-rank C12 cube (about 10 C++ builds,
    minutes cold)."""
    assert_same(capacitor, run_gtscript(capacitor, tracers, 8, "gt:cpu_ifirst"), reference_8)


def test_tracer_2d_equals_transliteration(capacitor, tracers, reference_8) -> None:
    """``z_tracer = .false.`` (FV3's ``tracer_2d``, ``q_split = 0``): GTScript equals the
    transliterated ``tracer_2d`` (all levels per subcycle, q's halo updates between) bit for bit
    (tracers, ``dp1``, scaled mass fluxes, ``ksplt``), and its tracers equal ``tracer_2d_1L``'s bit
    for bit (reference: the transliterated ``tracer_2d_1L``) while ``dp1`` differs where a level
    has fewer subcycles than the deepest."""
    grids = {r: GridStorages(capacitor.metrics[r], "numpy") for r in capacitor.ranks}
    fields = {r: _storages(capacitor, tracers, r, "numpy") for r in capacitor.ranks}
    transport = MultiRankTracerAdvection(StencilFactory("numpy"), grids, fields,
                                            capacitor.communicator, 8, z_tracer=False)  # fmt: skip
    got = _outcome(fields, transport())
    ref = run_transliteration(capacitor, tracers, 8, tracer_2d=True)
    assert_same(capacitor, got, ref)
    assert_same(capacitor, got, replace(reference_8, dp1=got.dp1))
    h = capacitor.h
    differs = [not np.array_equal(got.dp1[r][h:-h, h:-h], reference_8.dp1[r][h:-h, h:-h])
               for r in capacitor.ranks]  # fmt: skip
    assert any(differs)
    with pytest.raises(FV3ConfigError, match="q_split=2"):
        MultiRankTracerAdvection(StencilFactory("numpy"), grids, fields,
                                    capacitor.communicator, 8, z_tracer=False, q_split=2)  # fmt: skip

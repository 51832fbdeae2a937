"""DGridShallowWaterLagrangianDynamics (FV3's ``d_sw`` in GTScript) against the NumPy transliteration of FV3's
``d_sw`` (tests.fv3core.transliteration.sw_core, which reproduces GFDL's Fortran to round-off), bit
for bit on every output over FV3's index ranges.

Inputs: FV3's TC2 state after one ``c_sw`` step of the transliteration (``c_sw``, the corner-
divergence halo update, ``geopk``/``p_grad_c``, the C-grid halo update: what ``dyn_core`` hands
``d_sw``), as it is and with random perturbations of every wind and of ``delp`` (so the upwind
branches of the Courant numbers, the PPM limiters and the B-grid winds take both signs
everywhere, the cube vertices and tile edges included); all six tiles one rank each at C12, and
C24 on a 2x2 layout (24 ranks: every combination of tile edges a rank can touch).  The
divergence damping is the transliteration's own ``nord`` code behind the ``bind`` interface
(:class:`TransliterationDamping`), the same on both sides, so that d_sw around it is compared
(with ``ke`` before and after it and ``wk``), and fv3core's GTScript ``DivergenceDamping``
(the whole d_sw in GTScript against the whole transliterated d_sw).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from fv3core.errors import FV3ConfigError
from fv3core.grid.storages import GridStorages
from fv3core.stencils.d_sw import DGridShallowWaterLagrangianDynamics
from fv3core.stencils.divergence_damping import DivergenceDamping
from fv3core.stencils.fv_tp_2d import FiniteVolumeTransport
from stencils.dims import GridIndexing
from stencils.directions import X, Y
from stencils.factory import StencilFactory
from stencils.storage import from_numpy
from tests.fv3core.transliteration import sw_core
from tests.fv3core.transliteration.dyn_core import SWNamelist
from tests.fv3core.transliteration.farray import FArray, R
from tests.fv3core.transliteration.setup import TransliteratedRun
from tests.fv3core.transliteration.tp_core import fv_tp_2d

#: d_sw's inputs and in/out fields (TileFields names; ``divgd`` is FV3's ``divg_d``)
FIELDS = ("delp", "u", "v", "uc", "vc", "ua", "va", "divgd")
#: the namelist of the TC2 reference run (n_split 2, dt_atmos 1200 s, hord 8)
NML = SWNamelist(n_split=2, dt_atmos=1200.0, nord=2, d4_bg=0.12)
DT = NML.dt_atmos / NML.n_split


@dataclass
class RankCase:
    """One rank's d_sw inputs (2-D NumPy arrays with FV3's bounds ``lo``) and its grids."""

    grid: Any  # transliteration Grid
    metric: Any  # MetricTerms
    arrays: dict[str, np.ndarray]
    lo: dict[str, tuple[int, int]]

    def farrays(self) -> dict[str, FArray]:
        return {n: FArray(self.arrays[n].copy(), self.lo[n]) for n in FIELDS}


def dsw_inputs(resolution: int, layout: int, alpha: float = 0.0) -> dict[int, RankCase]:
    """Every rank's ``d_sw`` inputs after one ``c_sw`` step of TC2 (``dyn_core``'s sequence up
    to ``d_sw``, with FV3's halo updates)."""
    run = TransliteratedRun(resolution, 2, NML, layout=layout, alpha=alpha)
    core = run.core
    core.start()
    core.c_grid()
    out = {}
    for r, g in core.grids.items():
        f = core.fields[r]
        out[r] = RankCase(g, run.metrics[r], {n: getattr(f, n).data.copy() for n in FIELDS},
                          {n: getattr(f, n).lo for n in FIELDS})  # fmt: skip
    return out


def perturbed(cases: dict[int, RankCase], seed: int) -> dict[int, RankCase]:
    """The cases with every wind perturbed by noise as large as its largest value (so the winds
    take both signs everywhere) and ``delp`` by 10%."""
    rng = np.random.default_rng(seed)
    out = {}
    for r, case in cases.items():
        arrays = dict(case.arrays)
        for n in ("u", "v", "uc", "vc", "ua", "va"):
            a = arrays[n]
            arrays[n] = a + np.abs(a).max() * rng.standard_normal(a.shape)
        arrays["delp"] = arrays["delp"] * (1.0 + 0.1 * rng.standard_normal(arrays["delp"].shape))
        out[r] = RankCase(case.grid, case.metric, arrays, case.lo)
    return out


@dataclass(frozen=True)
class Damping:
    """A divergence-damping configuration (FV3's ``nord``, ``dddmp``, ``d2_bg``, ``d4_bg``)."""

    nord: int
    dddmp: float
    d2_bg: float
    d4_bg: float


NORD0 = Damping(0, 0.2, 0.002, 0.0)
NORD2 = Damping(2, 0.1, 0.0, 0.12)  # with the Smagorinsky-type del2 part (dddmp > 0)


class TransliterationDamping:
    """The transliteration's ``nord`` blocks of ``d_sw`` behind the ``bind`` interface
    :class:`DGridShallowWaterLagrangianDynamics` takes (a test adapter: one Python launch on views of level 0
    of the storages); records ``ke`` before and after and ``wk``."""

    def __init__(self, g: Any, damping: Damping, dt: float) -> None:
        self.g, self.d, self.dt = g, damping, dt
        self.recorded: dict[str, np.ndarray] = {}

    def bind(self, u, v, ua, va, uc, vc, divg_d, ke, wk) -> list:
        b, d = self.g.bd, self.d
        lo = (b.isd, b.jsd)

        def fa(s: Any) -> FArray:
            return FArray(np.asarray(s)[:, :, 0], lo)

        def launch() -> None:
            self.recorded["ke_before"] = np.array(ke[:, :, 0])
            self.recorded["wk"] = np.array(wk[:, :, 0])
            if d.nord == 0:
                sw_core._del2_divergence_damping(fa(u), fa(v), fa(ua), fa(va), fa(uc), fa(vc),
                                                 fa(ke), self.dt, d.dddmp, d.d2_bg, self.g)  # fmt: skip
            else:
                sw_core._high_order_divergence_damping(fa(divg_d), fa(uc), fa(vc), fa(ke), fa(wk),
                                                       self.dt, d.nord, d.dddmp, d.d2_bg, d.d4_bg,
                                                       self.g)  # fmt: skip
            self.recorded["ke_after"] = np.array(ke[:, :, 0])

        return [launch]


def reference(case: RankCase, damping: Damping, monkeypatch: Any) -> dict[str, np.ndarray]:
    """The transliteration's ``d_sw`` of the case: every output and, recorded around its
    damping, ``ke`` and ``wk``; ``ut``, ``vt`` from its ``_contravariant_winds``."""
    f = case.farrays()
    out: dict[str, np.ndarray] = {}
    ut, vt = sw_core._contravariant_winds(f["uc"].copy(), f["vc"].copy(), DT, case.grid)
    out["ut"], out["vt"] = ut.data, vt.data
    del2, high = sw_core._del2_divergence_damping, sw_core._high_order_divergence_damping

    def recording_del2(u, v, ua, va, uc, vc, ke, *args):
        out["ke_before"] = ke.data.copy()
        del2(u, v, ua, va, uc, vc, ke, *args)
        out["ke_after"] = ke.data.copy()

    def recording_high(divg_d, uc, vc, ke, wk, *args):
        out["ke_before"], out["wk"] = ke.data.copy(), wk.data.copy()
        high(divg_d, uc, vc, ke, wk, *args)
        out["ke_after"] = ke.data.copy()

    with monkeypatch.context() as m:
        m.setattr(sw_core, "_del2_divergence_damping", recording_del2)
        m.setattr(sw_core, "_high_order_divergence_damping", recording_high)
        res = sw_core.d_sw(f["delp"], f["u"], f["v"], f["uc"], f["vc"], f["ua"], f["va"],
                           f["divgd"], DT, 8, 8, 8, damping.nord, damping.dddmp, damping.d2_bg,
                           damping.d4_bg, case.grid)  # fmt: skip
    out.update({n: f[n].data for n in FIELDS})
    out.update(crx=res.crx.data, cry=res.cry.data, xfx=res.xfx.data, yfx=res.yfx.data,
               fx=res.fx.data, fy=res.fy.data)  # fmt: skip
    return out


def gtscript_d_sw(factory: StencilFactory, case: RankCase, damping: Damping | None,
                  nz: int = 1) -> tuple[DGridShallowWaterLagrangianDynamics, dict[str, Any], Any]:  # fmt: skip
    """:class:`DGridShallowWaterLagrangianDynamics` of the case, run once (levels: copies of the case)."""
    spec = case.metric.spec
    grid = GridStorages(case.metric, factory.backend)
    gf = factory.on_grid(GridIndexing(spec.nx, spec.ny, nz, spec.n_halo))
    adapter = None if damping is None else TransliterationDamping(case.grid, damping, DT)
    dsw = DGridShallowWaterLagrangianDynamics(gf, grid, spec, DT, 8, 8, 8, adapter)
    st = {n: from_numpy(np.repeat(case.arrays[n][:, :, None], nz, axis=2), factory.backend)
          for n in FIELDS}  # fmt: skip
    for launch in dsw.bind(*(st[n] for n in FIELDS)):
        launch()
    return dsw, st, adapter


def compare(dsw: DGridShallowWaterLagrangianDynamics, st: dict[str, Any], adapter: Any, ref: dict[str, np.ndarray],
            h: int, nx: int, ny: int, level: int = 0) -> dict[str, float]:  # fmt: skip
    """Max |ours - reference| of every output over FV3's index ranges (asserting bitwise)."""

    def lvl(a: Any) -> np.ndarray:
        return np.asarray(a)[:, :, level]

    xi, yj = slice(h, h + nx + 1), slice(h, h + ny + 1)
    ours = {n: lvl(st[n]) for n in FIELDS}
    ours.update(
        ut=lvl(dsw.contra[X])[xi, :], vt=lvl(dsw.contra[Y])[:, yj],
        crx=lvl(dsw.crx)[xi, :], xfx=lvl(dsw.xfx)[xi, :], cry=lvl(dsw.cry)[:, yj],
        yfx=lvl(dsw.yfx)[:, yj], fx=lvl(dsw.fx)[xi, h : h + ny], fy=lvl(dsw.fy)[h : h + nx, yj],
    )  # fmt: skip
    refs = dict(ref, ut=ref["ut"][xi, :], vt=ref["vt"][:, yj])
    if adapter is not None:
        corners = (xi, yj)
        for n in ("ke_before", "ke_after"):
            ours[n], refs[n] = adapter.recorded[n][corners], ref[n][corners]
        if "wk" in ref:
            ours["wk"], refs["wk"] = adapter.recorded["wk"], ref["wk"]
    diffs = {}
    for n, a in ours.items():
        b = refs[n]
        assert a.shape == b.shape, (n, a.shape, b.shape)
        diffs[n] = float(np.nanmax(np.abs(a - b))) if a.size else 0.0
        np.testing.assert_array_equal(a, b, err_msg=n)
    return diffs


@pytest.fixture(scope="module")
def factory() -> StencilFactory:
    return StencilFactory("numpy")


@pytest.fixture(scope="module")
def c12() -> dict[int, RankCase]:
    return dsw_inputs(12, 1)


@pytest.fixture(scope="module")
def c12_perturbed(c12) -> dict[int, RankCase]:
    return perturbed(c12, seed=12)


@pytest.mark.parametrize("state", ["tc2", "perturbed"])
@pytest.mark.parametrize("damping", [NORD0, NORD2], ids=["nord0", "nord2"])
def test_d_sw_equals_transliteration_c12(factory, c12, c12_perturbed, state, damping,
                                         monkeypatch) -> None:  # fmt: skip
    """All six tiles at C12 (every rank touches all four tile edges and its cube vertex
    corners): delp, u, v, uc, vc, divg_d, ut, vt, crx, cry, xfx, yfx, the delp fluxes, ke before
    and after the damping and wk equal the transliteration's bit for bit."""
    cases = c12 if state == "tc2" else c12_perturbed
    for case in cases.values():
        spec = case.metric.spec
        dsw, st, adapter = gtscript_d_sw(factory, case, damping)
        compare(dsw, st, adapter, reference(case, damping, monkeypatch), spec.n_halo, spec.nx,
                spec.ny)  # fmt: skip


# the whole run on 2x2 ranks per tile is checked in the default suite (test_fv3_driver.py);
# this per-routine check needs ~12 more numpy builds (~3 min cold)
@pytest.mark.slow
def test_d_sw_equals_transliteration_c24_layout_2x2(factory, monkeypatch) -> None:
    """C24 on 2x2 ranks per tile, the TC2 flow rotated over the cube vertices (alpha = 0.7)
    and perturbed: every rank (a quarter tile: two tile edges and one vertex, in each of the
    four arrangements) equals the transliteration bit for bit."""
    cases = perturbed(dsw_inputs(24, 2, alpha=0.7), seed=24)
    assert len(cases) == 24
    for case in cases.values():
        spec = case.metric.spec
        dsw, st, adapter = gtscript_d_sw(factory, case, NORD2)
        compare(dsw, st, adapter, reference(case, NORD2, monkeypatch), spec.n_halo, spec.nx,
                spec.ny)  # fmt: skip


@pytest.mark.parametrize("damping", [NORD0, NORD2], ids=["nord0", "nord2"])
def test_d_sw_with_fv3_divergence_damping_c12(factory, c12_perturbed, damping,
                                              monkeypatch) -> None:  # fmt: skip
    """With the GTScript damping (fv3core.stencils.divergence_damping.DivergenceDamping)
    the whole d_sw equals the transliteration's d_sw bit for bit on all six tiles at C12
    (perturbed state)."""
    for case in c12_perturbed.values():
        spec = case.metric.spec
        grid = GridStorages(case.metric, factory.backend)
        gf = factory.on_grid(GridIndexing(spec.nx, spec.ny, 1, spec.n_halo))
        fv3_damping = DivergenceDamping(gf, grid, spec, damping.nord, damping.dddmp,
                                           damping.d2_bg, damping.d4_bg, DT)  # fmt: skip
        dsw = DGridShallowWaterLagrangianDynamics(gf, grid, spec, DT, 8, 8, 8, fv3_damping)
        st = {n: from_numpy(case.arrays[n][:, :, None].copy(), factory.backend) for n in FIELDS}
        for launch in dsw.bind(*(st[n] for n in FIELDS)):
            launch()
        ref = reference(case, damping, monkeypatch)
        ref.pop("wk", None)
        h, xi, yj = spec.n_halo, slice(spec.n_halo, spec.n_halo + spec.nx + 1), slice(
            spec.n_halo, spec.n_halo + spec.ny + 1)  # fmt: skip
        np.testing.assert_array_equal(np.asarray(dsw.ke)[xi, yj, 0], ref.pop("ke_after")[xi, yj])
        ref.pop("ke_before")
        compare(dsw, st, None, ref, h, spec.nx, spec.ny)


def test_levels_are_independent(factory, c12, c12_perturbed, monkeypatch) -> None:
    """nz = 2 (level 0: TC2, level 1: perturbed), no damping (= FV3's nord 0 with dddmp =
    d2_bg = 0): each level equals the transliteration of its own state bit for bit."""
    rank = 2
    base, other = c12[rank], c12_perturbed[rank]
    spec = base.metric.spec
    grid = GridStorages(base.metric, factory.backend)
    gf = factory.on_grid(GridIndexing(spec.nx, spec.ny, 2, spec.n_halo))
    dsw = DGridShallowWaterLagrangianDynamics(gf, grid, spec, DT, 8, 8, 8, None)
    st = {n: from_numpy(np.stack([base.arrays[n], other.arrays[n]], axis=2), factory.backend)
          for n in FIELDS}  # fmt: skip
    for launch in dsw.bind(*(st[n] for n in FIELDS)):
        launch()
    none = Damping(0, 0.0, 0.0, 0.0)
    for level, case in enumerate((base, other)):
        ref = reference(case, none, monkeypatch)
        for n in ("ke_before", "ke_after"):
            ref.pop(n)
        compare(dsw, st, None, ref, spec.n_halo, spec.nx, spec.ny, level=level)


def test_finite_volume_transport_equals_fv_tp_2d(factory, c12_perturbed, monkeypatch) -> None:
    """fv3core.stencils.fv_tp_2d.FiniteVolumeTransport (hord 8) on FV3's grid equals the
    transliteration's fv_tp_2d (FV3's, with ra_x/ra_y passed in) bit for bit: the fluxes and the
    corner-filled q, for delp and for a vorticity-like field with both signs, with d_sw's
    Courant numbers and swept areas."""
    for case in c12_perturbed.values():
        g, spec = case.grid, case.metric.spec
        b = g.bd
        f = case.farrays()
        res = sw_core.d_sw(*(f[n].copy() for n in FIELDS), DT, 8, 8, 8, 0, 0.0, 0.0, 0.0, g)
        ra_x = FArray.full((b.is_, b.jsd), (b.ie, b.jed))
        ra_y = FArray.full((b.isd, b.js), (b.ied, b.je))
        In, Jn, Id, Jd = R(b.is_, b.ie), R(b.js, b.je), R(b.isd, b.ied), R(b.jsd, b.jed)
        ra_x[In, Jd] = g.area[In, Jd] + res.xfx[In, Jd] - res.xfx[In + 1, Jd]
        ra_y[Id, Jn] = g.area[Id, Jn] + res.yfx[Id, Jn] - res.yfx[Id, Jn + 1]
        h, nx, ny = spec.n_halo, spec.nx, spec.ny
        grid = GridStorages(case.metric, factory.backend)
        gf = factory.on_grid(GridIndexing(nx, ny, 1, h))
        transport = FiniteVolumeTransport(gf, grid, spec, 8)

        def face(a: FArray, shape: tuple[int, int], at: tuple[slice, slice]) -> Any:
            out = np.zeros(shape)
            out[at] = a.data
            return from_numpy(out[:, :, None], factory.backend)

        xs, ys = (nx + 2 * h + 1, ny + 2 * h), (nx + 2 * h, ny + 2 * h + 1)
        xi, yj = slice(h, h + nx + 1), slice(h, h + ny + 1)
        crx, xfx = (face(a, xs, (xi, slice(None))) for a in (res.crx, res.xfx))
        cry, yfx = (face(a, ys, (slice(None), yj)) for a in (res.cry, res.yfx))
        vort = case.arrays["ua"] * 1e-5
        for q_np in (case.arrays["delp"], vort):
            q_ref = FArray(q_np.copy(), (b.isd, b.jsd))
            fx_ref, fy_ref = fv_tp_2d(q_ref, res.crx, res.cry, 8, res.xfx, res.yfx, ra_x, ra_y, g)
            q = from_numpy(q_np[:, :, None].copy(), factory.backend)
            fx = from_numpy(np.zeros(xs + (1,)), factory.backend)
            fy = from_numpy(np.zeros(ys + (1,)), factory.backend)
            transport(q, crx, cry, xfx, yfx, fx, fy)
            np.testing.assert_array_equal(np.asarray(fx)[xi, h : h + ny, 0], fx_ref.data)
            np.testing.assert_array_equal(np.asarray(fy)[h : h + nx, yj, 0], fy_ref.data)
            np.testing.assert_array_equal(np.asarray(q)[:, :, 0], q_ref.data)


def test_launch_count_and_refusals(factory, c12) -> None:
    """One d_sw is 25 launches plus the damping's (4 corner fills of fv_tp_2d among them, no
    other NumPy step); unsupported PPM variants and a bad time step are refused by name."""
    case = c12[0]
    spec = case.metric.spec
    grid = GridStorages(case.metric, factory.backend)
    gf = factory.on_grid(GridIndexing(spec.nx, spec.ny, 1, spec.n_halo))
    dsw = DGridShallowWaterLagrangianDynamics(gf, grid, spec, DT, 8, 8, 8, None)
    st = {n: from_numpy(case.arrays[n][:, :, None].copy(), factory.backend) for n in FIELDS}
    launches = dsw.bind(*(st[n] for n in FIELDS))
    assert len(launches) == 25
    adapter = TransliterationDamping(case.grid, NORD2, DT)
    assert len(DGridShallowWaterLagrangianDynamics(gf, grid, spec, DT, 8, 8, 8, adapter).bind(
        *(st[n] for n in FIELDS))) == 26  # fmt: skip
    with pytest.raises(FV3ConfigError, match="iord=7"):
        DGridShallowWaterLagrangianDynamics(gf, grid, spec, DT, 8, 7, 8, None)
    with pytest.raises(FV3ConfigError, match="hord=7"):
        DGridShallowWaterLagrangianDynamics(gf, grid, spec, DT, 7, 8, 8, None)
    with pytest.raises(FV3ConfigError, match="dt"):
        DGridShallowWaterLagrangianDynamics(gf, grid, spec, 0.0, 8, 8, 8, None)


@pytest.mark.slow
def test_d_sw_gt_cpu_ifirst_equals_transliteration_c12(c12_perturbed, monkeypatch) -> None:
    """gt:cpu_ifirst at C12 (all six tiles, the perturbed state, nord 2): bit for bit the
    transliteration's, as numpy is."""
    factory = StencilFactory("gt:cpu_ifirst")
    for case in c12_perturbed.values():
        spec = case.metric.spec
        dsw, st, adapter = gtscript_d_sw(factory, case, NORD2)
        compare(dsw, st, adapter, reference(case, NORD2, monkeypatch), spec.n_halo, spec.nx,
                spec.ny)  # fmt: skip
